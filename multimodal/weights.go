package multimodal

import (
	"fmt"
	"io/fs"
	"sort"
	"strings"

	"github.com/webtensor/webtensor/core"
	"github.com/webtensor/webtensor/core/safetensors"
	"github.com/webtensor/webtensor/internal/modelfs"
	"github.com/webtensor/webtensor/nn"
)

// LoadOption configures a Load function.
type LoadOption func(*loadOptions)

type loadOptions struct {
	dev   core.Device
	dtype core.DType
	fsys  fs.FS // FromFS: folders are paths inside it
}

// WithDevice puts the weights on dev (default the CPU); inputs must be
// there too.
func WithDevice(dev core.Device) LoadOption { return func(o *loadOptions) { o.dev = dev } }

// WithDType converts the weights to a float dtype (default float32).
func WithDType(d core.DType) LoadOption { return func(o *loadOptions) { o.dtype = d } }

// FromFS makes every folder a loader is given a slash-separated path
// inside fsys ("." is its root) instead of an operating-system path: the
// files are read through fsys, such as a zip archive of a saved model
// (diffuse reads a Stable Diffusion pipeline's text encoder and tokenizer
// from one this way). LoadCLIPTokenizer takes it too.
func FromFS(fsys fs.FS) LoadOption { return func(o *loadOptions) { o.fsys = fsys } }

// folder is where a loader reads dir's files: the OS folder, or dir
// inside the FromFS file system.
func (o *loadOptions) folder(op, dir string) (modelfs.Dir, error) {
	if o.fsys == nil {
		return modelfs.OS(dir), nil
	}
	d, err := modelfs.In(o.fsys, dir)
	if err != nil {
		return modelfs.Dir{}, fmt.Errorf("multimodal: %s: %w", op, err)
	}
	return d, nil
}

func buildLoadOptions(op string, opts []LoadOption) (loadOptions, error) {
	o := loadOptions{dev: core.CPU, dtype: core.F32}
	for _, opt := range opts {
		opt(&o)
	}
	if !o.dtype.IsFloat() {
		return o, fmt.Errorf("multimodal: %s: dtype %s is not a float dtype", op, o.dtype)
	}
	return o, nil
}

// weights hands out a checkpoint's tensors as parameters and collects every
// problem (missing, misshaped, of the wrong dtype) so a load reports them
// all at once, with the tensors the model did not ask for.
type weights struct {
	file     *safetensors.File // nil: the tensors are drawn (drawnWeights)
	seed     int64
	offset   int64 // the Philox stream's position, advanced by every draw
	dev      core.Device
	dtype    core.DType
	used     map[string]bool
	problems []string
	dummy    *nn.Parameter // stands in for a bad tensor so building goes on
	dir      modelfs.Dir   // the model's folder, for its other files
}

func newWeights(f *safetensors.File, o loadOptions) (*weights, error) {
	dummy, err := nn.NewParameter(core.Scalar(0, o.dtype, o.dev))
	if err != nil {
		return nil, err
	}
	return &weights{file: f, dev: o.dev, dtype: o.dtype, used: map[string]bool{}, dummy: dummy}, nil
}

// drawnWeights hands out tensors drawn from N(0, 0.02²) (transformers'
// initializer_range) by a seeded Philox stream instead of a checkpoint's:
// a model to time or test the code on, not a trained one.
func drawnWeights(seed int64, o loadOptions) (*weights, error) {
	w, err := newWeights(&safetensors.File{}, o)
	if err != nil {
		return nil, err
	}
	w.file, w.seed = nil, seed
	return w, nil
}

func (w *weights) has(name string) bool {
	if w.file == nil {
		return false
	}
	_, ok := w.file.Tensors[name]
	return ok
}

// param is tensor name, which must have the given shape.
func (w *weights) param(name string, shape ...int) *nn.Parameter {
	w.used[name] = true
	want := core.Shape(shape)
	if w.file == nil {
		t := core.Randn(core.Attrs{"shape": []int(want), "dtype": core.F32, "seed": w.seed, "offset": w.offset})
		w.offset += int64(want.Numel())
		p, err := nn.NewParameter(t.Mul(core.Scalar(0.02, core.F32)).Cast(w.dtype).To(w.dev))
		if err != nil {
			w.problems = append(w.problems, fmt.Sprintf("tensor %s: %v", name, err))
			return w.dummy
		}
		return p
	}
	st, ok := w.file.Tensors[name]
	switch {
	case !ok:
		w.problems = append(w.problems, fmt.Sprintf("tensor %s is missing (want shape %v)", name, want))
		return w.dummy
	case !st.Shape.Equal(want):
		w.problems = append(w.problems, fmt.Sprintf("tensor %s has shape %v, want %v", name, st.Shape, want))
		return w.dummy
	case !st.DType.IsFloat():
		w.problems = append(w.problems, fmt.Sprintf("tensor %s has dtype %s, want a float dtype", name, st.DType))
		return w.dummy
	}
	var t *core.Tensor
	if st.DType == w.dtype {
		t = st.ToTensor(w.dev)
	} else {
		// Cast on the CPU: WebGPU refuses f64, and a checkpoint may hold it.
		t = st.ToTensor(core.CPU).Cast(w.dtype).To(w.dev)
	}
	p, err := nn.NewParameter(t)
	if err != nil {
		w.problems = append(w.problems, fmt.Sprintf("tensor %s: %v", name, err))
		return w.dummy
	}
	return p
}

// ignore accepts a tensor the model derives itself (transformers saved
// BERT's position_ids buffer until version 4.31), if the file has it.
func (w *weights) ignore(name string) { w.used[name] = true }

// register adds a module's parameters and children; the names are fixed
// and the values non-nil, so an error here is a bug, kept as a problem
// rather than a panic.
func (w *weights) register(base *nn.Base, params []nn.NamedParameter, children ...nn.NamedModule) {
	for _, p := range params {
		if err := base.RegisterParameter(p.Name, p.Param); err != nil {
			w.problems = append(w.problems, err.Error())
		}
	}
	for _, c := range children {
		if err := base.RegisterModule(c.Name, c.Module); err != nil {
			w.problems = append(w.problems, err.Error())
		}
	}
}

// check reports every problem, and every tensor of the file the model does
// not have, in one error.
func (w *weights) check(path string) error {
	var extra []string
	var file map[string]safetensors.Tensor
	if w.file != nil {
		file = w.file.Tensors
	}
	for name := range file {
		if !w.used[name] {
			extra = append(extra, name)
		}
	}
	sort.Strings(extra)
	problems := w.problems
	for _, name := range extra {
		problems = append(problems, fmt.Sprintf("tensor %s is not a parameter of the model", name))
	}
	if len(problems) == 0 {
		return nil
	}
	return fmt.Errorf("multimodal: %s does not match the model's config (%d problem(s)):\n  %s", path, len(problems), strings.Join(problems, "\n  "))
}

func (w *weights) linear(name string, in, out int) *nn.Linear {
	l := &nn.Linear{In: in, Out: out}
	l.Weight, l.Bias = w.param(name+".weight", out, in), w.param(name+".bias", out)
	w.register(&l.Base, []nn.NamedParameter{{Name: "weight", Param: l.Weight}, {Name: "bias", Param: l.Bias}})
	return l
}

// linearBias is a Linear whose bias the config may leave out (ViT's
// qkv_bias, CLIP's projections).
func (w *weights) linearBias(name string, in, out int, bias bool) *nn.Linear {
	if bias {
		return w.linear(name, in, out)
	}
	l := &nn.Linear{In: in, Out: out}
	l.Weight = w.param(name+".weight", out, in)
	w.register(&l.Base, []nn.NamedParameter{{Name: "weight", Param: l.Weight}})
	return l
}

// patchConv is a patch embedding's conv: kernel and stride the patch size.
func (w *weights) patchConv(name string, in, out, patch int, bias bool) *nn.Conv2d {
	c := &nn.Conv2d{ConvGeometry: nn.ConvGeometry{In: in, Out: out, Kernel: []int{patch, patch},
		Stride: []int{patch, patch}, Padding: []int{0, 0}, Dilation: []int{1, 1}, Groups: 1}}
	c.Weight = w.param(name+".weight", out, in, patch, patch)
	params := []nn.NamedParameter{{Name: "weight", Param: c.Weight}}
	if bias {
		c.Bias = w.param(name+".bias", out)
		params = append(params, nn.NamedParameter{Name: "bias", Param: c.Bias})
	}
	w.register(&c.Base, params)
	return c
}

func (w *weights) layerNorm(name string, dim int, eps float64) *nn.LayerNorm {
	l := &nn.LayerNorm{NormalizedShape: core.Shape{dim}, Eps: eps}
	l.Weight, l.Bias = w.param(name+".weight", dim), w.param(name+".bias", dim)
	w.register(&l.Base, []nn.NamedParameter{{Name: "weight", Param: l.Weight}, {Name: "bias", Param: l.Bias}})
	return l
}

func (w *weights) embedding(name string, num, dim int) *nn.Embedding {
	e := &nn.Embedding{Num: num, Dim: dim}
	e.Weight = w.param(name+".weight", num, dim)
	w.register(&e.Base, []nn.NamedParameter{{Name: "weight", Param: e.Weight}})
	return e
}

// list is torch's ModuleList: children named 0, 1, ...
type list struct{ nn.Base }

func (w *weights) list(items ...nn.Module) *list {
	l := &list{}
	for i, m := range items {
		w.register(&l.Base, nil, nn.NamedModule{Name: fmt.Sprint(i), Module: m})
	}
	return l
}

// module is a plain container, for torch modules that only group others.
type module struct{ nn.Base }

func (w *weights) group(children ...nn.NamedModule) *module {
	m := &module{}
	w.register(&m.Base, nil, children...)
	return m
}

// batchNorm is a BatchNorm1d in evaluation mode: the running statistics
// are buffers checked as parameters are. num_batches_tracked only counts
// training steps, and torch loads checkpoints from before it existed, so
// it is optional; when the file has it, it must be torch's i64 scalar and
// is kept, so StateDict gives the file's names.
func (w *weights) batchNorm(name string, dim int, eps float64) *nn.BatchNorm {
	bn := &nn.BatchNorm{Features: dim, Eps: eps, Momentum: 0.1}
	bn.Weight, bn.Bias = w.param(name+".weight", dim), w.param(name+".bias", dim)
	w.register(&bn.Base, []nn.NamedParameter{{Name: "weight", Param: bn.Weight}, {Name: "bias", Param: bn.Bias}})
	stats := []struct {
		name string
		dst  **nn.Buffer
	}{{"running_mean", &bn.RunningMean}, {"running_var", &bn.RunningVar}}
	for _, s := range stats {
		buf, err := nn.NewBuffer(w.param(name+"."+s.name, dim).Tensor())
		if err != nil {
			w.problems = append(w.problems, fmt.Sprintf("tensor %s.%s: %v", name, s.name, err))
			continue
		}
		*s.dst = buf
		if err := bn.RegisterBuffer(s.name, buf); err != nil {
			w.problems = append(w.problems, err.Error())
		}
	}
	count := name + ".num_batches_tracked"
	if st, ok := w.file.Tensors[count]; ok {
		w.used[count] = true
		if st.DType != core.I64 || len(st.Shape) != 0 {
			w.problems = append(w.problems, fmt.Sprintf("tensor %s has dtype %s and shape %v, want an i64 scalar", count, st.DType, st.Shape))
		} else if buf, err := nn.NewBuffer(st.ToTensor(w.dev)); err != nil {
			w.problems = append(w.problems, fmt.Sprintf("tensor %s: %v", count, err))
		} else {
			bn.BatchesSeen = buf
			if err := bn.RegisterBuffer("num_batches_tracked", buf); err != nil {
				w.problems = append(w.problems, err.Error())
			}
		}
	}
	bn.Train(false)
	return bn
}
