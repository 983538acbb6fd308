package plugins

import (
	"encoding/binary"
	"math"
)

// A tiny WebAssembly binary emitter, so the tests need no compiler: enough
// of the format (types, imports, functions, one memory, globals, exports,
// code, data) to hand-assemble plugin modules, good and hostile.

const (
	tI32 byte = 0x7f
	tI64 byte = 0x7e
	tF32 byte = 0x7d
)

// Opcodes used by the fixtures.
const (
	opUnreachable = 0x00
	opBlock       = 0x02
	opLoop        = 0x03
	opIf          = 0x04
	opEnd         = 0x0b
	opBr          = 0x0c
	opBrIf        = 0x0d
	opReturn      = 0x0f
	opCall        = 0x10
	opDrop        = 0x1a
	opSelect      = 0x1b
	opLocalGet    = 0x20
	opLocalSet    = 0x21
	opGlobalGet   = 0x23
	opGlobalSet   = 0x24
	opI32Load     = 0x28
	opF32Load     = 0x2a
	opI32Load8U   = 0x2d
	opI32Store    = 0x36
	opF32Store    = 0x38
	opI32Store8   = 0x3a
	opMemorySize  = 0x3f
	opMemoryGrow  = 0x40
	opI32Const    = 0x41
	opI64Const    = 0x42
	opF32Const    = 0x43
	opI32Eq       = 0x46
	opI32LtU      = 0x49
	opI32GtU      = 0x4b
	opI32GeU      = 0x4f
	opI32Add      = 0x6a
	opI32Sub      = 0x6b
	opI32Mul      = 0x6c
	opI32And      = 0x71
	opI32Shl      = 0x74
	opI32ShrU     = 0x76
	opF32Add      = 0x92
	blockEmpty    = 0x40
)

func uleb(v uint64) []byte {
	var out []byte
	for {
		c := byte(v & 0x7f)
		v >>= 7
		if v != 0 {
			c |= 0x80
		}
		out = append(out, c)
		if v == 0 {
			return out
		}
	}
}

func sleb(v int64) []byte {
	var out []byte
	for {
		c := byte(v & 0x7f)
		v >>= 7
		if (v == 0 && c&0x40 == 0) || (v == -1 && c&0x40 != 0) {
			return append(out, c)
		}
		out = append(out, c|0x80)
	}
}

// code concatenates instruction parts: bytes, ints (as one opcode byte) and
// byte slices.
func code(parts ...any) []byte {
	var out []byte
	for _, p := range parts {
		switch x := p.(type) {
		case byte:
			out = append(out, x)
		case int:
			out = append(out, byte(x))
		case []byte:
			out = append(out, x...)
		default:
			panic("code: bad part")
		}
	}
	return out
}

func i32c(v int32) []byte      { return append([]byte{opI32Const}, sleb(int64(v))...) }
func i64c(v int64) []byte      { return append([]byte{opI64Const}, sleb(v)...) }
func lget(i int) []byte        { return []byte{opLocalGet, byte(i)} }
func lset(i int) []byte        { return []byte{opLocalSet, byte(i)} }
func gget(i int) []byte        { return []byte{opGlobalGet, byte(i)} }
func gset(i int) []byte        { return []byte{opGlobalSet, byte(i)} }
func call(f int) []byte        { return append([]byte{opCall}, uleb(uint64(f))...) }
func load32(off uint32) []byte { return append([]byte{opI32Load, 2}, uleb(uint64(off))...) }
func f32c(v float32) []byte {
	b := []byte{opF32Const, 0, 0, 0, 0}
	binary.LittleEndian.PutUint32(b[1:], math.Float32bits(v))
	return b
}

// packed is (ptr << 32) | len, the ABI's way to return a byte range.
func packed(ptr, n uint32) int64 { return int64(uint64(ptr)<<32 | uint64(n)) }

type wasmFunc struct {
	export          string
	params, results []byte
	locals          []byte
	body            []byte // without the final end
}

type wasmImportSpec struct {
	module, name    string
	params, results []byte
	kind            byte // 0 function, 2 memory
}

type wasmData struct {
	offset uint32
	bytes  []byte
}

type wasmModule struct {
	imports    []wasmImportSpec
	memMin     uint32
	memMax     int64 // -1: none
	memExport  string
	noMemory   bool    // the memory is imported
	globals    []int32 // mutable i32 globals and their initial values
	funcs      []wasmFunc
	data       []wasmData
	rawAppend  []byte // appended after everything (for malformed modules)
	funcImport int    // number of imported functions (set by encode)
}

func section(id byte, payload []byte) []byte {
	return append(append([]byte{id}, uleb(uint64(len(payload)))...), payload...)
}

func vec(n int, items []byte) []byte { return append(uleb(uint64(n)), items...) }

func name(s string) []byte { return append(uleb(uint64(len(s))), s...) }

func funcType(params, results []byte) []byte {
	b := []byte{0x60}
	b = append(b, vec(len(params), params)...)
	return append(b, vec(len(results), results)...)
}

func (m *wasmModule) encode() []byte {
	out := []byte("\x00asm\x01\x00\x00\x00")
	m.funcImport = 0
	var types, imps, fns, exps, codes []byte
	ntypes, nimps, nexps := 0, 0, 0
	for _, im := range m.imports {
		imps = append(imps, name(im.module)...)
		imps = append(imps, name(im.name)...)
		if im.kind == 2 {
			imps = append(imps, 2, 0)
			imps = append(imps, uleb(1)...)
		} else {
			types = append(types, funcType(im.params, im.results)...)
			imps = append(imps, 0)
			imps = append(imps, uleb(uint64(ntypes))...)
			ntypes++
			m.funcImport++
		}
		nimps++
	}
	for i, f := range m.funcs {
		types = append(types, funcType(f.params, f.results)...)
		fns = append(fns, uleb(uint64(ntypes))...)
		ntypes++
		if f.export != "" {
			exps = append(exps, name(f.export)...)
			exps = append(exps, 0)
			exps = append(exps, uleb(uint64(m.funcImport+i))...)
			nexps++
		}
		var body []byte
		body = append(body, vec(len(f.locals), nil)...)
		for _, l := range f.locals {
			body = append(body, 1, l)
		}
		body = append(body, f.body...)
		body = append(body, opEnd)
		codes = append(codes, vec(len(body), body)...)
	}
	if m.memExport != "" {
		exps = append(exps, name(m.memExport)...)
		exps = append(exps, 2, 0)
		nexps++
	}
	out = append(out, section(1, vec(ntypes, types))...)
	if nimps > 0 {
		out = append(out, section(2, vec(nimps, imps))...)
	}
	out = append(out, section(3, vec(len(m.funcs), fns))...)
	mem := []byte{0}
	if m.memMax >= 0 {
		mem[0] = 1
	}
	mem = append(mem, uleb(uint64(m.memMin))...)
	if m.memMax >= 0 {
		mem = append(mem, uleb(uint64(m.memMax))...)
	}
	if !m.noMemory {
		out = append(out, section(5, vec(1, mem))...)
	}
	if len(m.globals) > 0 {
		var gs []byte
		for _, g := range m.globals {
			gs = append(gs, tI32, 1)
			gs = append(gs, i32c(g)...)
			gs = append(gs, opEnd)
		}
		out = append(out, section(6, vec(len(m.globals), gs))...)
	}
	out = append(out, section(7, vec(nexps, exps))...)
	out = append(out, section(10, vec(len(m.funcs), codes))...)
	if len(m.data) > 0 {
		var ds []byte
		for _, d := range m.data {
			ds = append(ds, 0)
			ds = append(ds, i32c(int32(d.offset))...)
			ds = append(ds, opEnd)
			ds = append(ds, vec(len(d.bytes), d.bytes)...)
		}
		out = append(out, section(11, vec(len(m.data), ds))...)
	}
	return append(out, m.rawAppend...)
}
