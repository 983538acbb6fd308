package nn_test

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/webtensor/webtensor/core"
	"github.com/webtensor/webtensor/nn"
)

// Gains are torch.nn.init.calculate_gain's values.
func TestGainMatchesTorch(t *testing.T) {
	for _, c := range []struct {
		name  string
		param float64
		want  float64
	}{
		{"linear", 0, 1}, {"conv2d", 0, 1}, {"sigmoid", 0, 1}, {"tanh", 0, 5.0 / 3},
		{"relu", 0, math.Sqrt2}, {"leaky_relu", 0.2, math.Sqrt(2 / 1.04)}, {"selu", 0, 0.75},
	} {
		g, err := nn.Gain(c.name, c.param)
		require.NoError(t, err)
		assert.InDelta(t, c.want, g, 1e-15, c.name)
	}
	_, err := nn.Gain("swish", 0)
	assert.ErrorContains(t, err, "unsupported nonlinearity")
}

func TestFans(t *testing.T) {
	in, out, err := nn.Fans(core.Shape{6, 4, 3, 3})
	require.NoError(t, err)
	assert.Equal(t, 36, in)
	assert.Equal(t, 54, out)
	_, _, err = nn.Fans(core.Shape{5})
	assert.ErrorContains(t, err, "at least 2 dims")
}

func stats(v []float64) (lo, hi, std float64) {
	lo, hi = math.Inf(1), math.Inf(-1)
	var sum, sq float64
	for _, x := range v {
		lo, hi = min(lo, x), max(hi, x)
		sum += x
	}
	mean := sum / float64(len(v))
	for _, x := range v {
		sq += (x - mean) * (x - mean)
	}
	return lo, hi, math.Sqrt(sq / float64(len(v)))
}

// With tens of thousands of draws the sample standard deviation is within
// 2% of the target with overwhelming probability; the seed fixes the draw.
func TestInitialisersHaveTorchsDistributions(t *testing.T) {
	core.ManualSeed(3)
	param := func(shape ...int) *nn.Parameter {
		return must(nn.NewParameter(core.Zeros(core.Shape(shape), core.F32)))(t)
	}
	cases := []struct {
		name    string
		shape   []int
		init    func(*nn.Parameter) error
		bound   float64 // 0 for normal draws
		wantStd float64
	}{
		{"xavier_uniform", []int{200, 300}, func(p *nn.Parameter) error { return nn.XavierUniform(p, 1) },
			math.Sqrt(6.0 / 500), math.Sqrt(6.0/500) / math.Sqrt(3)},
		{"xavier_normal gain 2", []int{200, 300}, func(p *nn.Parameter) error { return nn.XavierNormal(p, 2) },
			0, 2 * math.Sqrt(2.0/500)},
		{"kaiming_uniform leaky_relu a=sqrt5 (torch's Linear default)", []int{128, 256},
			func(p *nn.Parameter) error { return nn.KaimingUniform(p, math.Sqrt(5), nn.FanIn, "leaky_relu") },
			1 / math.Sqrt(256), 1 / math.Sqrt(256) / math.Sqrt(3)},
		{"kaiming_normal fan_out relu", []int{256, 64, 3}, func(p *nn.Parameter) error { return nn.KaimingNormal(p, 0, nn.FanOut, "relu") },
			0, math.Sqrt2 / math.Sqrt(256*3)},
		{"uniform", []int{50000}, func(p *nn.Parameter) error { return nn.Uniform(p, -2, 2) }, 2, 4 / math.Sqrt(12)},
		{"normal", []int{50000}, func(p *nn.Parameter) error { return nn.Normal(p, 0, 0.3) }, 0, 0.3},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := param(c.shape...)
			require.NoError(t, c.init(p))
			lo, hi, std := stats(values(t, p.Tensor()))
			assert.InEpsilon(t, c.wantStd, std, 0.02)
			if c.bound > 0 {
				assert.GreaterOrEqual(t, lo, -c.bound)
				assert.Less(t, hi, c.bound)
				assert.Less(t, lo, -0.99*c.bound, "draws should reach both edges of the range")
				assert.Greater(t, hi, 0.99*c.bound, "draws should reach both edges of the range")
			}
			assert.True(t, p.Tensor().RequiresGrad())
		})
	}
	p := param(3)
	require.NoError(t, nn.Constant(p, 1.5))
	assert.Equal(t, []float64{1.5, 1.5, 1.5}, values(t, p.Tensor()))
	assert.ErrorContains(t, nn.KaimingUniform(param(2, 2), 0, "fan_avg", "relu"), "fan_in or fan_out")
	assert.ErrorContains(t, nn.XavierUniform(param(4), 1), "at least 2 dims")
}
