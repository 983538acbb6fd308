package auto

import (
	"context"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	_ "github.com/webtensor/webtensor/backends/cpu"
	"github.com/webtensor/webtensor/core"
	plugins "github.com/webtensor/webtensor/plugins-wasm"
)

// fakeSpeed is a setting whose values change an injected KPI, so the
// framework's decisions are tested on known effects, not on timings.
type fakeSpeed struct {
	value  string
	effect map[string]float64 // KPI multiplier per value
}

func (f *fakeSpeed) setting() Setting {
	return Setting{Name: "fake.speed", Doc: "a test knob", Choices: []string{"base", "fast", "slow", "same"},
		Get: func() string { return f.value },
		Set: func(v string) error { f.value = v; return nil }}
}

func newFakeSpeed() *fakeSpeed {
	return &fakeSpeed{value: "base", effect: map[string]float64{"base": 1, "fast": 0.8, "slow": 1.3, "same": 1}}
}

// fakeWorkload's KPI is scale times the setting's effect, with 1% of
// seeded noise, and optionally a real small op so a profile sees one.
type fakeWorkload struct {
	name  string
	speed *fakeSpeed
	scale map[string]float64 // per value, overrides speed.effect when set
	rng   *rand.Rand
	calls int
	after func(calls int, kpi float64) float64
	op    bool
}

func newFakeWorkload(name string, s *fakeSpeed) *fakeWorkload {
	return &fakeWorkload{name: name, speed: s, rng: rand.New(rand.NewSource(1))}
}

func (w *fakeWorkload) Name() string { return w.name }

func (w *fakeWorkload) Run() (float64, error) {
	w.calls++
	if w.op {
		x := core.FromSlice([]float32{1, 2, 3, 4}, core.Shape{4})
		if err := core.Call1("add", nil, x, x).Err(); err != nil {
			return 0, err
		}
	}
	e := w.speed.effect[w.speed.value]
	if v, ok := w.scale[w.speed.value]; ok {
		e = v
	}
	kpi := e * (1 + 0.01*w.rng.NormFloat64())
	if w.after != nil {
		kpi = w.after(w.calls, kpi)
	}
	return kpi, nil
}

// scripted is a Go policy that answers with fixed proposals.
type scripted struct{ props []Proposal }

func (scripted) PolicyName() string                    { return "test.scripted" }
func (s scripted) Propose(Request) ([]Proposal, error) { return s.props, nil }
func change(k, v string) map[string]string             { return map[string]string{k: v} }
func prop(k, v string, gain float64) Proposal {
	return Proposal{What: k + "=" + v, Why: "test", ExpectedGain: gain, Change: change(k, v)}
}

func newFramework(t *testing.T, dir string) (*Framework, *fakeSpeed) {
	t.Helper()
	fw, err := Open(dir, DefaultConfig())
	require.NoError(t, err)
	s := newFakeSpeed()
	require.NoError(t, fw.Settings().Add(s.setting()))
	return fw, s
}

func hash(t *testing.T, fw *Framework) string {
	t.Helper()
	s, err := fw.State().Snapshot()
	require.NoError(t, err)
	return s.Hash()
}

// Policy modules are built once per test binary, as `make plugins` would.
var (
	buildDir  string
	buildOnce sync.Map // package path -> *builtModule
)

type builtModule struct {
	once sync.Once
	path string
	err  error
}

func TestMain(m *testing.M) {
	if key := os.Getenv("WT_AUTO_CHILD_KEY"); key != "" {
		if err := webgpuWinnerChild(key); err != nil {
			fmt.Fprintln(os.Stderr, "child:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	dir, err := os.MkdirTemp("", "auto-policies-")
	if err != nil {
		panic(err)
	}
	buildDir = dir
	// The WebGPU disk cache goes to a private folder, shared with the
	// child processes the tests start (they inherit the variable).
	if os.Getenv("WT_AUTO_CHILD_KEY") == "" {
		os.Setenv("WEBTENSOR_CACHE_DIR", filepath.Join(dir, "cache"))
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// policyModule builds the Go policy package pkg (relative to the
// repository root) for wasip1 and returns the module's path.
func policyModule(t *testing.T, pkg string) string {
	t.Helper()
	v, _ := buildOnce.LoadOrStore(pkg, &builtModule{})
	b := v.(*builtModule)
	b.once.Do(func() {
		b.path = filepath.Join(buildDir, filepath.Base(pkg)+".wasm")
		cmd := exec.Command("go", "build", "-buildmode=c-shared", "-o", b.path, "./"+pkg)
		cmd.Dir = ".."
		cmd.Env = append(os.Environ(), "GOOS=wasip1", "GOARCH=wasm")
		if out, err := cmd.CombinedOutput(); err != nil {
			b.err = err
			b.path = string(out)
		}
	})
	require.NoError(t, b.err, "building %s: %s", pkg, b.path)
	return b.path
}

// loadPolicy loads one policy of a module built from pkg into a host
// with a one-second deadline and a 256 MiB memory cap.
func loadPolicy(t *testing.T, pkg, name string) WasmPolicy {
	t.Helper()
	ctx := context.Background()
	h, err := plugins.NewHost(ctx, plugins.NewConfig().WithDeadline(time.Second).WithMemoryLimit(256<<20))
	require.NoError(t, err)
	t.Cleanup(func() { _ = h.Close(ctx) })
	p, err := LoadPolicy(ctx, h, policyModule(t, pkg)+"#"+name)
	require.NoError(t, err)
	return p
}
