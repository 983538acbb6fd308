//go:build js && wasm

package main

import (
	"fmt"
	"syscall/js"

	"github.com/webtensor/webtensor/core/safetensors"
)

// safetensorsHeader is the browser's wt_safetensors_header: the same Go
// validator checks a checkpoint's header for the page as for Node, Python
// and Java. Arguments: the file's first bytes (a Uint8Array holding at
// least the 8-byte length and the header), the file's size, its name for
// errors.
func safetensorsHeader(args []js.Value) (any, error) {
	src, err := arg(args, 0, "prefix")
	if err != nil {
		return nil, err
	}
	if src.Type() != js.TypeObject || src.Get("byteLength").Type() != js.TypeNumber {
		return nil, invalid("prefix must be a Uint8Array, got %s", src.Type())
	}
	size, err := intArg(args, 1, "file size")
	if err != nil {
		return nil, err
	}
	name, err := stringArg(args, 2, "name")
	if err != nil {
		return nil, err
	}
	prefix := make([]byte, src.Get("byteLength").Int())
	js.CopyBytesToGo(prefix, src)
	h, err := safetensors.ParseHeader(prefix, int64(size))
	if err != nil {
		if name != "" {
			err = fmt.Errorf("%s: %w", name, err)
		}
		return nil, invalid("%v", err)
	}
	return string(h.JSON()), nil
}
