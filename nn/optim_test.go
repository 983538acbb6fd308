package nn_test

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/webtensor/webtensor/core"
	"github.com/webtensor/webtensor/nn"
)

// The optimiser tests run five steps on one (2, 3) parameter with
// p0[i] = cos(0.7·i) and gradient g_t[i] = sin(i + 1.3·t)·2/(t+1) at step t.
// Expected values come from torch 2.15 doing the same in float64
// (torch.optim.X([p], ...); p.grad = g_t; opt.step(), five times), printed
// with repr. The gradients shrink, so AMSGrad's running maximum matters.

func initialParam(tb testing.TB, d core.DType) *nn.Parameter {
	v := make([]float64, 6)
	for i := range v {
		v[i] = math.Cos(float64(i) * 0.7)
	}
	return must(nn.NewParameter(core.FromFloat64s(d, core.Shape{2, 3}, v)))(tb)
}

func stepGrad(step int, d core.DType) *core.Tensor {
	v := make([]float64, 6)
	for i := range v {
		v[i] = math.Sin(float64(i)+float64(step)*1.3) * 2 / float64(step+1)
	}
	return core.FromFloat64s(d, core.Shape{2, 3}, v)
}

func runSteps(tb testing.TB, p *nn.Parameter, opt nn.Optimizer, d core.DType) []float64 {
	for step := 0; step < 5; step++ {
		p.SetGrad(stepGrad(step, d))
		require.NoError(tb, opt.Step())
	}
	return values(tb, p.Tensor())
}

func TestOptimizersMatchTorch(t *testing.T) {
	cases := []struct {
		name string
		make func([]*nn.Parameter) (nn.Optimizer, error)
		want []float64
	}{
		{"SGD lr=0.1", func(ps []*nn.Parameter) (nn.Optimizer, error) {
			return nn.NewSGD(ps, nn.SGDConfig{LR: 0.1})
		}, []float64{0.9390039175248546, 0.6039250387354771, 0.05707541254587282, -0.4659202804986646, -0.7872671852749059, -0.8079372558611886}},
		{"SGD momentum=0.9 dampening=0.1 wd=0.01", func(ps []*nn.Parameter) (nn.Optimizer, error) {
			return nn.NewSGD(ps, nn.SGDConfig{LR: 0.05, Momentum: 0.9, Dampening: 0.1, WeightDecay: 0.01})
		}, []float64{0.8483611634926712, 0.3804004721438392, -0.09592315298032149, -0.40819326260225336, -0.570502636250123, -0.628840916988678}},
		{"SGD nesterov momentum=0.8 wd=0.1", func(ps []*nn.Parameter) (nn.Optimizer, error) {
			return nn.NewSGD(ps, nn.SGDConfig{LR: 0.05, Momentum: 0.8, Nesterov: true, WeightDecay: 0.1})
		}, []float64{0.7956693419816341, 0.39515481052088053, -0.04917908355025397, -0.37730055356603326, -0.5694141668584956, -0.6315890775989718}},
		{"SGD maximize momentum=0.5", func(ps []*nn.Parameter) (nn.Optimizer, error) {
			return nn.NewSGD(ps, nn.SGDConfig{LR: 0.1, Momentum: 0.5, Maximize: true})
		}, []float64{1.1538883383106235, 1.1020970140700925, 0.3805179257444612, -0.614578784439313, -1.2713507634055747, -1.1823816989143405}},
		{"Adam default", func(ps []*nn.Parameter) (nn.Optimizer, error) {
			return nn.NewAdam(ps, nn.DefaultAdam())
		}, []float64{0.9979445383851934, 0.7617427300582968, 0.1678290480904977, -0.5042874135985972, -0.9390070624891941, -0.934146571026198}},
		{"Adam amsgrad wd=0.05 lr=0.01", func(ps []*nn.Parameter) (nn.Optimizer, error) {
			c := nn.DefaultAdam()
			c.LR, c.AMSGrad, c.WeightDecay = 0.01, true, 0.05
			return nn.NewAdam(ps, c)
		}, []float64{0.9671829386604288, 0.7328977975921018, 0.14832051217097955, -0.49784493447614186, -0.9088902546136867, -0.9119423234489961}},
		{"Adam betas=(0.3,0.9) eps=1e-6", func(ps []*nn.Parameter) (nn.Optimizer, error) {
			c := nn.DefaultAdam()
			c.LR, c.Beta1, c.Beta2, c.Eps = 0.02, 0.3, 0.9, 1e-6
			return nn.NewAdam(ps, c)
		}, []float64{0.9788547116815813, 0.7390185389555645, 0.154262758553138, -0.5041012618078092, -0.9146807401986606, -0.9192188318341352}},
		{"AdamW default", func(ps []*nn.Parameter) (nn.Optimizer, error) {
			return nn.NewAdamW(ps, nn.DefaultAdamW())
		}, []float64{0.9978945808578231, 0.7617045713099705, 0.16782061363919124, -0.5042621629838663, -0.938960037184226, -0.9340998162550571}},
		{"AdamW amsgrad maximize wd=0.1", func(ps []*nn.Parameter) (nn.Optimizer, error) {
			c := nn.DefaultAdamW()
			c.LR, c.WeightDecay, c.AMSGrad, c.Maximize = 0.01, 0.1, true, true
			return nn.NewAdamW(ps, c)
		}, []float64{1.0155231630959465, 0.7919367567630646, 0.19043629683154495, -0.5079226038922303, -0.9695886475835214, -0.9548148227196533}},
		{"RMSprop default", func(ps []*nn.Parameter) (nn.Optimizer, error) {
			return nn.NewRMSprop(ps, nn.DefaultRMSprop())
		}, []float64{0.9298909066794061, 0.6676998383752283, 0.10642554584878466, -0.5288657926679713, -0.8388518161882943, -0.8681158635718644}},
		{"RMSprop centered momentum=0.9 wd=0.1 alpha=0.9", func(ps []*nn.Parameter) (nn.Optimizer, error) {
			return nn.NewRMSprop(ps, nn.RMSpropConfig{LR: 0.01, Alpha: 0.9, Eps: 1e-8, WeightDecay: 0.1, Momentum: 0.9, Centered: true})
		}, []float64{0.7346748906745703, 0.6020621723009315, 0.07433613643392768, -0.5153341157945429, -0.7661480834307307, -0.8200907240659774}},
		{"RMSprop maximize eps=1e-3 momentum=0.5", func(ps []*nn.Parameter) (nn.Optimizer, error) {
			return nn.NewRMSprop(ps, nn.RMSpropConfig{LR: 0.02, Alpha: 0.99, Eps: 1e-3, Momentum: 0.5, Maximize: true})
		}, []float64{1.3301476642195258, 1.1656590892317815, 0.4066770505951463, -0.4798626705722117, -1.3722703171217765, -1.1969881576916266}},
		{"Adagrad default", func(ps []*nn.Parameter) (nn.Optimizer, error) {
			return nn.NewAdagrad(ps, nn.DefaultAdagrad())
		}, []float64{0.9929386382643401, 0.7550939711903853, 0.16359473876985015, -0.5072058844339343, -0.9318493083536945, -0.9296015619144812}},
		{"Adagrad lr_decay=0.1 wd=0.05 init=0.5 maximize", func(ps []*nn.Parameter) (nn.Optimizer, error) {
			return nn.NewAdagrad(ps, nn.AdagradConfig{LR: 0.1, LRDecay: 0.1, WeightDecay: 0.05, InitialAccumulatorValue: 0.5, Eps: 1e-10, Maximize: true})
		}, []float64{1.0387441196322864, 0.8524461038911669, 0.2309757527344819, -0.5197594085013963, -1.0321049254419836, -0.9963511795203344}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := initialParam(t, core.F64)
			opt, err := c.make([]*nn.Parameter{p})
			require.NoError(t, err)
			assert.InDeltaSlice(t, c.want, runSteps(t, p, opt, core.F64), 1e-13)
			assert.True(t, p.Tensor().IsLeaf())
			assert.True(t, p.Tensor().RequiresGrad())
		})
	}
}

// Adam in float32 against torch in float32 (same case as "Adam amsgrad").
func TestAdamFloat32MatchesTorch(t *testing.T) {
	p := initialParam(t, core.F32)
	c := nn.DefaultAdam()
	c.LR, c.AMSGrad, c.WeightDecay = 0.01, true, 0.05
	opt := must(nn.NewAdam([]*nn.Parameter{p}, c))(t)
	want := []float64{0.9671829342842102, 0.7328978180885315, 0.1483205109834671, -0.4978449046611786, -0.9088903069496155, -0.9119423031806946}
	got := runSteps(t, p, opt, core.F32)
	assert.InDeltaSlice(t, want, got, 2e-7)
	assert.Equal(t, core.F32, p.DType(), "f64 scalars must not promote f32 parameters")
}

func TestOptimizerSkipsParametersWithoutGrad(t *testing.T) {
	a, b := initialParam(t, core.F64), initialParam(t, core.F64)
	before := values(t, b.Tensor())
	opt := must(nn.NewAdam([]*nn.Parameter{a, b}, nn.DefaultAdam()))(t)
	a.SetGrad(stepGrad(0, core.F64))
	require.NoError(t, opt.Step())
	assert.Equal(t, before, values(t, b.Tensor()))
	assert.NotEqual(t, before, values(t, a.Tensor()))

	opt.ZeroGrad()
	assert.Nil(t, a.Grad())
}

func TestFailedStepChangesNothing(t *testing.T) {
	a, b := initialParam(t, core.F64), initialParam(t, core.F64)
	before := values(t, a.Tensor())
	opt := must(nn.NewSGD([]*nn.Parameter{a, b}, nn.SGDConfig{LR: 0.1}))(t)
	a.SetGrad(stepGrad(0, core.F64))
	b.SetGrad(core.FromFloat64s(core.F64, core.Shape{4}, []float64{1, 2, 3, 4}))
	err := opt.Step()
	require.Error(t, err)
	assert.Contains(t, err.Error(), "parameter 1")
	assert.Equal(t, before, values(t, a.Tensor()), "parameter 0 must not move when parameter 1 fails")
}

func TestStepRejectsGradientThatBroadcasts(t *testing.T) {
	p := must(nn.NewParameter(core.Zeros(core.Shape{3}, core.F32)))(t)
	opt := must(nn.NewSGD([]*nn.Parameter{p}, nn.SGDConfig{LR: 0.1}))(t)
	p.SetGrad(core.Ones(core.Shape{2, 3}, core.F32))
	assert.ErrorContains(t, opt.Step(), "shape [2 3]")
	assert.Equal(t, core.Shape{3}, p.Shape())
}

func TestOptimizerConfigValidation(t *testing.T) {
	p := []*nn.Parameter{initialParam(t, core.F32)}
	_, err := nn.NewSGD(p, nn.SGDConfig{LR: 0.1, Nesterov: true})
	assert.ErrorContains(t, err, "Nesterov")
	_, err = nn.NewSGD(p, nn.SGDConfig{LR: -1})
	assert.ErrorContains(t, err, "learning rate")
	bad := nn.DefaultAdam()
	bad.Beta2 = 1
	_, err = nn.NewAdam(p, bad)
	assert.ErrorContains(t, err, "beta parameter at index 1")
	_, err = nn.NewAdamW(nil, nn.DefaultAdamW())
	assert.ErrorContains(t, err, "no parameters")
	_, err = nn.NewAdam([]*nn.Parameter{p[0], p[0]}, nn.DefaultAdam())
	assert.ErrorContains(t, err, "appears twice")
}
