package trace_test

import (
	"bytes"
	"math"
	"testing"
	"time"

	"github.com/google/pprof/profile"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	_ "github.com/webtensor/webtensor/backends/cpu"
	"github.com/webtensor/webtensor/core"
	"github.com/webtensor/webtensor/trace"
)

// A recorded run: every op call with shapes, bytes and nesting (isfinite
// is composed of isnan, isinf, logical_or and logical_not, which run one
// level inside it), written as a Chrome trace that validates, reads back
// equal, and carries the environment.
func TestRecordWriteReadValidate(t *testing.T) {
	r, err := trace.Start()
	require.NoError(t, err)
	_, err = trace.Start()
	require.ErrorContains(t, err, "a recording is already running")
	x := core.FromFloat64s(core.F32, core.Shape{2, 3}, []float64{1, math.NaN(), 3, math.Inf(1), 5, 6})
	y := core.Call1("isfinite", nil, core.Call1("exp", nil, x))
	require.NoError(t, y.Err())
	_, err = core.Call("matmul", []*core.Tensor{x, x}, nil) // a shape error is recorded too
	require.Error(t, err)
	tr := r.Stop()
	core.Call1("neg", nil, x) // after Stop: not recorded

	ops := map[string]trace.Event{}
	for _, e := range tr.Events {
		ops[e.Op] = e
	}
	require.Contains(t, ops, "exp")
	assert.Equal(t, []string{"f32[2 3]"}, ops["exp"].Inputs)
	assert.Equal(t, int64(2*6*4), ops["exp"].Bytes)
	assert.Equal(t, 0, ops["isfinite"].Depth)
	assert.Equal(t, 1, ops["isnan"].Depth, "isfinite's parts run inside it")
	assert.Contains(t, ops["matmul"].Error, "matmul")
	assert.NotContains(t, ops, "neg")
	assert.Equal(t, []string{"cpu"}, tr.Env.Devices)
	assert.NotEmpty(t, tr.Env.Go)
	assert.GreaterOrEqual(t, ops["exp"].Memory, int64(0))

	var buf bytes.Buffer
	require.NoError(t, tr.WriteJSON(&buf))
	require.NoError(t, trace.Validate(buf.Bytes()))
	back, err := trace.ReadJSON(bytes.NewReader(buf.Bytes()))
	require.NoError(t, err)
	require.Len(t, back.Events, len(tr.Events))
	for i, e := range back.Events {
		want := tr.Events[i]
		assert.Equal(t, want.Op, e.Op)
		assert.Equal(t, want.Device, e.Device)
		assert.Equal(t, want.Inputs, e.Inputs)
		assert.Equal(t, want.Depth, e.Depth)
		assert.InDelta(t, float64(want.Duration), float64(e.Duration), float64(time.Microsecond))
	}
	assert.Equal(t, tr.Env.Go, back.Env.Go)
}

// Validate names the event and the rule it breaks.
func TestValidateRejectsMalformedTraces(t *testing.T) {
	cases := map[string]string{
		`[]`:             "not a JSON object",
		`{"events": []}`: "no traceEvents array",
		`{"traceEvents": [{"ph": "X", "name": "a", "pid": 1, "tid": 1, "ts": 0}]}`:             "traceEvents[0]: a: complete event with dur <nil>",
		`{"traceEvents": [{"ph": "B", "name": "a", "pid": 1, "tid": 1, "ts": 0}]}`:             `phase "B"`,
		`{"traceEvents": [{"ph": "X", "name": "a", "pid": "p", "tid": 1, "ts": 0, "dur": 1}]}`: "pid is p",
		`{"traceEvents": [{"ph": "M", "name": "process_name", "pid": 1, "tid": 0}]}`:           "process_name without args.name",
		`{"traceEvents": [{"ph": "C", "name": "m", "pid": 1, "ts": 1, "args": {"x": "y"}}]}`:   "counter m: x is y",
	}
	for in, want := range cases {
		assert.ErrorContains(t, trace.Validate([]byte(in)), want, in)
	}
	_, err := trace.ReadJSON(bytes.NewReader([]byte(`{"traceEvents": [{"ph": "X", "name": "a", "ts": -1, "dur": 1}]}`)))
	assert.ErrorContains(t, err, "non-negative")
}

// The flame graph nests each op's parts inside it, splits total and self
// time, merges repeated stacks, and writes an SVG and a pprof profile that
// pprof parses back with the same totals.
func TestFlameGraph(t *testing.T) {
	ms := time.Millisecond
	tr := &trace.Trace{Events: []trace.Event{
		{Op: "matmul", Category: "linalg", Device: "cpu", Start: 0, Duration: 4 * ms},
		{Op: "isfinite", Category: "logical", Device: "cpu", Start: 5 * ms, Duration: 3 * ms},
		{Op: "isnan", Category: "logical", Device: "cpu", Start: 5 * ms, Duration: ms, Depth: 1},
		{Op: "isinf", Category: "logical", Device: "cpu", Start: 6 * ms, Duration: ms, Depth: 1},
		{Op: "matmul", Category: "linalg", Device: "cpu", Start: 9 * ms, Duration: 2 * ms},
		{Op: "add", Category: "binary", Device: "webgpu:0", Start: 0, Duration: ms},
	}}
	root := trace.Flame(tr)
	assert.Equal(t, 10*ms, root.Total)
	require.Len(t, root.Children, 2)
	cpu := root.Children[0]
	assert.Equal(t, "cpu", cpu.Name)
	require.Len(t, cpu.Children, 2)
	isf, mm := cpu.Children[0], cpu.Children[1]
	assert.Equal(t, "matmul", mm.Name)
	assert.Equal(t, 2, mm.Calls)
	assert.Equal(t, 6*ms, mm.Total)
	assert.Equal(t, 3*ms, isf.Total)
	assert.Equal(t, ms, isf.Self)
	require.Len(t, isf.Children, 2)

	var svg bytes.Buffer
	require.NoError(t, root.WriteSVG(&svg, 800))
	assert.Contains(t, svg.String(), "<svg")
	assert.Contains(t, svg.String(), "isfinite: 3ms total, 1ms self, 1 calls")

	var pb bytes.Buffer
	require.NoError(t, root.WritePprof(&pb))
	p, err := profile.Parse(&pb)
	require.NoError(t, err)
	var total int64
	for _, s := range p.Sample {
		total += s.Value[0]
	}
	assert.Equal(t, int64(10*ms), total, "self times add up to the whole")
}

// The plan's number: a flame graph of 1,000 kernel calls in at most 10 s
// (aim under 1 s); this measures recording, writing, reading and drawing.
func BenchmarkFlameOf1000Calls(b *testing.B) {
	x := core.Call1("randn", core.Attrs{"shape": []int{64, 64}})
	for b.Loop() {
		r, err := trace.Start()
		require.NoError(b, err)
		for range 1000 {
			core.Call1("tanh", nil, x).Release()
		}
		var buf bytes.Buffer
		require.NoError(b, r.Stop().WriteJSON(&buf))
		back, err := trace.ReadJSON(&buf)
		require.NoError(b, err)
		var svg, pb bytes.Buffer
		root := trace.Flame(back)
		require.NoError(b, root.WriteSVG(&svg, 1200))
		require.NoError(b, root.WritePprof(&pb))
	}
}
