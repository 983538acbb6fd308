package cpu_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	_ "github.com/webtensor/webtensor/backends/cpu"
	"github.com/webtensor/webtensor/core"
)

func TestSmokeAutograd(t *testing.T) {
	a := core.FromSlice([]float32{1, 2, 3, 4, 5, 6}, core.Shape{2, 3}).SetRequiresGrad(true)
	b := core.FromSlice([]float32{10, 20, 30}, core.Shape{3}).SetRequiresGrad(true)
	y := core.Call1("sum", nil, core.Call1("add", nil, core.Call1("mul", nil, a, b), a))
	require.NoError(t, y.Err())
	v, err := y.Item()
	require.NoError(t, err)
	assert.Equal(t, 1*10+2*20+3*30+4*10+5*20+6*30+21.0, v)
	require.NoError(t, y.Backward())
	ga, _ := a.Grad().Float32s()
	gb, _ := b.Grad().Float32s()
	assert.Equal(t, []float32{11, 21, 31, 11, 21, 31}, ga)
	assert.Equal(t, []float32{5, 7, 9}, gb)
	tr := core.Call1("transpose", nil, a)
	m := core.Call1("mean", core.Attrs{"axes": []int{0}}, tr)
	mv, err := m.Float32s()
	require.NoError(t, err)
	assert.InDeltaSlice(t, []float32{2, 5}, mv, 1e-6)
}
