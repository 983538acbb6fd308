package conformance

import (
	"encoding/json"
	"sort"

	"github.com/webtensor/webtensor/core"
	"github.com/webtensor/webtensor/core/kernelkit"
)

// Index is conformance/vectors/index.json: what every SDK's runner needs
// besides the vector files themselves - the ops, their tolerances per dtype
// and how to build a "strided" input - so no runner re-derives registry rules.
type Index struct {
	Version      int                `json:"version"`
	Strided      string             `json:"strided"`
	Complex      string             `json:"complex"`
	GradTolScale float64            `json:"grad_tol_scale"`
	Compare      string             `json:"compare"`
	Tolerances   map[string]Tol     `json:"tolerances"` // per output dtype, before an op's tol_scale
	Ops          map[string]IndexOp `json:"ops"`
}

// IndexOp is one op of the index.
type IndexOp struct {
	File     string  `json:"file"`
	Key      string  `json:"key"`
	Internal bool    `json:"internal,omitempty"`
	Random   bool    `json:"random,omitempty"`
	TolScale float64 `json:"tol_scale"` // multiplies both terms of the dtype's tolerance
}

// Tol is a tolerance pair: |got - want| <= atol + rtol*|want|.
type Tol struct {
	Atol float64 `json:"atol"`
	Rtol float64 `json:"rtol"`
}

// BuildIndex describes every op that has sample cases.
func BuildIndex() Index {
	ix := Index{
		Version: 1,
		Strided: "an input marked strided is a non-contiguous view: its strides are twice the contiguous ones " +
			"(every dim), over a zero-filled base of 2*numel elements holding the values at those positions; " +
			"equivalently base.reshape(shape[:-1] + [2*shape[-1]])[..., ::2]",
		Complex: "an input marked complex is stored as its real pairs (shape ending in 2): build that tensor and pass " +
			"the op view_as_complex of it (gradients are the pairs'); an output marked complex is compared, and " +
			"differentiated, as view_as_real of it",
		GradTolScale: kernelkit.GradTolScale,
		Compare: "NaN matches NaN, infinities must match exactly, integers and bools exactly, floats within " +
			"the op's tolerance for the output dtype (gradients: both terms times grad_tol_scale); gradients are " +
			"of sum(out_j * up_j) over the outputs that have an upstream tensor",
		Tolerances: map[string]Tol{},
		Ops:        map[string]IndexOp{},
	}
	for _, d := range core.AllDTypes {
		t := core.Tolerances[d]
		ix.Tolerances[d.String()] = Tol{Atol: t.Atol, Rtol: t.Rtol}
	}
	for _, def := range OpsWithSamples() {
		scale := def.TolScale
		if scale <= 0 {
			scale = 1
		}
		ix.Ops[def.Name] = IndexOp{File: def.Name + ".safetensors", Key: Key(def), Internal: def.Internal,
			Random: def.Random, TolScale: scale}
	}
	return ix
}

// JSON renders the index deterministically (sorted keys, indented).
func (ix Index) JSON() []byte {
	b, _ := json.MarshalIndent(ix, "", "  ")
	return append(b, '\n')
}

// Result is one runner's outcome for one SDK and backend, the file every
// runner writes and `make conformance` tabulates.
type Result struct {
	SDK     string              `json:"sdk"`
	Backend string              `json:"backend"`
	Detail  string              `json:"detail,omitempty"` // adapter, runtime version
	Ops     map[string]OpResult `json:"ops"`
	// Identity holds fingerprints that must be equal in every column: the
	// bytes of seeded random tensors (see IdentityCases).
	Identity map[string]string `json:"identity,omitempty"`
	// Training is the loss curve of the cross-SDK training check and
	// Checkpoint the file its final weights were saved to (SDKs with nn).
	Training   []float64 `json:"training,omitempty"`
	Checkpoint string    `json:"checkpoint,omitempty"`
	// LoadsCheckpoints records, per other column's checkpoint, whether this
	// SDK loaded it ("ok" or the error).
	LoadsCheckpoints map[string]string `json:"loads_checkpoints,omitempty"`
	// Fallbacks is what the SDK's fallback call returned after the run (the
	// counts reset before it): op calls that ran on the CPU instead of the
	// column's device, and declared host work. nil: the runner could not
	// ask (a binding without the call).
	Fallbacks []core.Fallback `json:"fallbacks"`
}

// IdentityCase is a seeded random tensor every SDK makes through its own
// API; the SHA-256 of its little-endian bytes must agree across SDKs and
// backends.
type IdentityCase struct {
	Name  string
	Op    string
	Shape []int
	Attrs map[string]any
}

// IdentityCases are the cross-SDK random-stream checks.
var IdentityCases = []IdentityCase{
	{"rand_seed7", "rand", []int{64}, map[string]any{"seed": 7}},
	{"randint_seed7", "randint", []int{64}, map[string]any{"seed": 7, "low": -5, "high": 50}},
	{"bernoulli_seed3", "bernoulli", nil, map[string]any{"seed": 3}}, // input: full([64], 0.3)
}

// OpResult is one op in one column: Status is "pass", "fail" or "n/a"
// (every case needs a dtype the backend cannot hold). Worst is the largest
// |got - want| / (atol + rtol*|want|) seen; above 1 fails.
type OpResult struct {
	Status  string  `json:"status"`
	Cases   int     `json:"cases"`
	Skipped int     `json:"skipped,omitempty"`
	Worst   float64 `json:"worst"`
	Detail  string  `json:"detail,omitempty"`
}

// SortedOps lists a result's op names.
func (r Result) SortedOps() []string {
	out := make([]string, 0, len(r.Ops))
	for k := range r.Ops {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
