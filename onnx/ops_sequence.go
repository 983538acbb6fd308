package onnx

import (
	"fmt"
	"slices"

	"github.com/webtensor/webtensor/core"
	pb "github.com/webtensor/webtensor/onnx/internal/onnxpb"
)

// Sequence and optional operators. A sequence is a list the importer's
// runtime holds (Sequence), not a tensor: building, indexing and erasing
// are list work on the host, and what touches values (SplitToSequence's
// split, ConcatFromSequence's concat or stack) is registry ops, so it
// runs on every device and traces like any other op. Positions are read
// as numbers, so a traced graph holds the tensors they chose.

func init() {
	defValues([]string{"dtype"}, sequenceEmpty, "SequenceEmpty")
	defValues(nil, sequenceConstruct, "SequenceConstruct")
	defValues(nil, sequenceInsert, "SequenceInsert")
	defValues(nil, sequenceErase, "SequenceErase")
	defValues(nil, sequenceAt, "SequenceAt")
	defValues(nil, sequenceLength, "SequenceLength")
	defValues([]string{"axis", "keepdims"}, splitToSequence, "SplitToSequence")
	defValues([]string{"axis", "new_axis"}, concatFromSequence, "ConcatFromSequence")
	defValues([]string{"body"}, sequenceMap, "SequenceMap")
	defValues([]string{"type"}, optionalOp, "Optional")
	defValues(nil, optionalHasElement, "OptionalHasElement")
	defValues(nil, optionalGetElement, "OptionalGetElement")
}

// elemType is the ONNX element type of the sequence's tensors.
func (s *Sequence) elemType() elemType {
	if s.elem != 0 {
		return s.elem
	}
	return naturalType(s.DType)
}

// with is a new sequence of s's type holding tensors.
func (s *Sequence) with(tensors []*core.Tensor) *Sequence {
	return &Sequence{DType: s.DType, elem: s.elem, Tensors: tensors}
}

// newSequence is a sequence of tensors of element type et (held widened
// when narrow).
func newSequence(et elemType, tensors []*core.Tensor) (*Sequence, error) {
	dt, err := heldType(int32(et))
	if err != nil {
		return nil, err
	}
	s := &Sequence{DType: dt, Tensors: tensors}
	if narrowOf(et) != nil {
		s.elem = et
	}
	return s, nil
}

func sequenceEmpty(c *ctx) ([]Value, error) {
	s, err := newSequence(elemType(c.attrInt("dtype", int64(pb.TensorProto_FLOAT))), nil)
	if err != nil {
		return nil, fmt.Errorf("attribute \"dtype\": %w", err)
	}
	return []Value{s}, nil
}

func sequenceConstruct(c *ctx) ([]Value, error) {
	if len(c.vals) == 0 {
		c.fail("SequenceConstruct takes at least one tensor")
		return nil, nil
	}
	tensors := make([]*core.Tensor, len(c.vals))
	for i := range tensors {
		tensors[i] = c.in(i)
		if c.err != nil {
			return nil, nil
		}
		if et, first := c.inType(i), c.inType(0); et != first {
			c.fail("input %d (%q) is %s, input 0 (%q) is %s: a sequence's tensors share one element type",
				i, c.n.inputs[i], typeName(et), c.n.inputs[0], typeName(first))
			return nil, nil
		}
	}
	s, err := newSequence(c.inType(0), tensors)
	return []Value{s}, err
}

// position reads the position input i against a sequence of n tensors:
// -n to n-1, or to n where inserting (at the end); def when absent.
func (c *ctx) position(i, n int, def int, inserting bool) (int, bool) {
	v, ok := c.ints(i)
	if !ok {
		return def, c.err == nil
	}
	if len(v) != 1 {
		c.fail("position (input %d) has %d values, want 1", i, len(v))
		return 0, false
	}
	hi := int64(n) - 1
	if inserting {
		hi = int64(n)
	}
	p := v[0]
	if hi < 0 {
		c.fail("position %d names no tensor: the sequence %q is empty", p, c.n.inputs[0])
		return 0, false
	}
	if p < -int64(n) || p > hi {
		c.fail("position %d is out of range for a sequence of %d tensors (valid: %d to %d)", p, n, -n, hi)
		return 0, false
	}
	if p < 0 {
		p += int64(n)
	}
	return int(p), true
}

// sameElem fails unless tensor input i has the sequence's element type.
func (c *ctx) sameElem(s *Sequence, i int) bool {
	if s.DType == core.Invalid { // a caller's sequence without a declared type
		return true
	}
	if et := c.inType(i); et != s.elemType() {
		c.fail("input %d (%q) is %s, the sequence holds %s", i, c.n.inputs[i], typeName(et), typeName(s.elemType()))
		return false
	}
	return true
}

func sequenceInsert(c *ctx) ([]Value, error) {
	s, t := c.seq(0), c.in(1)
	if c.err != nil || !c.sameElem(s, 1) {
		return nil, nil
	}
	at, ok := c.position(2, len(s.Tensors), len(s.Tensors), true)
	if !ok {
		return nil, nil
	}
	out := s.with(slices.Insert(slices.Clone(s.Tensors), at, t))
	if out.DType == core.Invalid {
		out.DType = t.DType()
	}
	return []Value{out}, nil
}

func sequenceErase(c *ctx) ([]Value, error) {
	s := c.seq(0)
	if c.err != nil {
		return nil, nil
	}
	if len(s.Tensors) == 0 {
		c.fail("the sequence %q is empty: there is no tensor to erase", c.n.inputs[0])
		return nil, nil
	}
	at, ok := c.position(1, len(s.Tensors), len(s.Tensors)-1, false)
	if !ok {
		return nil, nil
	}
	return []Value{s.with(slices.Delete(slices.Clone(s.Tensors), at, at+1))}, nil
}

func sequenceAt(c *ctx) ([]Value, error) {
	s := c.seq(0)
	if c.err != nil {
		return nil, nil
	}
	if c.opt(1) == nil {
		c.fail("input 1 (the position) is required")
		return nil, nil
	}
	at, ok := c.position(1, len(s.Tensors), 0, false)
	if !ok {
		return nil, nil
	}
	c.setType(0, s.elem)
	return []Value{s.Tensors[at]}, nil
}

func sequenceLength(c *ctx) ([]Value, error) {
	s := c.seq(0)
	if c.err != nil {
		return nil, nil
	}
	n := []int64{int64(len(s.Tensors))}
	t := core.FromSlice(n, core.Shape{}, c.m.dev)
	c.run.ints[t] = n // a loop's trip count, often: read without a download
	return []Value{t}, nil
}

// splitToSequence is SplitToSequence: pieces of the split input's sizes
// (a scalar: pieces that long, the last what is left; a list: one piece
// each), or without it pieces of 1, dropping the axis unless keepdims.
func splitToSequence(c *ctx) ([]Value, error) {
	x := c.in(0)
	if c.err != nil {
		return nil, nil
	}
	ax := c.axis(c.attrInt("axis", 0), x.Rank())
	if c.err != nil {
		return nil, nil
	}
	n := x.Shape()[ax]
	squeeze := false
	var sizes []int
	if v, ok := c.ints(1); ok {
		var err error
		if sizes, err = splitSizes(v, c.opt(1).Rank(), n); err != nil {
			c.fail("split (input 1): %v (axis %d of shape %v)", err, ax, x.Shape())
			return nil, nil
		}
	} else {
		if c.err != nil {
			return nil, nil
		}
		sizes = make([]int, n)
		for i := range sizes {
			sizes[i] = 1
		}
		squeeze = c.attrInt("keepdims", 1) == 0
	}
	var pieces []*core.Tensor
	if len(sizes) > 0 {
		var err error
		if pieces, err = core.Call("split", []*core.Tensor{x}, core.Attrs{"sizes": sizes, "axis": ax}); err != nil {
			return nil, err
		}
	}
	if squeeze {
		for i, p := range pieces {
			pieces[i] = call("squeeze", core.Attrs{"axes": []int{ax}}, p)
		}
	}
	s, err := newSequence(c.inType(0), pieces)
	return []Value{s}, err
}

// splitSizes turns SplitToSequence's split input (a scalar or a list) into
// the pieces' sizes along an axis of length n.
func splitSizes(split []int64, rank, n int) ([]int, error) {
	switch rank {
	case 0:
		if len(split) != 1 || split[0] <= 0 {
			return nil, fmt.Errorf("a scalar split is %v, want a positive length", split)
		}
		var sizes []int
		for left := n; left > 0; left -= int(split[0]) {
			sizes = append(sizes, min(left, int(split[0])))
		}
		return sizes, nil
	case 1:
		sizes := make([]int, len(split))
		sum := 0
		for i, s := range split {
			if s < 0 || s > int64(n) {
				return nil, fmt.Errorf("length %d of %v is out of range", s, split)
			}
			sizes[i] = int(s)
			sum += int(s)
		}
		if sum != n {
			return nil, fmt.Errorf("the lengths %v add up to %d, not %d", split, sum, n)
		}
		return sizes, nil
	}
	return nil, fmt.Errorf("has rank %d, want a scalar or a list", rank)
}

// concatFromSequence is ConcatFromSequence: the tensors concatenated along
// axis, or stacked along a new axis there when new_axis is set.
func concatFromSequence(c *ctx) ([]Value, error) {
	s := c.seq(0)
	if c.err != nil {
		return nil, nil
	}
	if !c.has("axis") {
		c.fail("attribute \"axis\" is required")
		return nil, nil
	}
	if len(s.Tensors) == 0 {
		c.fail("the sequence %q is empty: there is nothing to concatenate", c.n.inputs[0])
		return nil, nil
	}
	first := s.Tensors[0]
	stack := c.attrInt("new_axis", 0) == 1
	rank := first.Rank()
	if stack {
		rank++
	}
	ax := c.axis(c.attrInt("axis", 0), rank)
	if c.err != nil {
		return nil, nil
	}
	for i, t := range s.Tensors {
		if !fitsBeside(t.Shape(), first.Shape(), ax, stack) {
			what := "concatenate along axis"
			if stack {
				what = "stack on a new axis"
			}
			c.fail("tensor %d of the sequence has shape %v and tensor 0 %v: they do not %s %d", i, t.Shape(), first.Shape(), what, ax)
			return nil, nil
		}
	}
	c.setType(0, s.elem)
	if stack {
		return []Value{call("stack", core.Attrs{"axis": ax}, s.Tensors...)}, nil
	}
	return []Value{call("concat", core.Attrs{"axis": ax}, s.Tensors...)}, nil
}

// fitsBeside reports whether a tensor of shape a concatenates with one of
// shape b along axis (all dims but that one equal), or stacks with it.
func fitsBeside(a, b core.Shape, axis int, stack bool) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] && (stack || i != axis) {
			return false
		}
	}
	return true
}

// sequenceMap is SequenceMap: the body runs once per position of the
// first input, on that position's tensor of each sequence input and on
// each tensor input whole; each body output makes one output sequence.
func sequenceMap(c *ctx) ([]Value, error) {
	body := c.n.branches["body"]
	if body == nil {
		c.fail("attribute \"body\" is missing")
		return nil, nil
	}
	first := c.seq(0)
	if c.err != nil {
		return nil, nil
	}
	if len(body.inputs) != len(c.vals) {
		c.fail("the body takes %d inputs, the node gives %d", len(body.inputs), len(c.vals))
		return nil, nil
	}
	n := len(first.Tensors)
	for i, v := range c.vals {
		switch v := v.(type) {
		case *Sequence:
			if len(v.Tensors) != n {
				c.fail("input %d (%q) is a sequence of %d tensors, input 0 (%q) of %d", i, c.n.inputs[i], len(v.Tensors), c.n.inputs[0], n)
				return nil, nil
			}
		case *core.Tensor:
		default:
			c.fail("input %d (%q) is %s, want a sequence or a tensor", i, c.n.inputs[i], describe(v))
			return nil, nil
		}
	}
	collected := make([][]*core.Tensor, len(body.outputs))
	types := make([]elemType, len(body.outputs))
	for k, info := range body.outInfo { // what an empty result holds
		if types[k] = info.elem; types[k] == 0 {
			types[k] = naturalType(info.DType)
		}
	}
	for pos := range n {
		ins := make([]Value, len(c.vals))
		inTypes := make([]elemType, len(c.vals))
		for i, v := range c.vals {
			if s, ok := v.(*Sequence); ok {
				ins[i], inTypes[i] = s.Tensors[pos], s.elem
			} else {
				ins[i], inTypes[i] = v, c.inType(i)
			}
		}
		outs, err := body.runWith(c.m, c.run, ins, inTypes)
		if err != nil {
			return nil, fmt.Errorf("position %d: %w", pos, err)
		}
		for k, v := range outs {
			t, ok := v.(*core.Tensor)
			if !ok {
				c.fail("position %d: body output %q is %s, want a tensor", pos, body.outputs[k], describe(v))
				return nil, nil
			}
			collected[k] = append(collected[k], t)
			types[k] = c.valueType(body.outputs[k], t)
		}
	}
	res := make([]Value, len(collected))
	for k, list := range collected {
		if types[k] == 0 {
			c.fail("body output %q declares no element type and the sequence is empty", body.outputs[k])
			return nil, nil
		}
		s, err := newSequence(types[k], list)
		if err != nil {
			return nil, fmt.Errorf("body output %q: %w", body.outputs[k], err)
		}
		res[k] = s
	}
	return res, nil
}

// optionalOp is Optional: the input wrapped, or without one an empty
// optional of the type attribute's type.
func optionalOp(c *ctx) ([]Value, error) {
	switch v := c.value(0).(type) {
	case *core.Tensor:
		et := c.inType(0)
		if narrowOf(et) == nil {
			et = 0
		}
		return []Value{&Optional{Value: v, elem: et}}, nil
	case *Sequence:
		return []Value{&Optional{Value: v}}, nil
	case nil:
		a := c.attr("type", pb.AttributeProto_TYPE_PROTO)
		if a == nil {
			c.fail("an Optional without an input needs the \"type\" attribute")
			return nil, nil
		}
		if _, kind, err := typeOf(a.GetTp()); err != nil || (kind != KindTensor && kind != KindSequence) {
			c.fail("attribute \"type\" is %s: want a tensor or a sequence of tensors", typeWord(a.GetTp()))
			return nil, nil
		}
		return []Value{&Optional{}}, nil
	default:
		c.fail("input 0 (%q) is %s: an optional holds a tensor or a sequence", c.n.inputs[0], describe(v))
		return nil, nil
	}
}

// optionalHasElement is OptionalHasElement: false for an empty optional
// or no input, true for a full one or a tensor or sequence (opset 18).
func optionalHasElement(c *ctx) ([]Value, error) {
	has := false
	switch v := c.value(0).(type) {
	case *Optional:
		has = v.Value != nil
	case nil:
	default:
		has = true
	}
	return []Value{core.FromSlice([]bool{has}, core.Shape{}, c.m.dev)}, nil
}

// optionalGetElement is OptionalGetElement: what the optional holds (an
// empty one is an error), or a tensor or sequence itself (opset 18).
func optionalGetElement(c *ctx) ([]Value, error) {
	switch v := c.value(0).(type) {
	case *Optional:
		if v.Value == nil {
			c.fail("input 0 (%q) is an empty optional (None): there is no element to get", c.n.inputs[0])
			return nil, nil
		}
		c.setType(0, v.elem)
		return []Value{v.Value}, nil
	case nil:
		c.fail("input 0 (an optional) is required")
		return nil, nil
	default:
		return []Value{v}, nil
	}
}
