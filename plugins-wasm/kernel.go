package plugins

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"

	"github.com/webtensor/webtensor/core"
)

// From a manifest op to a registry op: shape and dtype inference from the
// output rules (asking wt_infer where a rule says "infer"), and the CPU
// kernel that writes the call record of ABI.md into the module's memory.

// compileBackward turns a manifest's backward expressions into a backward
// rule. It is a variable so a build (or a test) can swap the compiler.
var compileBackward = BackwardFromExpressions

// abiDType is the dtype code of the call record (ABI.md, "The call record").
var abiDType = [...]uint32{core.F32: 1, core.F16: 2, core.BF16: 3, core.F64: 4, core.I64: 5, core.I32: 6,
	core.U32: 7, core.I16: 8, core.I8: 9, core.U8: 10, core.Bool: 11}

// Sizes of the call record (ABI.md, "The call record").
const (
	recordHeader = 16
	tensorRecord = 48
)

func opDef(op *opSpec, b *opBinding) (*core.OpDef, error) {
	def := &core.OpDef{
		Name:     op.name,
		Category: "plugin",
		Doc:      op.doc,
		Inputs:   op.inputs,
		Attrs:    op.attrs,
		Infer:    func(in []core.Meta, a core.Attrs) ([]core.Meta, error) { return infer(op.name, b, in, a) },
		WGSL:     op.wgsl,
	}
	for _, o := range op.outputs {
		def.Outputs = append(def.Outputs, o.name)
	}
	if len(op.backward) > 0 {
		if compileBackward == nil {
			return nil, fmt.Errorf("op %s has backward expressions but this build cannot compile them", op.name)
		}
		bw, err := compileBackward(def, op.backward)
		if err != nil {
			return nil, err // it names the op and the input
		}
		def.Backward = bw
	}
	return def, nil
}

// infer applies the output rules of whichever plugin serves the op now.
func infer(name string, b *opBinding, in []core.Meta, a core.Attrs) ([]core.Meta, error) {
	bo, err := b.current(name)
	if err != nil {
		return nil, err
	}
	op := bo.op
	var answer []inferAnswer
	if op.needsInfer {
		if answer, err = bo.plugin.askInfer(op, in, a); err != nil {
			return nil, err
		}
	}
	out := make([]core.Meta, len(op.outputs))
	for i, r := range op.outputs {
		m := &out[i]
		m.DType = r.dtype
		if r.dtypeInput >= 0 {
			if m.DType = in[r.dtypeInput].DType; m.DType == core.Invalid {
				return nil, fmt.Errorf("output %s takes the dtype of input %d (%s), which is absent",
					r.name, r.dtypeInput, op.inputs[r.dtypeInput].Name)
			}
		}
		switch r.shape {
		case shapeOfInput:
			if in[r.shapeInput].DType == core.Invalid {
				return nil, fmt.Errorf("output %s takes the shape of input %d (%s), which is absent",
					r.name, r.shapeInput, op.inputs[r.shapeInput].Name)
			}
			m.Shape = in[r.shapeInput].Shape.Clone()
		case shapeBroadcast:
			var shapes []core.Shape
			for _, x := range in {
				if x.DType != core.Invalid {
					shapes = append(shapes, x.Shape)
				}
			}
			if m.Shape, err = core.BroadcastShapes(shapes...); err != nil {
				return nil, err
			}
		case shapeInfer:
			m.Shape = answer[i].shape
		}
		if answer != nil && answer[i].dtype != core.Invalid && answer[i].dtype != m.DType {
			return nil, fmt.Errorf("plugin %s: wt_infer answered dtype %s for output %s, the manifest's rule gives %s",
				bo.plugin.name, answer[i].dtype, r.name, m.DType)
		}
	}
	return out, nil
}

type inferAnswer struct {
	shape core.Shape
	dtype core.DType
}

type metaJSON struct {
	Shape []int64 `json:"shape"`
	DType string  `json:"dtype"`
}

// askInfer sends ABI.md's wt_infer request and validates the answer: one
// entry per output, each shape at most rank 8 with non-negative dims, small
// enough to fit the module's memory.
func (p *Plugin) askInfer(op *opSpec, in []core.Meta, a core.Attrs) ([]inferAnswer, error) {
	inputs := make([]*metaJSON, len(in))
	for i, m := range in {
		if m.DType == core.Invalid {
			continue // absent optional input: null
		}
		inputs[i] = &metaJSON{Shape: make([]int64, len(m.Shape)), DType: m.DType.String()}
		for j, d := range m.Shape {
			inputs[i].Shape[j] = int64(d)
		}
	}
	attrs, err := attrValues(op.attrs, a)
	if err != nil {
		return nil, err
	}
	req, err := json.Marshal(map[string]any{"op": op.name, "inputs": inputs, "attrs": attrs})
	if err != nil {
		return nil, err
	}
	var raw []byte
	err = p.withInstance(func(inst *instance) error {
		if uint64(len(req)) > inst.limit {
			return fmt.Errorf("wt_infer request of %d bytes exceeds the memory cap", len(req))
		}
		raw, err = inst.exchange("wt_infer", inst.infer, op.index, req, maxManifestBytes, func(msg string) error {
			return fmt.Errorf("wt_infer failed: %s", msg)
		})
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("plugin %s: %w", p.name, err)
	}
	ans, err := parseInferAnswer(raw, len(op.outputs), p.host.cfg.memoryLimit)
	if err != nil {
		return nil, fmt.Errorf("plugin %s: wt_infer: %w", p.name, err)
	}
	return ans, nil
}

func parseInferAnswer(raw []byte, outputs int, limit uint64) ([]inferAnswer, error) {
	var metas []*metaJSON
	if err := decodeStrict(raw, &metas); err != nil {
		return nil, fmt.Errorf("answer is not a JSON list of {\"shape\", \"dtype\"}: %v", err)
	}
	if len(metas) != outputs {
		return nil, fmt.Errorf("answer has %d entries, the op has %d output(s)", len(metas), outputs)
	}
	out := make([]inferAnswer, outputs)
	for i, m := range metas {
		if m == nil || m.Shape == nil {
			return nil, fmt.Errorf("output %d: missing shape", i)
		}
		if len(m.Shape) > maxRank {
			return nil, fmt.Errorf("output %d: rank %d exceeds the ABI's %d", i, len(m.Shape), maxRank)
		}
		elems := uint64(1)
		out[i].shape = make(core.Shape, len(m.Shape))
		for j, d := range m.Shape {
			if d < 0 || uint64(d) > limit {
				return nil, fmt.Errorf("output %d: shape %v has dimension %d, outside [0, %d]", i, m.Shape, d, limit)
			}
			out[i].shape[j] = int(d)
			elems = min(elems*uint64(d), limit+1) // saturate: no overflow
		}
		if elems > limit {
			return nil, fmt.Errorf("output %d: shape %v has more elements than the plugin's %s memory can hold",
				i, m.Shape, byteSize(limit))
		}
		if m.DType != "" {
			d, err := parseDTypeName(m.DType)
			if err != nil {
				return nil, fmt.Errorf("output %d: %v", i, err)
			}
			out[i].dtype = d
		}
	}
	return out, nil
}

// attrValues gives the attributes as JSON values: dtypes by name, and
// non-finite floats refused (JSON has no NaN or infinity).
func attrValues(specs []core.AttrSpec, a core.Attrs) (map[string]any, error) {
	out := make(map[string]any, len(specs))
	for _, s := range specs {
		v := a[s.Name]
		switch x := v.(type) {
		case core.DType:
			v = x.String()
		case float64:
			if math.IsNaN(x) || math.IsInf(x, 0) {
				return nil, fmt.Errorf("attribute %s is %v, which JSON cannot carry to the plugin", s.Name, x)
			}
		case []float64:
			for _, f := range x {
				if math.IsNaN(f) || math.IsInf(f, 0) {
					return nil, fmt.Errorf("attribute %s holds %v, which JSON cannot carry to the plugin", s.Name, f)
				}
			}
		}
		out[s.Name] = v
	}
	return out, nil
}

var emptyObject = []byte("{}")

func attrsJSON(specs []core.AttrSpec, a core.Attrs) ([]byte, error) {
	if len(specs) == 0 {
		return emptyObject, nil
	}
	attrs, err := attrValues(specs, a)
	if err != nil {
		return nil, err
	}
	return json.Marshal(attrs)
}

func cpuKernel(name string, b *opBinding) core.Kernel {
	return func(kc *core.KernelCall) error {
		bo, err := b.current(name)
		if err != nil {
			return err
		}
		if err := bo.plugin.runKernel(bo.op, kc); err != nil {
			return &core.OpError{Op: name, Err: fmt.Errorf("plugin %s: %w", bo.plugin.name, err)}
		}
		return nil
	}
}

// tensorSlot is one tensor of a call: its bytes on the host and where they
// go in the module's memory (an offset into the call block).
type tensorSlot struct {
	t      *core.Tensor // nil for an absent optional input
	host   []byte
	offset uint32
}

func (p *Plugin) runKernel(op *opSpec, kc *core.KernelCall) error {
	attrJSON, err := attrsJSON(op.attrs, kc.Attrs)
	if err != nil {
		return err
	}
	// Gather host bytes before taking the instance: making a strided input
	// contiguous runs an op, which must not wait on this plugin.
	slots := make([]tensorSlot, 0, len(kc.Inputs)+len(kc.Outputs))
	for i, t := range append(kc.Inputs[:len(kc.Inputs):len(kc.Inputs)], kc.Outputs...) {
		if t != nil && (int(t.DType()) >= len(abiDType) || abiDType[t.DType()] == 0) {
			return fmt.Errorf("tensor %d is %s, which plugin ABI version 1 has no code for (it has f32 f16 bf16 f64 "+
				"i64 i32 u32 i16 i8 u8 bool): cast it before calling %s", i, t.DType(), op.name)
		}
	}
	for i, t := range kc.Inputs {
		s := tensorSlot{t: t}
		if t != nil {
			if s.host, err = contiguousBytes(t); err != nil {
				return fmt.Errorf("input %d: %v", i, err)
			}
		}
		slots = append(slots, s)
	}
	for i, t := range kc.Outputs {
		hb, ok := storageBytes(t)
		if !ok {
			return fmt.Errorf("output %d is not contiguous host memory", i)
		}
		slots = append(slots, tensorSlot{t: t, host: hb})
	}
	total, attrsOff, err := layout(slots, len(attrJSON), p.host.cfg.memoryLimit)
	if err != nil {
		return err
	}
	nIn := len(kc.Inputs)
	return p.withInstance(func(inst *instance) error {
		base, err := inst.ensureScratch(total)
		if err != nil {
			return err
		}
		block, err := inst.view("call block", base, total)
		if err != nil {
			return err
		}
		writeRecord(block, base, slots, nIn, attrsOff, attrJSON)
		for i, s := range slots {
			dst := block[s.offset : s.offset+uint32(len(s.host))]
			if i < nIn {
				copy(dst, s.host)
			} else {
				clear(dst)
			}
		}
		rc, err := inst.call("wt_kernel", inst.kernel, uint64(op.index), uint64(base))
		if err != nil {
			return err
		}
		if int32(rc) != 0 {
			msg, err := inst.errorMessage()
			if err != nil {
				return err
			}
			return fmt.Errorf("wt_kernel returned %d: %s", int32(rc), msg)
		}
		if block, err = inst.view("call block", base, total); err != nil { // memory may have grown
			return err
		}
		for _, s := range slots[nIn:] {
			copy(s.host, block[s.offset:])
		}
		return nil
	})
}

// layout places the call record, the attributes and every tensor, each
// 8-byte aligned, in one block, and refuses a call the memory cap cannot hold.
func layout(slots []tensorSlot, attrsLen int, limit uint64) (total, attrsOff uint32, err error) {
	align := func(n uint64) uint64 { return (n + 7) &^ 7 }
	end := uint64(recordHeader + tensorRecord*len(slots))
	attrsOff = uint32(end)
	end = align(end + uint64(attrsLen))
	for i := range slots {
		s := &slots[i]
		if s.t != nil {
			if err := checkABIShape(s.t.Meta().Shape); err != nil {
				return 0, 0, err
			}
		}
		if end > limit {
			break
		}
		s.offset = uint32(end)
		end = align(end + uint64(len(s.host)))
	}
	if end > limit || end > math.MaxUint32 {
		return 0, 0, fmt.Errorf("the call needs %d bytes of plugin memory, more than its %s cap", end, byteSize(limit))
	}
	return uint32(end), attrsOff, nil
}

func checkABIShape(shape core.Shape) error {
	if len(shape) > maxRank {
		return fmt.Errorf("a tensor of rank %d exceeds the ABI's %d dimensions", len(shape), maxRank)
	}
	for _, d := range shape {
		if uint64(d) > math.MaxUint32 {
			return fmt.Errorf("dimension %d does not fit the ABI's u32", d)
		}
	}
	return nil
}

// writeRecord writes ABI.md's call record at the start of block (which sits
// at base in the module's memory).
func writeRecord(block []byte, base uint32, slots []tensorSlot, nIn int, attrsOff uint32, attrJSON []byte) {
	le := binary.LittleEndian
	le.PutUint32(block[0:], uint32(nIn))
	le.PutUint32(block[4:], uint32(len(slots)-nIn))
	le.PutUint32(block[8:], base+attrsOff)
	le.PutUint32(block[12:], uint32(len(attrJSON)))
	copy(block[attrsOff:], attrJSON)
	for i, s := range slots {
		r := block[recordHeader+tensorRecord*i : recordHeader+tensorRecord*(i+1)]
		clear(r)
		if s.t == nil {
			continue // absent optional input: data_ptr 0, ndim 0
		}
		le.PutUint32(r[0:], base+s.offset)
		le.PutUint32(r[4:], uint32(len(s.host)))
		le.PutUint32(r[8:], abiDType[s.t.DType()])
		shape := s.t.Meta().Shape // read-only: no clone
		le.PutUint32(r[12:], uint32(len(shape)))
		for j, d := range shape {
			le.PutUint32(r[16+4*j:], uint32(d))
		}
	}
}

// storageBytes is the tensor's elements in its host storage, when it is
// contiguous CPU memory.
func storageBytes(t *core.Tensor) ([]byte, bool) {
	hs, ok := t.Storage().(core.HostStorage)
	if !ok || !t.IsContiguous() {
		return nil, false
	}
	h, size := hs.Host(), t.DType().Size()
	lo, n := t.Offset()*size, t.Numel()*size
	if h == nil || lo < 0 || lo+n > len(h) {
		return nil, false
	}
	return h[lo : lo+n], true
}

// contiguousBytes is the tensor's elements in row-major order: its storage
// when that is already the layout, a copy otherwise.
func contiguousBytes(t *core.Tensor) ([]byte, error) {
	if b, ok := storageBytes(t); ok {
		return b, nil
	}
	return t.Bytes()
}
