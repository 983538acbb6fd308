package auto

import (
	"encoding/json"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/webtensor/webtensor/backends/webgpu"
	"github.com/webtensor/webtensor/backends/webgpu/webgputest"
	"github.com/webtensor/webtensor/core"
)

// decodeStep is a decode-like step on the GPU: an elementwise pass over
// 2^19 values, then four rows through two 1028-wide layers, reps times. Four rows
// are what the fixed vec4 kernels serve worst (their blocks are 8 rows:
// half the work is thrown away); K/4 = 257 chunks is odd, so a kernel that
// unrolls two chunks and drops the tail is wrong here.
type decodeStep struct {
	x, w1, w2, big *core.Tensor
	reps           int
}

func newDecodeStep(t *testing.T) *decodeStep {
	s, err := makeDecodeStep()
	require.NoError(t, err)
	return s
}

func makeDecodeStep() (*decodeStep, error) {
	rng := rand.New(rand.NewSource(5))
	var err error
	r := func(shape ...int) *core.Tensor {
		v := make([]float32, core.Shape(shape).Numel())
		for i := range v {
			v[i] = rng.Float32()*2 - 1
		}
		x := core.FromSlice(v, core.Shape(shape), webgputest.Device)
		if err == nil {
			err = x.Err()
		}
		return x
	}
	s := &decodeStep{x: r(4, 1028), w1: r(1028, 1028), w2: r(1028, 1028), big: r(1 << 19), reps: 8}
	return s, err
}

func (s *decodeStep) run() error {
	z := core.Call1("add", nil, s.big, s.big)
	if err := z.Err(); err != nil {
		return err
	}
	z.Release()
	x := s.x
	for range s.reps {
		h := core.Call1("matmul", nil, x, s.w1)
		y := core.Call1("matmul", nil, core.Call1("relu", nil, h), s.w2)
		for _, t := range []*core.Tensor{h, y} {
			if err := t.Err(); err != nil {
				return err
			}
		}
		h.Release()
		if x != s.x {
			x.Release()
		}
		x = y
	}
	_, err := x.Bytes() // the device has finished
	x.Release()
	return err
}

// The kernel agent on WebGPU: a synthesised variant that is wrong is
// rejected by its check and journaled without being timed; the policy's
// proposals are measured A/B; what is kept is in the disk cache, where a
// new process finds it and runs it without timing anything; and a
// rollback restores the state (settings, kernel caches) to its hash.
func TestKernelAgentSynthesisesWebGPUVariants(t *testing.T) {
	dev := webgputest.Need(t)
	dev.ForgetTuning()
	step := newDecodeStep(t)
	w := Timed("decode-step", step.run)
	fw, err := Open(t.TempDir(), Config{Runs: 15, Margin: 0.10, Alpha: 0.05})
	require.NoError(t, err)
	agent, err := NewKernelAgent(fw, loadPolicy(t, "plugins-wasm/policies/auto", "kernel"))
	require.NoError(t, err)
	slowMatmulBaseline(t, dev, step)
	before := hash(t, fw)
	broken := webgpu.MatmulTile{TM: 4, TN: 8, V: 4, KU: 2, WX: 64, WY: 1, NoTail: true}.Variant()
	ds, err := agent.TuneWebGPU(dev, w, WebGPUOptions{Screen: 12, Extra: []string{broken}})
	require.NoError(t, err)
	require.NotEmpty(t, ds)
	// Which proposals win is the machine's timing: on a busy machine the
	// policy may spend a round on workgroup sizes that lose. The mechanics
	// below need one kept decision, so the agent gets up to two more rounds
	// (the A/B test still decides each: nothing is kept without its win).
	for round := 0; round < 2 && !slices.ContainsFunc(ds, func(d Decision) bool { return d.Verdict == Kept }); round++ {
		more, err := agent.TuneWebGPU(dev, w, WebGPUOptions{Screen: 12})
		require.NoError(t, err)
		ds = append(ds, more...)
	}

	var rejectedBroken bool
	var kept []Decision
	for _, d := range ds {
		t.Logf("%s %s %s: %s", d.ID, d.Verdict, d.Proposal.What, d.Reason)
		if d.Trial != nil {
			t.Logf("  A %.4v\n  B %.4v", d.Trial.A, d.Trial.B)
		}
		if strings.HasSuffix(d.Proposal.What, "="+broken) {
			rejectedBroken = d.Verdict == Rejected && d.Guard != nil && !d.Guard.OK && d.Trial == nil
			assert.Equal(t, d.StateBefore, d.StateAfter, "a rejected variant leaves no trace")
		}
		if d.Verdict == Kept {
			assert.GreaterOrEqual(t, d.Trial.Gain, 0.10)
			kept = append(kept, d)
		}
		if d.Proposal != nil && strings.HasPrefix(d.Proposal.What, "webgpu.matmul") && d.Verdict != Kept {
			assert.NotEqual(t, Kept, d.Verdict)
		}
	}
	assert.True(t, rejectedBroken, "the tail-less tile fails its check and is journaled as rejected, untimed")
	require.NotEmpty(t, kept, "a synthesised 4-row tile beats the scalar kernel kept as the baseline on a 4-row product")
	first := kept[0]
	var setting, variant string
	for k := range first.Proposal.Change {
		setting = k
	}
	// The variant in force is the last one kept for that setting: a later
	// proposal may beat the first winner (which one wins is the machine's
	// timing, so the test follows it rather than naming a tile).
	for _, d := range kept {
		if v, ok := d.Proposal.Change[setting]; ok {
			variant = v
		}
	}
	key := strings.TrimPrefix(setting, webgpuSettingPrefix)
	assert.Equal(t, variant, dev.TuningVariant(key))

	// A new process applies the winner without measuring.
	cmd := exec.Command(os.Args[0], "-test.run", "^$")
	cmd.Env = append(os.Environ(), "WT_AUTO_CHILD_KEY="+key)
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	assert.Contains(t, string(out), fmt.Sprintf("child: %s=%s timed=0", key, variant))

	// Rolling the first kept decision back restores the exact state.
	r, err := fw.Rollback(first.ID)
	require.NoError(t, err)
	assert.Equal(t, first.StateBefore, r.StateAfter)
	assert.NotEqual(t, variant, dev.TuningVariant(key), "the rollback took the winner out of the device")
	assert.Equal(t, first.StateBefore, hash(t, fw))
	if first.StateBefore == before {
		t.Log("the state is back to the hash before tuning")
	}
	require.NoError(t, step.run(), "the workload runs after the rollback")
}

// slowMatmulBaseline keeps the scalar regblock kernel (5-10x slower than
// the vec4 ones on lavapipe) for the step's 4-row product, in this process
// and the test's disk cache (a trial's setting would not outlive the
// agent's own trials). On a software driver the synthesised 4-row tiles'
// edge over the tuner's own vec4 pick is a few percent and swings with the
// machine's load, so an A/B test against it could keep nothing and leave the
// mechanics this test checks (keeping, the disk cache, a new process,
// rollback) unchecked; against the scalar kernel a good tile wins on any
// machine, and the A/B test still has to find that out.
func slowMatmulBaseline(t *testing.T, dev *webgpu.Backend, step *decodeStep) {
	t.Helper()
	dev.ResetKernelUses()
	require.NoError(t, step.run())
	var set int
	for _, u := range dev.KernelUses() {
		if u.Kind == "matmul" && webgpu.Synthesisable(u.Key) {
			require.NoError(t, dev.PersistTuning(u.Key, "regblock", "test", "a slow baseline for the A/B test", nil))
			set++
		}
	}
	require.Positive(t, set, "the decode step's product is a synthesisable matmul: %v", dev.KernelUses())
}

// webgpuWinnerChild is the new process of the test above (TestMain runs
// it when WT_AUTO_CHILD_KEY is set): it runs the decode step once and
// reports the variant in force for the key and how many variants its
// tuner timed.
func webgpuWinnerChild(key string) error {
	b, err := core.BackendFor(webgputest.Device)
	if err != nil {
		return err
	}
	dev, ok := b.(*webgpu.Backend)
	if !ok {
		return fmt.Errorf("the webgpu device's backend is a %T", b)
	}
	step, err := makeDecodeStep()
	if err != nil {
		return err
	}
	step.reps = 1
	if err := step.run(); err != nil {
		return err
	}
	stats, _ := json.Marshal(dev.KernelCacheStats())
	fmt.Printf("child: %s=%s timed=%d (%s)\n", key, dev.TuningVariant(key), dev.KernelCacheStats().VariantsTimed, stats)
	return nil
}
