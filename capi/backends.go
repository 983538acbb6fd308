package main

// The backends every SDK can reach: the CPU backend (imported where the
// allocator is installed), WebGPU and CUDA, each opened on first use of one
// of its devices (CUDA loads its libraries then, so the library runs where
// CUDA is absent).
import (
	_ "github.com/webtensor/webtensor/backends/cuda"
	_ "github.com/webtensor/webtensor/backends/webgpu"
)
