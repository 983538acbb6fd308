//go:build js

package abi

import "github.com/webtensor/webtensor/core"

// The browser build has no CUDA backend (see cuda.go).

func cudaInfo(core.Backend, map[string]any) {}

func cudaSetTF32(core.Backend, bool) bool { return false }
