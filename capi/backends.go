package main

// The backends every SDK can reach: the CPU backend (imported where the
// allocator is installed) and WebGPU, opened on first use of a webgpu device.
import _ "github.com/webtensor/webtensor/backends/webgpu"
