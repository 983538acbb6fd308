// Command report reads the result files the SDK runners wrote and prints
// the parity table: one row per op, one column per SDK x backend, each cell
// pass, FAIL (with the worst tolerance ratio), n/a (the backend holds none
// of the case's dtypes) or missing, and a Columns table with each column's
// CPU fallbacks and declared host-side work (devices.go). It writes
// conformance/report.md and report.json and exits 1 when a supported cell
// is not a pass, a device column fell back to the CPU, or a device this
// machine has did not open.
package main
