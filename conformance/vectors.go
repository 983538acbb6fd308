package conformance

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"runtime"

	"github.com/webtensor/webtensor/core"
	"github.com/webtensor/webtensor/core/config"
	"github.com/webtensor/webtensor/core/safetensors"
)

// VectorsDir is conformance/vectors in this source tree.
func VectorsDir() string {
	if d := config.String("WEBTENSOR_VECTORS"); d != "" {
		return d
	}
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "vectors")
}

// VectorPath is the vector file of an op.
func VectorPath(dir, op string) string { return filepath.Join(dir, op+".safetensors") }

// Vectors is one op's vector file, decoded.
type Vectors struct {
	Op    string
	Key   string
	Cases []CaseSpec
	File  *safetensors.File
}

// LoadVectors reads an op's vector file.
func LoadVectors(dir, op string) (*Vectors, error) {
	f, err := safetensors.ReadFile(VectorPath(dir, op))
	if err != nil {
		return nil, err
	}
	v := &Vectors{Op: f.Metadata["op"], Key: f.Metadata["key"], File: f}
	if err := json.Unmarshal([]byte(f.Metadata["cases"]), &v.Cases); err != nil {
		return nil, fmt.Errorf("%s: bad cases metadata: %v", op, err)
	}
	if f.Metadata["complete"] != "true" {
		return nil, fmt.Errorf("%s: vector file has inputs but no reference outputs: run `make vectors`", op)
	}
	return v, nil
}

// Tensor returns a named tensor of a case, or false when absent.
func (v *Vectors) Tensor(c, kind string, i int) (safetensors.Tensor, bool) {
	t, ok := v.File.Tensors[TensorName(c, kind, i)]
	return t, ok
}

// Values decodes a stored tensor to float64.
func Values(t safetensors.Tensor) []float64 { return core.DecodeF64(t.DType, t.Data) }
