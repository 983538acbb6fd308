package webgpu_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/webtensor/webtensor/core"
)

// Launches wider than 65,535 workgroups (a dispatch dimension's limit)
// spill into a second grid dimension; every family must index them right,
// including the last, partial workgroup.
func TestMoreThan65535WorkgroupsMatchCPU(t *testing.T) {
	needGPU(t)
	if testing.Short() {
		t.Skip("large tensors; skipped with -short")
	}
	const rows = 65535*64 + 77 // one more workgroup of 64 than a dimension holds, and a partial one
	x := core.Call1("randn", core.Attrs{"shape": []int{rows, 2}, "seed": 5})
	idx := core.Call1("randint", core.Attrs{"shape": []int{rows}, "low": 0, "high": rows, "seed": 6})
	cases := map[string]func(x, idx *core.Tensor) *core.Tensor{
		"add":          func(x, _ *core.Tensor) *core.Tensor { return x.Add(x).Mul(x) },
		"sum":          func(x, _ *core.Tensor) *core.Tensor { return core.Call1("sum", core.Attrs{"axes": []int{1}}, x) },
		"softmax":      func(x, _ *core.Tensor) *core.Tensor { return core.Call1("softmax", core.Attrs{"axis": -1}, x) },
		"cumsum":       func(x, _ *core.Tensor) *core.Tensor { return core.Call1("cumsum", core.Attrs{"axis": 1}, x) },
		"argsort":      func(x, _ *core.Tensor) *core.Tensor { return core.Call1("argsort", core.Attrs{"axis": 1}, x) },
		"index_select": func(x, i *core.Tensor) *core.Tensor { return core.Call1("index_select", core.Attrs{"axis": 0}, x, i) },
		"matmul_batch": func(x, _ *core.Tensor) *core.Tensor {
			even := core.Call1("slice", core.Attrs{"axis": 0, "start": 0, "stop": rows - 1}, x)
			a := even.Reshape(core.Shape{(rows - 1) / 2, 2, 2}) // 2,097,158 products: batch > 65535
			return a.Matmul(a)
		},
	}
	for name, f := range cases {
		t.Run(name, func(t *testing.T) {
			want := f(x, idx)
			got := f(x.To(gpu), idx.To(gpu))
			closeTo(t, got, want, 1e-5)
		})
	}
}

// Asking for more than the adapter can bind is an error naming the sizes,
// and the backend keeps working.
func TestOversizedTensorIsAnError(t *testing.T) {
	b := needGPU(t)
	limit := b.Limits().MaxStorageBufferBindingSize
	_, err := core.Empty(b, core.Shape{int(limit/4) + 1}, core.F32)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "largest binding")
	v, err := core.FromSlice([]float32{1, 2}, core.Shape{2}, gpu).Add(core.Scalar(1, core.F32, gpu)).Float64s()
	require.NoError(t, err)
	assert.Equal(t, []float64{2, 3}, v)
}

// A shader that fails to compile is an error naming the kernel; the
// backend stays usable.
func TestBadShaderIsAnError(t *testing.T) {
	b := needGPU(t)
	err := b.CompileCheck("test|broken", "fn main( {")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "test|broken")
	v, err := core.FromSlice([]float32{3}, core.Shape{1}, gpu).Mul(core.Scalar(2, core.F32, gpu)).Float64s()
	require.NoError(t, err)
	assert.Equal(t, []float64{6}, v)
}

// A single kernel running longer than wgpu-core's 5 s fence timeout (the
// strided matmul at 2048^3 on a software driver) must still be waited for:
// a blocking poll gave up there and took the process down with it.
func TestKernelLongerThanTheFenceTimeout(t *testing.T) {
	b := needGPU(t)
	if testing.Short() || !b.Capabilities().Software {
		t.Skip("needs a slow (software) adapter and no -short")
	}
	x := core.Call1("randn", core.Attrs{"shape": []int{2048, 2048}, "seed": 8}).To(gpu)
	out, err := b.MatmulVariant(x, x, "regblock")
	require.NoError(t, err)
	require.NoError(t, b.Sync())
	v, err := out.Float64s()
	require.NoError(t, err)
	assert.Len(t, v, 2048*2048)
}
