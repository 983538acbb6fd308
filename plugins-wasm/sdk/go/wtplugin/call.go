package wtplugin

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
)

// Call is one invocation of an op: its inputs, its outputs (allocated and
// zeroed by the host, filled by the kernel) and its attributes.
type Call struct {
	Op      string
	Inputs  []Tensor
	Outputs []Tensor
	Attrs   Attrs
}

// memory reads n bytes at address addr of the module's linear memory. In a
// plugin it is the memory itself; natively, tests pass a byte slice.
type memory func(addr, n uint32) []byte

const (
	recordHeader = 16
	tensorRecord = 48
	maxDims      = 8
)

// decodeCall reads the call record at addr (layout in ABI.md). Tensor data
// is not copied: Data aliases the host's buffers.
func decodeCall(mem memory, addr uint32) (*Call, error) {
	le := binary.LittleEndian
	head := mem(addr, recordHeader)
	nIn, nOut := le.Uint32(head), le.Uint32(head[4:])
	if nIn > 1024 || nOut > 1024 {
		return nil, fmt.Errorf("call record: %d inputs and %d outputs is not a record", nIn, nOut)
	}
	attrs, err := decodeAttrs(mem(le.Uint32(head[8:]), le.Uint32(head[12:])))
	if err != nil {
		return nil, fmt.Errorf("call record: %v", err)
	}
	c := &Call{Attrs: attrs, Inputs: make([]Tensor, nIn), Outputs: make([]Tensor, nOut)}
	recs := mem(addr+recordHeader, tensorRecord*(nIn+nOut))
	for i := range nIn + nOut {
		r := recs[tensorRecord*i : tensorRecord*(i+1)]
		role, k := "input", i
		if i >= nIn {
			role, k = "output", i-nIn
		}
		ndim := le.Uint32(r[12:])
		if ndim > maxDims {
			return nil, fmt.Errorf("call record: %s %d has %d dims (at most %d)", role, k, ndim, maxDims)
		}
		t := Tensor{DType: DType(le.Uint32(r[8:])), Shape: make([]int, ndim)}
		for d := range t.Shape {
			t.Shape[d] = int(le.Uint32(r[16+4*d:]))
		}
		ptr, nbytes := le.Uint32(r), le.Uint32(r[4:])
		if ptr != 0 {
			if t.DType.Size() == 0 {
				return nil, fmt.Errorf("call record: %s %d has unknown dtype code %d", role, k, t.DType)
			}
			if want := t.Numel() * t.DType.Size(); int(nbytes) != want {
				return nil, fmt.Errorf("call record: %s %d (%s %v) has %d bytes, want %d", role, k, t.DType, t.Shape, nbytes, want)
			}
			t.Data = mem(ptr, nbytes)
		}
		if i < nIn {
			c.Inputs[i] = t
		} else {
			c.Outputs[i-nIn] = t
		}
	}
	return c, nil
}

// runKernel runs op number op on c: attribute defaults first, then the
// kernel, with a panic turned into the call's error.
func runKernel(op int, c *Call) (err error) {
	if op < 0 || op >= len(ops) {
		return fmt.Errorf("%s: no op number %d (the plugin has %d)", pluginName, op, len(ops))
	}
	r := ops[op]
	c.Op = r.op.Name
	if len(c.Inputs) != len(r.op.Inputs) || len(c.Outputs) != len(r.op.Outputs) {
		return fmt.Errorf("%s: takes %d inputs and %d outputs, got %d and %d",
			r.op.Name, len(r.op.Inputs), len(r.op.Outputs), len(c.Inputs), len(c.Outputs))
	}
	c.Attrs = c.Attrs.withDefaults(r.op.Attrs)
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("%s: %v", r.op.Name, p)
		}
	}()
	if err := r.kernel(c); err != nil {
		return fmt.Errorf("%s: %w", r.op.Name, err)
	}
	return nil
}

type inferRequest struct {
	Op     string `json:"op"`
	Inputs []Meta `json:"inputs"`
	Attrs  Attrs  `json:"attrs"`
}

// runInfer answers a wt_infer request (JSON in, JSON out).
func runInfer(op int, req []byte) (answer []byte, err error) {
	if op < 0 || op >= len(ops) {
		return nil, fmt.Errorf("%s: no op number %d (the plugin has %d)", pluginName, op, len(ops))
	}
	r := ops[op]
	if r.op.Infer == nil {
		return nil, fmt.Errorf("%s: has no \"infer\" output", r.op.Name)
	}
	var q inferRequest
	if err := json.Unmarshal(req, &q); err != nil {
		return nil, fmt.Errorf("%s: infer request %q: %v", r.op.Name, req, err)
	}
	metas, err := callInfer(r.op, q.Inputs, q.Attrs)
	if err != nil {
		return nil, err
	}
	return json.Marshal(metas)
}

func callInfer(op Op, in []Meta, a Attrs) (metas []Meta, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("%s: infer: %v", op.Name, p)
		}
	}()
	metas, err = op.Infer(in, a.withDefaults(op.Attrs))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", op.Name, err)
	}
	if len(metas) != len(op.Outputs) {
		return nil, fmt.Errorf("%s: infer gave %d outputs, the op has %d", op.Name, len(metas), len(op.Outputs))
	}
	for i := range metas {
		if metas[i].Shape == nil {
			metas[i].Shape = []int{} // a scalar is [], never null, in the answer
		}
		if metas[i].DType == "" { // the manifest's dtype rule already says it
			metas[i].DType = op.Outputs[i].DType
			if j, err := inputRef(op.Outputs[i].DType, len(in)); err == nil {
				metas[i].DType = in[j].DType
			}
		}
	}
	return metas, nil
}
