package onnx

import (
	"fmt"
	"slices"

	"github.com/webtensor/webtensor/core"
)

// Loop and Scan run their body subgraph once per iteration on the host,
// as If picks its branch there: the trip count and each iteration's
// condition are read as numbers, so a traced graph holds the loop
// unrolled (ir.Trace specialises any Go loop). The loop-carried values
// pass from one iteration's outputs to the next one's inputs; the scan
// outputs of every iteration are stacked along a new axis. Loop-carried
// and state values may be sequences or optionals; what is scanned or
// stacked is a tensor.

func init() {
	defValues([]string{"body"}, loopOp, "Loop")
	defValues([]string{"body", "num_scan_inputs", "scan_input_axes", "scan_input_directions", "scan_output_axes",
		"scan_output_directions", "directions"}, scanOp, "Scan")
}

// maxLoopIterations bounds a Loop, so a hostile trip count or a condition
// that never clears is an error rather than a hung process. (Exporters
// write while loops as a trip count of 2^63-1 with a condition, so a
// large M alone is no error.)
const maxLoopIterations = 1 << 24

func loopOp(c *ctx) ([]Value, error) {
	body := c.n.branches["body"]
	if body == nil {
		c.fail("attribute \"body\" is missing")
		return nil, nil
	}
	nCarried := len(c.ins) - 2
	if nCarried < 0 {
		nCarried = 0
	}
	if len(body.inputs) != nCarried+2 {
		c.fail("the body takes %d inputs, want %d (iteration number, condition and the %d loop-carried values)",
			len(body.inputs), nCarried+2, nCarried)
		return nil, nil
	}
	nScan := len(body.outputs) - 1 - nCarried
	if nScan < 0 {
		c.fail("the body has %d outputs, want at least %d (condition and the %d loop-carried values)", len(body.outputs), nCarried+1, nCarried)
		return nil, nil
	}
	trip, hasTrip := int64(0), false
	if v, ok := c.ints(0); ok {
		if len(v) != 1 {
			c.fail("the trip count M has %d values, want 1", len(v))
			return nil, nil
		}
		trip, hasTrip = v[0], true
	}
	cond, hasCond := true, false
	if v, ok := c.scalar(1); ok {
		cond, hasCond = v != 0, true
	}
	if c.err != nil {
		return nil, nil
	}
	if !hasTrip && !hasCond {
		c.fail("neither a trip count M nor a condition is given: the loop would never end")
		return nil, nil
	}
	carried := make([]Value, nCarried)
	types := make([]elemType, nCarried+2)
	for i := range carried {
		if carried[i] = c.value(2 + i); carried[i] == nil {
			c.fail("loop-carried input %d (%q) is required", 2+i, c.n.inputs[2+i])
			return nil, nil
		}
		types[2+i] = c.inType(2 + i)
	}
	dev := c.m.dev
	scans := make([][]Value, nScan)
	var iter int64
	for ; (!hasTrip || iter < trip) && cond; iter++ {
		if iter >= maxLoopIterations {
			c.fail("the loop is still running after %d iterations (the most the importer runs)", iter)
			return nil, nil
		}
		ins := append([]Value{
			core.FromSlice([]int64{iter}, core.Shape{}, dev),
			core.FromSlice([]bool{cond}, core.Shape{}, dev),
		}, carried...)
		outs, err := body.runWith(c.m, c.run, ins, types)
		if err != nil {
			return nil, fmt.Errorf("iteration %d: %w", iter, err)
		}
		if hasCond {
			condOut, ok := outs[0].(*core.Tensor)
			if !ok || condOut.Numel() != 1 {
				c.fail("iteration %d: the body's condition is %s, want a single value", iter, describe(outs[0]))
				return nil, nil
			}
			v, err := condOut.Item()
			if err != nil {
				return nil, fmt.Errorf("iteration %d: the condition: %w", iter, err)
			}
			cond = v != 0
		}
		for i := range carried {
			carried[i] = outs[1+i]
			types[2+i] = c.valueType(body.outputs[1+i], outs[1+i])
		}
		for k := range scans {
			scans[k] = append(scans[k], outs[1+nCarried+k])
		}
	}
	res := append([]Value{}, carried...)
	for i := range carried {
		c.setType(i, types[2+i])
	}
	for k, vals := range scans {
		list, err := tensorsOf(vals, fmt.Sprintf("scan output %q at iteration", body.outputs[1+nCarried+k]))
		if err != nil {
			return nil, err
		}
		y, err := stackScan(c, body, 1+nCarried+k, list, 0, false)
		if err != nil {
			return nil, err
		}
		res = append(res, y)
	}
	return res, nil
}

// stackScan stacks a scan output's per-iteration values along axis
// (reversed first when reverse is set). Without iterations the output is
// empty, shaped by the body's declared output, which must then be static.
func stackScan(c *ctx, body *subgraph, out int, list []*core.Tensor, axis int, reverse bool) (*core.Tensor, error) {
	info := body.outInfo[out]
	if len(list) == 0 {
		if info.DType == core.Invalid || !body.outShaped[out] {
			return nil, fmt.Errorf("scan output %q has no iterations and the body declares no type and shape for it", info.Name)
		}
		shape := []int{}
		for _, d := range info.Dims {
			if d.Size < 0 {
				return nil, fmt.Errorf("scan output %q has no iterations and the body declares a symbolic shape for it", info.Name)
			}
			shape = append(shape, int(d.Size))
		}
		if axis > len(shape) {
			return nil, fmt.Errorf("scan output %q: axis %d is out of range for rank %d", info.Name, axis, len(shape)+1)
		}
		shape = append(shape[:axis], append([]int{0}, shape[axis:]...)...)
		return core.FromFloat64s(info.DType, core.Shape(shape), nil, c.m.dev), nil
	}
	if reverse {
		r := make([]*core.Tensor, len(list))
		for i, t := range list {
			r[len(list)-1-i] = t
		}
		list = r
	}
	for i, t := range list[1:] {
		if !slices.Equal(t.Shape(), list[0].Shape()) {
			return nil, fmt.Errorf("scan output %q has shape %v at iteration %d and %v at iteration 0", info.Name, t.Shape(), i+1, list[0].Shape())
		}
	}
	y := call("stack", core.Attrs{"axis": axis}, list...)
	return y, y.Err()
}

// scanOp is Scan: opset 9's form (scan axes and directions per input and
// output) and opset 8's (a leading batch axis, optional sequence_lens and
// one directions list), the latter run as opset 9's per batch entry.
func scanOp(c *ctx) ([]Value, error) {
	body := c.n.branches["body"]
	if body == nil {
		c.fail("attribute \"body\" is missing")
		return nil, nil
	}
	if !c.has("num_scan_inputs") {
		c.fail("attribute \"num_scan_inputs\" is required")
		return nil, nil
	}
	m := int(c.attrInt("num_scan_inputs", 0))
	if c.n.opset < 9 {
		return scan8(c, body, m)
	}
	for _, name := range []string{"directions"} {
		if c.has(name) {
			c.fail("attribute %q is opset 8's; from opset 9 Scan takes scan_input_directions", name)
			return nil, nil
		}
	}
	if m < 1 || m > len(c.ins) {
		c.fail("num_scan_inputs %d: want 1 to %d (the node has %d inputs)", m, len(c.ins), len(c.ins))
		return nil, nil
	}
	n := len(c.ins) - m
	ins := make([]Value, len(c.ins))
	for i := range ins {
		if ins[i] = c.value(i); ins[i] == nil {
			c.fail("input %d is required", i)
			return nil, nil
		}
	}
	if _, err := tensorsOf(ins[n:], "scan input"); err != nil {
		return nil, err
	}
	sp := scanPlan{states: n}
	sp.inAxes = c.intList("scan_input_axes", m)
	sp.inDirs = c.intList("scan_input_directions", m)
	sp.outAxes = c.intList("scan_output_axes", len(body.outputs)-n)
	sp.outDirs = c.intList("scan_output_directions", len(body.outputs)-n)
	if c.err != nil {
		return nil, nil
	}
	types := make([]elemType, len(ins))
	for i := range types {
		types[i] = c.inType(i)
	}
	return sp.run(c, body, ins, types)
}

// intList reads an INTS attribute that has one value per item, zeros when
// absent.
func (c *ctx) intList(name string, n int) []int64 {
	v, ok := c.attrInts(name)
	if !ok {
		return make([]int64, max(n, 0))
	}
	if len(v) != n {
		c.fail("attribute %q has %d values, want %d", name, len(v), n)
	}
	return v
}

// scanPlan is a Scan's layout: the count of state values, then per scan
// input and per scan output an axis and a direction (1: reversed).
type scanPlan struct {
	states                           int
	inAxes, inDirs, outAxes, outDirs []int64
}

func (sp scanPlan) run(c *ctx, body *subgraph, ins []Value, types []elemType) ([]Value, error) {
	n, m := sp.states, len(ins)-sp.states
	if len(body.inputs) != n+m {
		c.fail("the body takes %d inputs, want %d (%d state values and %d scan inputs)", len(body.inputs), n+m, n, m)
		return nil, nil
	}
	k := len(body.outputs) - n
	if k < 0 {
		c.fail("the body has %d outputs, fewer than the %d state values", len(body.outputs), n)
		return nil, nil
	}
	steps := -1
	axes := make([]int, m)
	scanned, err := tensorsOf(ins[n:], "scan input")
	if err != nil {
		return nil, err
	}
	for j, x := range scanned {
		axes[j] = c.axis(sp.inAxes[j], x.Rank())
		if d := sp.inDirs[j]; d != 0 && d != 1 {
			c.fail("scan_input_directions[%d] is %d, want 0 (forward) or 1 (reverse)", j, d)
		}
		if c.err != nil {
			return nil, nil
		}
		if l := x.Shape()[axes[j]]; steps < 0 {
			steps = l
		} else if l != steps {
			c.fail("scan input %d has %d steps along axis %d, scan input 0 has %d", j, l, axes[j], steps)
			return nil, nil
		}
	}
	for j, d := range sp.outDirs {
		if d != 0 && d != 1 {
			c.fail("scan_output_directions[%d] is %d, want 0 (forward) or 1 (reverse)", j, d)
			return nil, nil
		}
	}
	state := append([]Value{}, ins[:n]...)
	stTypes := append([]elemType{}, types[:n]...)
	scans := make([][]Value, k)
	for t := range steps {
		step := append([]Value{}, state...)
		for j, x := range scanned {
			i := t
			if sp.inDirs[j] == 1 {
				i = steps - 1 - t
			}
			step = append(step, call("squeeze", core.Attrs{"axes": []int{axes[j]}},
				call("slice", core.Attrs{"axis": axes[j], "start": i, "stop": i + 1}, x)))
		}
		outs, err := body.runWith(c.m, c.run, step, append(append([]elemType{}, stTypes...), types[n:]...))
		if err != nil {
			return nil, fmt.Errorf("step %d: %w", t, err)
		}
		for i := range state {
			state[i] = outs[i]
			stTypes[i] = c.valueType(body.outputs[i], outs[i])
		}
		for j := range scans {
			scans[j] = append(scans[j], outs[n+j])
		}
	}
	res := state
	for i := range state {
		c.setType(i, stTypes[i])
	}
	for j, vals := range scans {
		list, err := tensorsOf(vals, fmt.Sprintf("scan output %q at step", body.outputs[n+j]))
		if err != nil {
			return nil, err
		}
		rank := 0
		if len(list) > 0 {
			rank = list[0].Rank()
		} else if info := body.outInfo[n+j]; info.Dims != nil {
			rank = len(info.Dims)
		}
		ax := c.axis(sp.outAxes[j], rank+1)
		if c.err != nil {
			return nil, nil
		}
		y, err := stackScan(c, body, n+j, list, ax, sp.outDirs[j] == 1)
		if err != nil {
			return nil, err
		}
		res = append(res, y)
	}
	return res, nil
}

// scan8 is opset 8's Scan: every input has a leading batch axis, the scan
// axis follows it, and directions applies to the scan inputs. Each batch
// entry runs as an opset 9 scan along axis 0; sequence_lens, when given,
// must be the full length for every entry.
func scan8(c *ctx, body *subgraph, m int) ([]Value, error) {
	for _, name := range []string{"scan_input_axes", "scan_input_directions", "scan_output_axes", "scan_output_directions"} {
		if c.has(name) {
			c.fail("attribute %q is not part of Scan before opset 9 (the model imports opset %d)", name, c.n.opset)
			return nil, nil
		}
	}
	if m < 1 || m > len(c.ins)-1 {
		c.fail("num_scan_inputs %d: want 1 to %d (the node has %d inputs after sequence_lens)", m, len(c.ins)-1, len(c.ins)-1)
		return nil, nil
	}
	ins := make([]*core.Tensor, len(c.ins)-1)
	types := make([]elemType, len(ins))
	for i := range ins {
		ins[i] = c.in(i + 1)
		types[i] = c.inType(i + 1)
	}
	if c.err != nil {
		return nil, nil
	}
	batch := -1
	for i, x := range ins {
		if x.Rank() < 1 || (batch >= 0 && x.Shape()[0] != batch) {
			c.fail("input %d has shape %v: every input needs the same leading batch axis", i+1, x.Shape())
			return nil, nil
		}
		batch = x.Shape()[0]
	}
	n := len(ins) - m
	steps := 0
	if x := ins[n]; x.Rank() >= 2 {
		steps = x.Shape()[1]
	}
	if lens, ok := c.ints(0); ok {
		for b, l := range lens {
			if l != int64(steps) {
				c.fail("sequence_lens[%d] is %d: only full-length sequences (%d) are supported", b, l, steps)
				return nil, nil
			}
		}
	}
	k := len(body.outputs) - n
	sp := scanPlan{states: n, inAxes: make([]int64, m), outAxes: make([]int64, max(k, 0)), outDirs: make([]int64, max(k, 0))}
	sp.inDirs = c.intList("directions", m)
	if c.err != nil {
		return nil, nil
	}
	if batch == 0 {
		c.fail("a batch of 0 is not supported")
		return nil, nil
	}
	per := make([][]*core.Tensor, len(body.outputs))
	for b := range batch {
		entry := make([]Value, len(ins))
		for i, x := range ins {
			entry[i] = call("squeeze", core.Attrs{"axes": []int{0}}, call("slice", core.Attrs{"axis": 0, "start": b, "stop": b + 1}, x))
		}
		vals, err := sp.run(c, body, entry, types)
		if c.err != nil || err != nil {
			return nil, err
		}
		outs, err := tensorsOf(vals, "output") // opset 8 stacks its states over the batch too
		if err != nil {
			return nil, err
		}
		for i, o := range outs {
			per[i] = append(per[i], o)
		}
	}
	res := make([]Value, len(per))
	for i, list := range per {
		res[i] = call("stack", core.Attrs{"axis": 0}, list...)
	}
	return res, nil
}
