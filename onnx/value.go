package onnx

import (
	"fmt"

	"github.com/webtensor/webtensor/core"
	pb "github.com/webtensor/webtensor/onnx/internal/onnxpb"
)

// Value is a value of one of the ONNX types the importer runs: a
// *core.Tensor, a *Strings (a string tensor), a *Sequence or an *Optional
// (as database/sql's driver.Value lists the types it may hold). String
// tensors, sequences and optionals are the importer's own: string
// tensors live on the host, sequences and optionals hold tensors, and the
// tensor work on them (split, concatenate, stack) is registry ops, so it
// runs on every device.
type Value any

// Sequence is an ONNX sequence: tensors of one element type, in order.
// An empty sequence still has its element type. The operators never
// change a Sequence: each returns a new one (tensors are shared).
type Sequence struct {
	DType   core.DType
	Tensors []*core.Tensor

	elem elemType // the narrow ONNX type the tensors hold (UINT16 in i32, ...), 0 when none
}

// Optional is an ONNX optional: None (Value nil) or one *core.Tensor or
// *Sequence.
type Optional struct {
	Value Value

	elem elemType // the narrow type of a tensor held, 0 when none
}

// Kind is what a graph input or output is. ValueInfo's DType, Narrow and
// Dims describe the tensors inside: a sequence's elements, an optional's
// content.
type Kind uint8

const (
	KindTensor           Kind = iota // a *core.Tensor
	KindSequence                     // a *Sequence
	KindOptionalTensor               // an *Optional holding a tensor or None
	KindOptionalSequence             // an *Optional holding a sequence or None
	KindStrings                      // a *Strings: a tensor of ONNX's STRING type, held on the host
)

func (k Kind) String() string {
	switch k {
	case KindTensor:
		return "a tensor"
	case KindSequence:
		return "a sequence of tensors"
	case KindOptionalTensor:
		return "an optional tensor"
	case KindOptionalSequence:
		return "an optional sequence of tensors"
	case KindStrings:
		return "a string tensor"
	}
	return fmt.Sprintf("Kind(%d)", uint8(k))
}

// describe says what a run-time value is, for errors.
func describe(v Value) string {
	switch v := v.(type) {
	case nil:
		return "absent"
	case *core.Tensor:
		if v == nil {
			return "a nil tensor"
		}
		return fmt.Sprintf("a %s tensor of shape %v", v.DType(), v.Shape())
	case *Strings:
		if v == nil {
			return "a nil string tensor"
		}
		return fmt.Sprintf("a string tensor of shape %v", v.Shape)
	case *Sequence:
		if v == nil {
			return "a nil sequence"
		}
		return fmt.Sprintf("a sequence of %d %s tensors", len(v.Tensors), v.DType)
	case *Optional:
		switch {
		case v == nil:
			return "a nil optional"
		case v.Value == nil:
			return "an empty optional (None)"
		}
		return "an optional holding " + describe(v.Value)
	}
	return fmt.Sprintf("a %T, which is not an ONNX value", v)
}

// typeOf unwraps a TypeProto to the tensor type inside and the kind
// around it. Maps, sparse tensors and sequences of anything but tensors
// are refused.
func typeOf(tp *pb.TypeProto) (*pb.TypeProto_Tensor, Kind, error) {
	switch {
	case tp.GetTensorType() != nil:
		return tp.GetTensorType(), KindTensor, nil
	case tp.GetSequenceType() != nil:
		if tt := tp.GetSequenceType().GetElemType().GetTensorType(); tt != nil {
			return tt, KindSequence, nil
		}
		return nil, 0, fmt.Errorf("a sequence of %s is not supported (only sequences of tensors)", typeWord(tp.GetSequenceType().GetElemType()))
	case tp.GetOptionalType() != nil:
		inner := tp.GetOptionalType().GetElemType()
		if tt := inner.GetTensorType(); tt != nil {
			return tt, KindOptionalTensor, nil
		}
		if tt := inner.GetSequenceType().GetElemType().GetTensorType(); tt != nil {
			return tt, KindOptionalSequence, nil
		}
		return nil, 0, fmt.Errorf("an optional %s is not supported (only optional tensors and sequences of tensors)", typeWord(inner))
	}
	return nil, 0, fmt.Errorf("%s values are not supported (only tensors, sequences of tensors and optionals of those)", typeWord(tp))
}

// typeWord names a TypeProto's kind for errors.
func typeWord(tp *pb.TypeProto) string {
	switch {
	case tp.GetTensorType() != nil:
		return "tensor"
	case tp.GetSequenceType() != nil:
		return "sequence"
	case tp.GetMapType() != nil:
		return "map"
	case tp.GetOptionalType() != nil:
		return "optional"
	case tp.GetSparseTensorType() != nil:
		return "sparse tensor"
	case tp.GetOpaqueType() != nil:
		return "opaque"
	}
	return "untyped"
}

// RunValues is Run for models whose inputs or outputs include string
// tensors, sequences or optionals (Kind): each input is a *core.Tensor, a
// *Strings, a *Sequence or an *Optional as its ValueInfo's Kind says, and
// so is each output. An initializer a caller overrides is a *core.Tensor,
// or a *Strings where the initializer is a string tensor.
func (m *Model) RunValues(inputs map[string]Value) (map[string]Value, error) {
	ordered := make([]Value, len(m.Inputs))
	for i, in := range m.Inputs {
		ordered[i] = inputs[in.Name]
	}
	named := map[string]Value{}
	for name, v := range inputs {
		if !m.isInput(name) {
			return nil, fmt.Errorf("onnx: the model has no input %q (inputs: %s)", name, m.inputNames())
		}
		if !m.defaults[name] {
			continue
		}
		if _, isStrings := m.strConsts[name]; isStrings {
			s, ok := v.(*Strings)
			if !ok || s == nil {
				return nil, fmt.Errorf("onnx: input %q overrides an initializer, a string tensor; got %s", name, describe(v))
			}
			named[name] = s
			continue
		}
		t, ok := v.(*core.Tensor)
		if !ok || t == nil {
			return nil, fmt.Errorf("onnx: input %q overrides an initializer, a tensor; got %s", name, describe(v))
		}
		named[name] = t
	}
	outs, err := m.run(ordered, named)
	if err != nil {
		return nil, err
	}
	res := make(map[string]Value, len(outs))
	for i, o := range m.Outputs {
		res[o.Name] = outs[i]
	}
	return res, nil
}

// tensorsOnly refuses, naming it, an input or output that is not a
// tensor: Run and Call (and so ir.Trace and onnx.run, which runs models
// through Run) carry tensors only.
func (m *Model) tensorsOnly() error {
	for _, list := range []struct {
		what  string
		infos []ValueInfo
	}{{"input", m.Inputs}, {"output", m.Outputs}} {
		for _, info := range list.infos {
			switch info.Kind {
			case KindTensor:
			case KindStrings:
				return fmt.Errorf("onnx: %s %q is %s, which Run, Call and the C ABI (so every SDK) do not carry yet: use Model.RunValues",
					list.what, info.Name, info.Kind)
			default:
				return fmt.Errorf("onnx: %s %q is %s, which Run, Call and onnx.run do not carry: use Model.RunValues (onnx.run_values through the C ABI's wt_call)",
					list.what, info.Name, info.Kind)
			}
		}
	}
	return nil
}

// admit checks a graph input against its declaration and moves it to the
// model's device. Symbolic dims of a sequence's tensors are not bound:
// its tensors may differ in them.
func (m *Model) admit(info ValueInfo, v Value, bound map[string]boundDim) (Value, error) {
	want := info.Kind
	if !info.typed { // undeclared: whatever kind is given
		want = kindOf(v)
	}
	switch v := v.(type) {
	case *core.Tensor:
		if v != nil && want == KindTensor {
			return m.admitTensor(info, v, bound)
		}
	case *Strings:
		if v != nil && want == KindStrings {
			if err := v.valid(); err != nil {
				return nil, err
			}
			return v, info.checkShape(v.Shape, bound)
		}
	case *Sequence:
		if v != nil && want == KindSequence {
			return m.admitSequence(info, v)
		}
	case *Optional:
		if v == nil || (want != KindOptionalTensor && want != KindOptionalSequence) {
			break
		}
		switch inner := v.Value.(type) {
		case nil:
			return v, nil
		case *core.Tensor:
			if inner != nil && want == KindOptionalTensor {
				t, err := m.admitTensor(info, inner, nil)
				return &Optional{Value: t, elem: info.elem}, err
			}
		case *Sequence:
			if inner != nil && want == KindOptionalSequence {
				s, err := m.admitSequence(info, inner)
				return &Optional{Value: s}, err
			}
		}
		return nil, fmt.Errorf("the model declares %s, got %s", want, describe(v))
	}
	if v == nil {
		return nil, fmt.Errorf("is missing")
	}
	return nil, fmt.Errorf("the model declares %s, got %s", want, describe(v))
}

func (m *Model) admitTensor(info ValueInfo, t *core.Tensor, bound map[string]boundDim) (*core.Tensor, error) {
	if err := t.Err(); err != nil {
		return nil, err
	}
	if bound == nil {
		bound = map[string]boundDim{}
	}
	if err := info.check(t, bound); err != nil {
		return nil, err
	}
	if err := checkHeld(t, info.elem); err != nil {
		return nil, err
	}
	return t.To(m.dev), nil
}

func (m *Model) admitSequence(info ValueInfo, s *Sequence) (*Sequence, error) {
	if info.DType != core.Invalid && s.DType != core.Invalid && s.DType != info.DType {
		return nil, fmt.Errorf("a sequence of %s tensors, the model declares %s", s.DType, info.DType)
	}
	// A sequence without a DType takes the declared one, else its first
	// tensor's.
	out := &Sequence{DType: s.DType, elem: info.elem, Tensors: make([]*core.Tensor, len(s.Tensors))}
	if out.DType == core.Invalid {
		out.DType = info.DType
	}
	for i, t := range s.Tensors {
		if t == nil {
			return nil, fmt.Errorf("tensor %d of the sequence is nil", i)
		}
		if out.DType == core.Invalid {
			out.DType = t.DType()
		}
		if t.DType() != out.DType {
			return nil, fmt.Errorf("tensor %d of the sequence is %s, the sequence holds %s", i, t.DType(), out.DType)
		}
		y, err := m.admitTensor(info, t, nil)
		if err != nil {
			return nil, fmt.Errorf("tensor %d of the sequence: %w", i, err)
		}
		out.Tensors[i] = y
	}
	return out, nil
}

// kindOf is the kind of a value (an empty optional counts as an optional
// tensor).
func kindOf(v Value) Kind {
	switch v := v.(type) {
	case *Strings:
		return KindStrings
	case *Sequence:
		return KindSequence
	case *Optional:
		if _, ok := v.Value.(*Sequence); ok {
			return KindOptionalSequence
		}
		return KindOptionalTensor
	}
	return KindTensor
}

// conformsTo reports whether a computed output is of its declared kind
// (an untyped declaration takes anything).
func conformsTo(info ValueInfo, declared bool, v Value) bool {
	if !declared {
		return true
	}
	switch v := v.(type) {
	case *core.Tensor:
		return info.Kind == KindTensor
	case *Strings:
		return info.Kind == KindStrings
	case *Sequence:
		return info.Kind == KindSequence
	case *Optional:
		switch v.Value.(type) {
		case nil:
			return info.Kind == KindOptionalTensor || info.Kind == KindOptionalSequence
		case *core.Tensor:
			return info.Kind == KindOptionalTensor
		case *Sequence:
			return info.Kind == KindOptionalSequence
		}
	}
	return false
}
