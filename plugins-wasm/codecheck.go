package plugins

import (
	"errors"
	"fmt"
)

// A pre-pass over a module's code section, before wazero compiles it.
//
// wazero's optimising compiler spends time that grows with the square of a
// function's control blocks (its SSA passes: loop nesting and dominators).
// Measured on a 2-core EPYC: a function of 10,000 sequential blocks compiles
// in 0.5 s, 40,000 in 6.6 s; 40,000 nested loops or ifs take 32-38 s and
// 100,000 nested blocks (a 300 KB module) take 109 s; the same number of
// plain instructions takes milliseconds. wazero checks the context only
// between functions, so a deadline alone cannot stop one such function: the
// host refuses a function with more control blocks than the limit before
// compiling anything, and the compile deadline bounds the many-functions case.

// DefaultMaxFunctionBlocks bounds the control blocks (block, loop, if, try)
// of one function. The Go toolchain's own runtime, the largest code a plugin
// carries, stays far below it (fewer than 1,100 in any function of the example
// plugins), and a function at the limit compiles in about two seconds.
const DefaultMaxFunctionBlocks = 10_000

// codeStats is what the pre-pass learned of the largest function.
type codeStats struct {
	functions   int
	maxBlocks   int // the most control blocks in one function
	maxBlocksFn int // which function has them (index among the module's own)
	maxDepth    int
	maxDepthFn  int
}

// errCodeMalformed marks code the pre-pass could not decode; wazero would
// refuse it too, but the pre-pass must not let it through uncounted.
var errCodeMalformed = errors.New("malformed module")

// checkCode decodes every function body of wasm and refuses the module when
// one has more than maxBlocks control blocks. It runs in time linear in the
// module's size.
func checkCode(wasm []byte, maxBlocks int) (codeStats, error) {
	var st codeStats
	r := &byteReader{b: wasm}
	if len(wasm) < 8 {
		return st, nil // too short to hold code; wazero names the problem
	}
	r.pos = 8
	for r.pos < len(r.b) {
		id := r.byte()
		size := r.u32()
		end := r.pos + int(size)
		if r.err != nil || end > len(r.b) || end < r.pos {
			return st, fmt.Errorf("%w: section %d at byte %d runs past the end of the module", errCodeMalformed, id, r.pos)
		}
		if id != 10 {
			r.pos = end
			continue
		}
		body := &byteReader{b: r.b[:end], pos: r.pos}
		n := body.u32()
		for i := 0; i < int(n); i++ {
			if body.err != nil || body.pos >= end {
				return st, fmt.Errorf("%w: its code section declares %d functions and ends after %d", errCodeMalformed, n, i)
			}
			blocks, depth, err := checkFunction(body, maxBlocks)
			switch {
			case errors.Is(err, errTooManyBlocks):
				return st, fmt.Errorf("function %d of %d has more than %d control blocks (block, loop, if), "+
					"the host's limit: compiling takes time growing with their square; if the module is trusted, "+
					"raise the limit with plugins.Config.WithMaxFunctionBlocks or %s", i, n, maxBlocks, envMaxBlocks)
			case err != nil:
				return st, fmt.Errorf("%w: function %d of %d: %v", errCodeMalformed, i, n, err)
			}
			st.functions++
			if blocks > st.maxBlocks {
				st.maxBlocks, st.maxBlocksFn = blocks, i
			}
			if depth > st.maxDepth {
				st.maxDepth, st.maxDepthFn = depth, i
			}
		}
		r.pos = end
	}
	return st, nil
}

var errTooManyBlocks = errors.New("too many control blocks")

// checkFunction reads one function body (its size, locals and
// instructions), counting control blocks and their deepest nesting. It stops
// as soon as the count passes maxBlocks.
func checkFunction(r *byteReader, maxBlocks int) (blocks, maxDepth int, err error) {
	size := r.u32()
	end := r.pos + int(size)
	if r.err != nil || end > len(r.b) || end < r.pos {
		return 0, 0, fmt.Errorf("body of %d bytes at byte %d runs past its section", size, r.pos)
	}
	fn := &byteReader{b: r.b[:end], pos: r.pos}
	r.pos = end
	groups := fn.u32()
	for g := uint32(0); g < groups && fn.err == nil; g++ {
		fn.u32()  // count
		fn.byte() // value type
	}
	depth := 1 // the function body is the outermost block
	for fn.pos < end && fn.err == nil {
		at := fn.pos
		if depth == 0 {
			return blocks, maxDepth, fmt.Errorf("byte %d: instructions after the function's end", at)
		}
		op := fn.byte()
		switch op {
		case 0x02, 0x03, 0x04, 0x06: // block, loop, if, try: a block type
			fn.leb()
			blocks++
			depth++
			if blocks > maxBlocks {
				return blocks, maxDepth, errTooManyBlocks
			}
			maxDepth = max(maxDepth, depth-1)
		case 0x1f: // try_table: a block type and its catch clauses
			fn.leb()
			for c, n := uint32(0), fn.u32(); c < n && fn.err == nil; c++ {
				if kind := fn.byte(); kind == 0x00 || kind == 0x01 { // catch, catch_ref: a tag
					fn.u32()
				}
				fn.u32() // label
			}
			blocks++
			depth++
			if blocks > maxBlocks {
				return blocks, maxDepth, errTooManyBlocks
			}
			maxDepth = max(maxDepth, depth-1)
		case 0x0b: // end
			depth--
			if depth < 0 {
				return blocks, maxDepth, fmt.Errorf("byte %d: end without a block", at)
			}
		case 0x18: // delegate ends a try
			fn.u32()
			depth--
		default:
			if err := skipImmediates(fn, op); err != nil {
				return blocks, maxDepth, fmt.Errorf("byte %d: %v", at, err)
			}
		}
	}
	switch {
	case fn.err != nil:
		return blocks, maxDepth, fmt.Errorf("body ends inside an instruction (%v)", fn.err)
	case depth != 0:
		return blocks, maxDepth, fmt.Errorf("body of %d bytes leaves %d block(s) open", size, depth)
	}
	return blocks, maxDepth, nil
}

// skipImmediates reads past the immediates of op (every instruction of
// WebAssembly 2.0, which wazero enables, and the threads, tail-call and
// exception-handling proposals, so a module using them is counted, not
// refused here).
func skipImmediates(r *byteReader, op byte) error {
	switch {
	case op == 0x00 || op == 0x01 || op == 0x05 || op == 0x0f || op == 0x19 || op == 0x0a || // unreachable nop else return catch_all throw_ref
		op == 0x1a || op == 0x1b || op == 0xd1 || (op >= 0x45 && op <= 0xc4): // drop select ref.is_null, numeric
		return nil
	case op == 0x0c || op == 0x0d || op == 0x07 || op == 0x08 || op == 0x09 || // br br_if catch throw rethrow
		op == 0x10 || op == 0x12 || op == 0xd2 || (op >= 0x20 && op <= 0x26): // call return_call ref.func, variables, tables
		r.u32()
	case op == 0x0e: // br_table
		for i, n := uint32(0), r.u32(); i <= n && r.err == nil; i++ {
			r.u32()
		}
	case op == 0x11 || op == 0x13: // call_indirect, return_call_indirect
		r.u32()
		r.u32()
	case op == 0x1c: // select with types
		for i, n := uint32(0), r.u32(); i < n && r.err == nil; i++ {
			r.byte()
		}
	case op >= 0x28 && op <= 0x3e: // loads and stores
		r.memarg()
	case op == 0x3f || op == 0x40 || op == 0xd0: // memory.size, memory.grow, ref.null
		r.byte()
	case op == 0x41 || op == 0x42:
		r.leb() // i32.const, i64.const
	case op == 0x43:
		r.skip(4)
	case op == 0x44:
		r.skip(8)
	case op == 0xfc:
		return skipFC(r)
	case op == 0xfd:
		return skipSIMD(r)
	case op == 0xfe:
		if sub := r.u32(); sub == 0x03 { // atomic.fence
			r.byte()
		} else {
			r.memarg()
		}
	default:
		return fmt.Errorf("unknown opcode 0x%02x", op)
	}
	return nil
}

// skipFC reads the 0xFC prefix: saturating truncations, bulk memory, tables.
func skipFC(r *byteReader) error {
	switch sub := r.u32(); {
	case sub <= 7: // trunc_sat
	case sub == 8: // memory.init: data index, memory
		r.u32()
		r.byte()
	case sub == 9 || sub == 13 || sub == 15 || sub == 16 || sub == 17: // data.drop elem.drop table.grow/size/fill
		r.u32()
	case sub == 10: // memory.copy
		r.byte()
		r.byte()
	case sub == 11: // memory.fill
		r.byte()
	case sub == 12 || sub == 14: // table.init, table.copy
		r.u32()
		r.u32()
	default:
		return fmt.Errorf("unknown instruction 0xfc %d", sub)
	}
	return nil
}

// skipSIMD reads the 0xFD prefix (fixed-width SIMD; relaxed SIMD has no
// immediates).
func skipSIMD(r *byteReader) error {
	switch sub := r.u32(); {
	case sub <= 11 || sub == 92 || sub == 93: // v128 loads and stores
		r.memarg()
	case sub == 12 || sub == 13: // v128.const, i8x16.shuffle
		r.skip(16)
	case sub >= 21 && sub <= 34: // extract_lane, replace_lane
		r.byte()
	case sub >= 84 && sub <= 91: // load_lane, store_lane
		r.memarg()
		r.byte()
	case sub <= 0x113:
	default:
		return fmt.Errorf("unknown instruction 0xfd %d", sub)
	}
	return nil
}

// memarg reads an alignment (whose bit 6 says a memory index follows, in the
// multi-memory encoding) and an offset.
func (r *byteReader) memarg() {
	if align := r.u32(); align&0x40 != 0 {
		r.u32()
	}
	r.leb()
}

func (r *byteReader) skip(n int) {
	if r.pos+n > len(r.b) {
		r.err = errors.New("unexpected end")
		r.pos = len(r.b)
		return
	}
	r.pos += n
}

// leb reads past a LEB128 of up to 10 bytes, signed or not (block types
// are s33, constants s32 or s64, memory64 offsets u64): only its length
// matters here.
func (r *byteReader) leb() {
	for range 10 {
		if r.byte()&0x80 == 0 {
			return
		}
	}
	r.err = errors.New("bad LEB128")
}
