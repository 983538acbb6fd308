package abi

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// param is a trainable leaf handle with gradient grad.
func param(t *testing.T, vals, grad []float32) int64 {
	t.Helper()
	h := f32Tensor(t, []int64{int64(len(vals))}, vals...)
	require.NoError(t, TensorSetRequiresGrad(h, true))
	if grad != nil {
		g := f32Tensor(t, []int64{int64(len(grad))}, grad...)
		require.NoError(t, Backward(h, g))
		require.NoError(t, TensorFree(g))
	}
	return h
}

func lr(v float64) Attr { return Attr{Name: "lr", Kind: AttrFloat, F: v} }

// A step replaces what the parameter handles hold: same numbers, new
// values, still trainable leaves with their gradients.
func TestOptimizerStepUpdatesTheHandles(t *testing.T) {
	p := param(t, []float32{1, 2}, []float32{0.5, -1})
	defer TensorFree(p)
	o, err := OptimizerNew("sgd", []int64{p}, attrs{lr(0.1), {Name: "momentum", Kind: AttrFloat, F: 0.9}})
	require.NoError(t, err)
	defer OptimizerFree(o)
	require.NoError(t, OptimizerStep(o))
	assert.Equal(t, []float32{1 - 0.1*0.5, 2 + 0.1}, f32Values(t, p))
	on, err := TensorRequiresGrad(p)
	require.NoError(t, err)
	assert.True(t, on)
	g, err := TensorGrad(p)
	require.NoError(t, err)
	assert.Equal(t, []float32{0.5, -1}, f32Values(t, g), "the gradient stays until zero_grad, as in torch")
	require.NoError(t, TensorFree(g))

	st, err := OptimizerState(o)
	require.NoError(t, err)
	n, err := StateCount(st)
	require.NoError(t, err)
	require.Equal(t, 2, n)
	name, _ := StateName(st, 1)
	assert.Equal(t, "0.momentum_buffer", name)
	require.NoError(t, StateFree(st))

	require.NoError(t, OptimizerZeroGrad(o))
	g, err = TensorGrad(p)
	require.NoError(t, err)
	assert.Zero(t, g)
	require.NoError(t, OptimizerStep(o), "no gradients: nothing moves")
	assert.Equal(t, []float32{1 - 0.1*0.5, 2 + 0.1}, f32Values(t, p))

	require.NoError(t, OptimizerSet(o, attrs{lr(0)}))
	errorIs(t, OptimizerSet(o, attrs{lr(-1)}), StatusInvalid, "SGD: invalid learning rate: -1")
	errorIs(t, OptimizerSet(o, attrs{{Name: "betas", Kind: AttrFloats, Floats: []float64{0.9, 0.99}}}), StatusInvalid,
		`SGD: unknown setting "betas" (it takes lr, momentum, dampening, weight_decay, nesterov, maximize)`)
}

func TestOptimizerArgumentsAreChecked(t *testing.T) {
	p := param(t, []float32{1}, nil)
	frozen := f32Tensor(t, []int64{1}, 1)
	defer TensorFree(p)
	defer TensorFree(frozen)
	_, err := OptimizerNew("lbfgs", []int64{p}, nil)
	errorIs(t, err, StatusInvalid, `unknown optimizer "lbfgs"`)
	_, err = OptimizerNew("adam", []int64{p, frozen}, nil)
	errorIs(t, err, StatusInvalid, "Adam: parameter 1 does not require a gradient")
	_, err = OptimizerNew("adamw", []int64{p, p}, nil)
	errorIs(t, err, StatusInvalid, "AdamW: parameter 1 appears twice")
	_, err = OptimizerNew("adam", nil, nil)
	errorIs(t, err, StatusInvalid, "Adam: no parameters to optimise")
	_, err = OptimizerNew("adam", []int64{p}, attrs{{Name: "betas", Kind: AttrFloats, Floats: []float64{1, 0.9}}})
	errorIs(t, err, StatusInvalid, "Adam: invalid beta parameter at index 0: 1")
	_, err = OptimizerNew("rmsprop", []int64{p}, attrs{{Name: "centered", Kind: AttrString, S: "yes"}})
	errorIs(t, err, StatusInvalid, `RMSprop: setting "centered" must be a bool`)
	err = OptimizerStep(1 << 40)
	errorIs(t, err, StatusHandle, "unknown optimizer handle")
}

// An optimiser's state goes out as a state dict and back into another
// optimiser, which then steps as the first does.
func TestOptimizerStateRoundTrip(t *testing.T) {
	a := param(t, []float32{1, -2, 3}, []float32{0.1, 0.2, -0.3})
	b := param(t, []float32{1, -2, 3}, []float32{0.1, 0.2, -0.3})
	defer TensorFree(a)
	defer TensorFree(b)
	oa, err := OptimizerNew("adam", []int64{a}, attrs{lr(0.1), {Name: "amsgrad", Kind: AttrBool, I: 1}})
	require.NoError(t, err)
	require.NoError(t, OptimizerStep(oa))
	ob, err := OptimizerNew("adam", []int64{b}, attrs{lr(0.1), {Name: "amsgrad", Kind: AttrBool, I: 1}})
	require.NoError(t, err)
	require.NoError(t, OptimizerStep(ob))
	st, err := OptimizerState(oa)
	require.NoError(t, err)
	require.NoError(t, OptimizerLoadState(ob, st))
	require.NoError(t, OptimizerStep(oa))
	require.NoError(t, OptimizerStep(ob))
	assert.Equal(t, f32Values(t, a), f32Values(t, b))

	bad := StateNew()
	require.NoError(t, StatePut(bad, "3.exp_avg", a))
	errorIs(t, OptimizerLoadState(ob, bad), StatusInvalid, `"3.exp_avg" does not name a parameter's state`)
	for _, h := range []int64{st, bad} {
		require.NoError(t, StateFree(h))
	}
	require.NoError(t, OptimizerFree(oa))
	require.NoError(t, OptimizerFree(ob))
	errorIs(t, OptimizerFree(ob), StatusHandle, "was already freed")
}

// A state dict saved to a file loads back, in name order, with metadata;
// the bytes are what wt_state_to_bytes gives, of the size it announced.
func TestStateSaveLoadAndBytes(t *testing.T) {
	w := f32Tensor(t, []int64{2}, 1, 2)
	b := f32Tensor(t, []int64{1}, 3)
	defer TensorFree(w)
	defer TensorFree(b)
	s := StateNew()
	require.NoError(t, StatePut(s, "w", w))
	require.NoError(t, StatePut(s, "b", b))
	errorIs(t, StatePut(s, "b", b), StatusInvalid, `"b" is given twice`)
	require.NoError(t, StateSetMetadata(s, "format", "pt"))
	path := filepath.Join(t.TempDir(), "m.safetensors")
	require.NoError(t, StateSave(s, path))
	size, err := StateEncodedSize(s)
	require.NoError(t, err)
	raw, err := StateEncode(s)
	require.NoError(t, err)
	assert.Len(t, raw, size)
	file, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, raw, file)

	l, err := StateLoad(path, "", false)
	require.NoError(t, err)
	n, _ := StateCount(l)
	require.Equal(t, 2, n)
	name, _ := StateName(l, 0)
	assert.Equal(t, "b", name, "file order: sorted names")
	h, err := StateGet(l, 1)
	require.NoError(t, err)
	assert.Equal(t, []float32{1, 2}, f32Values(t, h))
	require.NoError(t, TensorFree(h))
	meta, err := StateMetadata(l)
	require.NoError(t, err)
	assert.Equal(t, [][2]string{{"format", "pt"}}, meta)

	m, err := StateLoad(path, "", true)
	require.NoError(t, err)
	n, _ = StateCount(m)
	assert.Zero(t, n, "metadata only")

	_, err = StateDecode(raw[:20], "", "")
	errorIs(t, err, StatusInvalid, "safetensors: ")
	_, err = StateLoad(filepath.Join(t.TempDir(), "none.safetensors"), "", false)
	errorIs(t, err, StatusIO, "no such file")
	errorIs(t, StateSave(s, filepath.Join(t.TempDir(), "no", "dir.safetensors")), StatusIO, "no such file")
	for _, x := range []int64{s, l, m} {
		require.NoError(t, StateFree(x))
	}
}

// Loading a state dict into a module's handles: all or nothing, every
// problem listed; the handles keep their numbers and gradients.
func TestStateAssign(t *testing.T) {
	w := param(t, []float32{1, 2}, []float32{5, 5})
	buf := f32Tensor(t, []int64{1}, 0)
	defer TensorFree(w)
	defer TensorFree(buf)
	mod := StateNew()
	require.NoError(t, StatePut(mod, "w", w))
	require.NoError(t, StatePut(mod, "buf", buf))

	nw := f32Tensor(t, []int64{2}, 7, 8)
	nb := f32Tensor(t, []int64{3}, 1, 1, 1)
	defer TensorFree(nw)
	defer TensorFree(nb)
	bad := StateNew()
	require.NoError(t, StatePut(bad, "w", nw))
	require.NoError(t, StatePut(bad, "buf", nb))
	require.NoError(t, StatePut(bad, "extra", nb))
	err := StateAssign(mod, bad, true, "Net")
	errorIs(t, err, StatusInvalid, "the state dict does not match the Net (2 problem(s)):\n  buf: shape [3] in state dict, [1] in module\n  not in module: extra")
	assert.Equal(t, []float32{1, 2}, f32Values(t, w), "nothing loaded")

	good := StateNew()
	require.NoError(t, StatePut(good, "w", nw))
	require.NoError(t, StateAssign(mod, good, false, "Net"))
	assert.Equal(t, []float32{7, 8}, f32Values(t, w))
	assert.Equal(t, []float32{0}, f32Values(t, buf), "not given, not strict: left alone")
	g, err := TensorGrad(w)
	require.NoError(t, err)
	assert.Equal(t, []float32{5, 5}, f32Values(t, g))
	require.NoError(t, TensorFree(g))
	errorIs(t, StateAssign(mod, good, true, ""), StatusInvalid, "missing from state dict: buf")
	for _, x := range []int64{mod, bad, good} {
		require.NoError(t, StateFree(x))
	}
}

func TestClipGradients(t *testing.T) {
	a := param(t, []float32{0, 0}, []float32{3, -4})
	none := param(t, []float32{0}, nil)
	defer TensorFree(a)
	defer TensorFree(none)
	total, err := ClipGradNorm([]int64{a, none}, 1, 2)
	require.NoError(t, err)
	assert.Equal(t, []float32{5}, f32Values(t, total))
	require.NoError(t, TensorFree(total))
	g, _ := TensorGrad(a)
	assert.InDeltaSlice(t, []float32{0.6, -0.8}, f32Values(t, g), 1e-6)
	require.NoError(t, TensorFree(g))
	require.NoError(t, ClipGradValue([]int64{a}, 0.7))
	g, _ = TensorGrad(a)
	assert.InDeltaSlice(t, []float32{0.6, -0.7}, f32Values(t, g), 1e-6)
	require.NoError(t, TensorFree(g))
	_, err = ClipGradNorm([]int64{a}, -1, 2)
	errorIs(t, err, StatusInvalid, "max norm must be >= 0")
}

func TestLRSchedule(t *testing.T) {
	got, err := LRSchedule("step", attrs{{Name: "step_size", Kind: AttrInt, I: 2}, {Name: "gamma", Kind: AttrFloat, F: 0.5}}, 0.1, 5)
	require.NoError(t, err)
	assert.InDelta(t, 0.025, got, 1e-15)
	got, err = LRSchedule("warmup_cosine", attrs{{Name: "warmup", Kind: AttrInt, I: 2}, {Name: "total", Kind: AttrInt, I: 4}}, 1, 1)
	require.NoError(t, err)
	assert.InDelta(t, 0.5, got, 1e-15)
	_, err = LRSchedule("step", nil, 0.1, 0)
	errorIs(t, err, StatusInvalid, "step size must be >= 1")
	_, err = LRSchedule("cyclic", nil, 0.1, 0)
	errorIs(t, err, StatusInvalid, `unknown schedule "cyclic"`)
	_, err = LRSchedule("exponential", attrs{{Name: "gama", Kind: AttrFloat, F: 0.5}}, 0.1, 0)
	errorIs(t, err, StatusInvalid, `unknown setting "gama" (it takes gamma)`)
}
