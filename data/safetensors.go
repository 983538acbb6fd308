package data

import (
	"fmt"
	"strings"

	"github.com/webtensor/webtensor/core/safetensors"
)

// Safetensors reads the tensors keys of a safetensors file (default: all,
// in file order), a record being one index along their first dim.
func Safetensors(path string, keys ...string) (Dataset, error) {
	f, err := safetensors.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return fromSafetensors(path, f, keys)
}

// SafetensorsBytes is Safetensors over the file's bytes; source names it
// in errors.
func SafetensorsBytes(source string, raw []byte, keys ...string) (Dataset, error) {
	f, err := safetensors.Decode(raw)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", source, err)
	}
	return fromSafetensors(source, f, keys)
}

func fromSafetensors(source string, f *safetensors.File, keys []string) (Dataset, error) {
	if len(keys) == 0 {
		keys = f.Names
	}
	cols := make([]column, len(keys))
	for i, k := range keys {
		t, ok := f.Tensors[k]
		if !ok {
			return nil, fmt.Errorf("%s: no tensor %q (the file has %s)", source, k, strings.Join(f.Names, ", "))
		}
		cols[i] = column{name: k, dtype: t.DType, shape: t.Shape, data: t.Data}
	}
	return newArrays(source, cols)
}
