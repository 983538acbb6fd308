// Package bench holds the benchmarks behind `make bench`: the same work as
// scripts/bench.py times in NumPy and PyTorch, run through webtensor's public
// API on the default device, each reporting GFLOP/s or GB/s so the report can
// put the peers side by side as ratios.
package bench
