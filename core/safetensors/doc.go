// Package safetensors reads and writes the safetensors format (an 8-byte
// little-endian header length, a JSON header naming each tensor's dtype,
// shape and byte range, then the raw little-endian data), the checkpoint
// format PyTorch's `safetensors` package uses. Checkpoints (nn) and the
// reference vectors (conformance) both use it.
//
// Decoding trusts nothing: header length, JSON, dtypes, shapes and offsets
// are all checked, so a corrupt or truncated file is an error, never a panic
// or a huge allocation.
package safetensors
