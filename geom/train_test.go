package geom

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/webtensor/webtensor/backends/webgpu/webgputest"
	"github.com/webtensor/webtensor/core"
	"github.com/webtensor/webtensor/nn"
)

func TestSBMIsReproducibleAndAssortative(t *testing.T) {
	c := SBMConfig{Blocks: 3, BlockSize: 40, PIn: 0.2, POut: 0.01, Features: 8, Noise: 1, Seed: 5, TrainFraction: 0.5}
	a, err := SBM(c)
	require.NoError(t, err)
	b, err := SBM(c)
	require.NoError(t, err)
	sa, da := a.Graph.Edges()
	sb, db := b.Graph.Edges()
	assert.Equal(t, sa, sb)
	assert.Equal(t, da, db)
	inside := 0
	for k := range sa {
		assert.NotEqual(t, sa[k], da[k], "no self loops")
		if sa[k]/40 == da[k]/40 {
			inside++
		}
	}
	// Expected: 3 * C(40,2) * 0.2 = 468 inside pairs vs 3 * 1600 * 0.01 = 48 across, both directions stored.
	assert.InDelta(t, 2*468, inside, 150)
	assert.InDelta(t, 2*48, len(sa)-inside, 50)
	assert.Equal(t, []int{120, 8}, []int(a.X.Shape()))
	assert.Equal(t, 60, a.Train.Numel())
	_, err = SBM(SBMConfig{Blocks: 0, BlockSize: 1, Features: 1, TrainFraction: 0.5})
	assert.ErrorContains(t, err, "bad config")
}

func TestGCNLearnsTheBlocks(t *testing.T) {
	for _, dev := range testDevices(t) {
		t.Run(dev.String(), func(t *testing.T) {
			core.ManualSeed(1)
			d, err := SBM(SBMConfig{Blocks: 4, BlockSize: 50, PIn: 0.15, POut: 0.01, Features: 16, Noise: 2, Seed: 3, TrainFraction: 0.3}, dev)
			require.NoError(t, err)
			m, err := NewGCN(16, 32, 4, 0.5, Options{Device: dev})
			require.NoError(t, err)
			cfg := nn.DefaultAdam()
			cfg.LR = 0.01
			opt, err := nn.NewAdam(m.Parameters(), cfg)
			require.NoError(t, err)
			first := math.NaN()
			var last float64
			for range 60 {
				opt.ZeroGrad()
				scores := m.Forward(d.X, d.Graph)
				loss := core.Call1("cross_entropy", nil, Gather(scores, d.Train), Gather(d.Y, d.Train))
				require.NoError(t, loss.Backward())
				require.NoError(t, opt.Step())
				last, err = loss.Item()
				require.NoError(t, err)
				if math.IsNaN(first) {
					first = last
				}
			}
			m.Train(false)
			acc, err := Accuracy(m.Forward(d.X, d.Graph), d.Y, d.Test)
			require.NoError(t, err)
			assert.Less(t, last, first/2)
			assert.Greater(t, acc, 0.9, "test accuracy")
		})
	}
}

func testDevices(t *testing.T) []core.Device {
	devs := []core.Device{core.CPU}
	if webgputest.Present(t) {
		devs = append(devs, webgputest.Device)
	}
	return devs
}

func TestBadInputIsAnError(t *testing.T) {
	_, err := NewGraph(3, []int64{0, 5}, []int64{1, 2}, nil)
	assert.ErrorContains(t, err, "edge 1 (5 -> 2) is outside the 3 nodes")
	_, err = NewGraph(3, []int64{0}, []int64{1, 2}, nil)
	assert.ErrorContains(t, err, "1 sources but 2 destinations")
	g, err := NewGraph(3, []int64{0, 1}, []int64{1, 2}, nil)
	require.NoError(t, err)
	c, err := NewGCNConv(4, 2, Options{})
	require.NoError(t, err)
	out := c.Forward(core.Zeros(core.Shape{5, 4}, core.F32), g)
	assert.ErrorContains(t, out.Err(), "features of shape [5 4] for a graph of 3 nodes")
	assert.ErrorContains(t, Aggregate(core.Zeros(core.Shape{2}, core.F32), g.Dst, 3, "median").Err(), `unknown aggregation "median"`)
	_, err = NewSAGEConv(4, 2, "median", Options{})
	assert.ErrorContains(t, err, "unknown aggregation")
	_, err = FromEdgeIndex(3, core.Zeros(core.Shape{3, 2}, core.I64), nil)
	assert.ErrorContains(t, err, "want [2, E]")
}

// Finite differences (f64, CPU) on the layers' input features.
func TestGradientsMatchFiniteDifferences(t *testing.T) {
	g, err := NewGraph(5, []int64{0, 1, 2, 3, 4, 1, 3}, []int64{1, 2, 3, 4, 0, 3, 1}, []float64{1, 0.5, 2, 1, 1.5, 1, 0.7})
	require.NoError(t, err)
	o := Options{DType: core.F64}
	gcn, _ := NewGCNConv(3, 2, o)
	sage, _ := NewSAGEConv(3, 2, "max", o)
	gat, _ := NewGATConv(3, 2, 2, true, 0, o)
	layers := map[string]func(x *core.Tensor) *core.Tensor{
		"gcn":  func(x *core.Tensor) *core.Tensor { return gcn.Forward(x, g) },
		"sage": func(x *core.Tensor) *core.Tensor { return sage.Forward(x, g) },
		"gat":  func(x *core.Tensor) *core.Tensor { return gat.Forward(x, g) },
	}
	core.ManualSeed(4)
	base := core.Call1("randn", core.Attrs{"shape": []int{5, 3}, "dtype": core.F64})
	vals, err := base.Float64s()
	require.NoError(t, err)
	for name, f := range layers {
		x := base.Detach().SetRequiresGrad(true)
		lossOf := func(t *core.Tensor) *core.Tensor { return core.Call1("sum", nil, core.Call1("square", nil, f(t))) }
		require.NoError(t, lossOf(x).Backward(), name)
		grad, err := x.Grad().Float64s()
		require.NoError(t, err)
		for i := range vals {
			h := 1e-6
			plus, minus := append([]float64(nil), vals...), append([]float64(nil), vals...)
			plus[i] += h
			minus[i] -= h
			lp, _ := lossOf(core.FromFloat64s(core.F64, core.Shape{5, 3}, plus)).Item()
			lm, _ := lossOf(core.FromFloat64s(core.F64, core.Shape{5, 3}, minus)).Item()
			assert.InDelta(t, (lp-lm)/(2*h), grad[i], 1e-5, "%s: d loss / d x[%d]", name, i)
		}
	}
}
