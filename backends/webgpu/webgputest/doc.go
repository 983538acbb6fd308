// Package webgputest opens the WebGPU device for tests, the same way
// everywhere: a test skips, saying so, only on a machine with no WebGPU
// adapter at all, and fails, with the error, where an adapter exists but the
// backend does not open, so a broken driver or a bug in opening the device
// cannot pass as "no GPU here". Opening it also turns on
// webgpu.VerifyKernelKeys, so every test that runs on the GPU checks that
// each kernel it reuses from the cache is the one its key names. (The
// backend's own in-package tests cannot import it and keep a copy of Need.)
package webgputest
