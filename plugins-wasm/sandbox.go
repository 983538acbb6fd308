package plugins

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/sys"
)

// The sandbox: what a module may import and must export, one instantiation
// of it, and every call into it under the deadline, with each pointer it
// hands back checked against its memory.

const wasiModule = "wasi_snapshot_preview1"

// exportSig is the signature ABI.md requires of an exported function.
type exportSig struct {
	params, results []api.ValueType
	optional        bool
}

var (
	i32 = api.ValueTypeI32
	i64 = api.ValueTypeI64
)

var requiredExports = map[string]exportSig{
	"wt_plugin_abi": {results: []api.ValueType{i32}},
	"wt_alloc":      {params: []api.ValueType{i32}, results: []api.ValueType{i32}},
	"wt_free":       {params: []api.ValueType{i32, i32}},
	"wt_manifest":   {results: []api.ValueType{i64}},
	"wt_kernel":     {params: []api.ValueType{i32, i32}, results: []api.ValueType{i32}},
	"wt_error":      {results: []api.ValueType{i64}},
	"wt_infer":      {params: []api.ValueType{i32, i32, i32}, results: []api.ValueType{i64}, optional: true},
	"wt_decide":     {params: []api.ValueType{i32, i32, i32}, results: []api.ValueType{i64}, optional: true},
}

// checkImports refuses every import but WASI preview-1 functions.
func checkImports(wasm []byte) error {
	imports, err := listImports(wasm)
	if err != nil {
		return err
	}
	for _, im := range imports {
		if im.module != wasiModule {
			return fmt.Errorf("imports %s %s.%s, which the host does not provide (only %s functions may be imported)",
				im.kind, im.module, im.name, wasiModule)
		}
		if im.kind != "function" {
			return fmt.Errorf("imports %s %s.%s; only functions may be imported from %s", im.kind, im.module, im.name, wasiModule)
		}
	}
	return nil
}

// checkWASIImports checks each imported WASI function against the host's
// WASI module, so a misspelt or mistyped import is named before
// instantiation rather than reported as a link failure.
func checkWASIImports(c wazero.CompiledModule, wasi api.Module) error {
	have := wasi.ExportedFunctionDefinitions()
	for _, im := range c.ImportedFunctions() {
		_, name, _ := im.Import()
		def, ok := have[name]
		if !ok {
			return fmt.Errorf("imports function %s.%s, which WASI preview 1 does not define", wasiModule, name)
		}
		if !slices.Equal(def.ParamTypes(), im.ParamTypes()) || !slices.Equal(def.ResultTypes(), im.ResultTypes()) {
			return fmt.Errorf("imports %s.%s as %s, WASI defines it as %s", wasiModule, name,
				sigString(im.ParamTypes(), im.ResultTypes()), sigString(def.ParamTypes(), def.ResultTypes()))
		}
	}
	return nil
}

// checkExports verifies the exports and their signatures before any code of
// the module runs.
func checkExports(c wazero.CompiledModule) error {
	if _, ok := c.ExportedMemories()["memory"]; !ok {
		return fmt.Errorf("does not export its memory as \"memory\"")
	}
	fns := c.ExportedFunctions()
	for _, name := range sortedKeys(requiredExports) {
		want := requiredExports[name]
		def, ok := fns[name]
		if !ok {
			if want.optional {
				continue
			}
			return fmt.Errorf("does not export %s %s", name, sigString(want.params, want.results))
		}
		if !slices.Equal(def.ParamTypes(), want.params) || !slices.Equal(def.ResultTypes(), want.results) {
			return fmt.Errorf("exports %s as %s, want %s", name,
				sigString(def.ParamTypes(), def.ResultTypes()), sigString(want.params, want.results))
		}
	}
	if _, cmd := fns["_start"]; cmd {
		if _, reactor := fns["_initialize"]; !reactor {
			return fmt.Errorf("is a command (exports _start, not _initialize); build it as a reactor " +
				"(Go: GOOS=wasip1 -buildmode=c-shared; TinyGo: -buildmode=c-shared; Rust: crate-type cdylib)")
		}
	}
	return nil
}

func sigString(params, results []api.ValueType) string {
	names := func(ts []api.ValueType) string {
		s := make([]string, len(ts))
		for i, t := range ts {
			s[i] = api.ValueTypeName(t)
		}
		return strings.Join(s, ", ")
	}
	if len(results) == 0 {
		return "(" + names(params) + ")"
	}
	return "(" + names(params) + ") -> " + names(results)
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// instance is one instantiation of a plugin's compiled module. It is not safe
// for concurrent use: the plugin's pool gives it to one call at a time.
type instance struct {
	mod                                 api.Module
	mem                                 api.Memory
	abi, alloc, free, kernel, lastError api.Function
	manifest, infer, decide             api.Function
	limit                               uint64 // the memory cap in bytes

	// Every call runs under ctx; the timer, armed for the length of a call,
	// cancels ctx when the call overruns, and wazero then closes the module.
	// One timer per instance costs less per call than a context per call.
	// Without a deadline ctx is never cancelled and timer is nil.
	ctx      context.Context
	cancel   context.CancelFunc
	timer    *time.Timer
	deadline time.Duration
	expired  bool // the timer fired: ctx is dead, drop the instance

	// scratch is a block from wt_alloc kept across calls and grown when a
	// call needs more, so a plugin whose wt_free does nothing (a bump
	// allocator) does not run out of memory over many calls.
	scratch, scratchLen uint32
	stack               [3]uint64
}

// brokenError marks a failure after which the instance's state cannot be
// trusted (a trap, a timeout, a lie about its memory): the instance is closed
// and the next call instantiates the module afresh.
type brokenError struct{ err error }

func (e *brokenError) Error() string { return e.err.Error() }
func (e *brokenError) Unwrap() error { return e.err }

func broken(err error) error { return &brokenError{err} }

func isBroken(err error) bool {
	var b *brokenError
	return errors.As(err, &b)
}

func (h *Host) instantiate(ctx context.Context, c wazero.CompiledModule) (*instance, error) {
	if !h.cfg.noDeadline {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, h.cfg.deadline)
		defer cancel()
	}
	mod, err := h.rt.InstantiateModule(ctx, c, h.moduleConfig)
	if err != nil {
		deadline := h.cfg.deadline
		if h.cfg.noDeadline {
			deadline = 0 // only the caller's context can have stopped it
		}
		return nil, callFailure("instantiating (_initialize)", err, deadline)
	}
	in := &instance{mod: mod, mem: mod.ExportedMemory("memory"), limit: h.cfg.memoryLimit,
		abi: mod.ExportedFunction("wt_plugin_abi"), alloc: mod.ExportedFunction("wt_alloc"),
		free: mod.ExportedFunction("wt_free"), kernel: mod.ExportedFunction("wt_kernel"),
		lastError: mod.ExportedFunction("wt_error"), manifest: mod.ExportedFunction("wt_manifest"),
		infer: mod.ExportedFunction("wt_infer"), decide: mod.ExportedFunction("wt_decide")}
	in.ctx, in.cancel = context.WithCancel(context.Background())
	if !h.cfg.noDeadline {
		in.deadline = h.cfg.deadline
		in.timer = time.AfterFunc(time.Hour, in.cancel)
		in.timer.Stop()
	}
	if in.mem == nil || in.abi == nil || in.alloc == nil || in.free == nil || in.kernel == nil ||
		in.lastError == nil || in.manifest == nil {
		in.close()
		return nil, fmt.Errorf("instance lacks an export its compiled module declared")
	}
	return in, nil
}

func (in *instance) close() {
	if in == nil {
		return
	}
	if in.timer != nil {
		in.timer.Stop()
	}
	if in.cancel != nil {
		in.cancel()
	}
	if in.mod != nil {
		_ = in.mod.Close(context.Background())
	}
}

// call runs an export under the deadline and returns its one result (0 for
// none). Any failure breaks the instance.
func (in *instance) call(what string, fn api.Function, args ...uint64) (uint64, error) {
	stack := in.stack[:max(len(args), 1)]
	copy(stack, args)
	if in.timer != nil {
		in.timer.Reset(in.deadline)
	}
	err := fn.CallWithStack(in.ctx, stack)
	if in.timer != nil && !in.timer.Stop() {
		in.expired = true // even if the call just made it, ctx is cancelled now
	}
	if err != nil {
		var exit *sys.ExitError
		if in.expired && errors.As(err, &exit) && exit.ExitCode() == sys.ExitCodeContextCanceled {
			err = sys.NewExitError(sys.ExitCodeDeadlineExceeded)
		}
		err = callFailure(what, err, in.deadline)
		if errors.Is(err, context.DeadlineExceeded) {
			err = fmt.Errorf("%w; the instance was closed, and later calls get one instantiated afresh", err)
		}
		return 0, broken(err)
	}
	return stack[0], nil
}

// callFailure turns wazero's error into one line that says what happened.
func callFailure(what string, err error, deadline time.Duration) error {
	var exit *sys.ExitError
	if errors.As(err, &exit) {
		switch exit.ExitCode() {
		case sys.ExitCodeDeadlineExceeded:
			if deadline == 0 {
				return fmt.Errorf("%s: %w", what, context.DeadlineExceeded)
			}
			return fmt.Errorf("%s: %w: ran longer than the %v deadline", what, context.DeadlineExceeded, deadline)
		case sys.ExitCodeContextCanceled:
			return fmt.Errorf("%s: %w", what, context.Canceled)
		default:
			return fmt.Errorf("%s: the module exited with code %d (proc_exit)", what, exit.ExitCode())
		}
	}
	msg, trace, _ := strings.Cut(err.Error(), "\n")
	if frames := traceFrames(trace); frames != "" {
		msg += " (wasm stack: " + frames + ")"
	}
	return fmt.Errorf("%s trapped: %s", what, msg)
}

// traceFrames condenses wazero's multi-line wasm stack trace to its frames.
func traceFrames(trace string) string {
	var frames []string
	for _, line := range strings.Split(trace, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "wasm stack trace") || strings.HasPrefix(line, "0x") {
			continue
		}
		frames = append(frames, line)
		if len(frames) == 8 {
			frames = append(frames, "...")
			break
		}
	}
	return strings.Join(frames, " <- ")
}

// view returns the module's memory [ptr, ptr+n) without copying. It is valid
// until the module runs again (memory.grow may move it).
func (in *instance) view(what string, ptr, n uint32) ([]byte, error) {
	b, ok := in.mem.Read(ptr, n)
	if !ok {
		return nil, broken(fmt.Errorf("%s: [%d, %d) is outside the module's memory of %d bytes",
			what, ptr, uint64(ptr)+uint64(n), in.mem.Size()))
	}
	return b, nil
}

// packedBytes calls an export returning (ptr << 32) | len and copies the
// bytes it names, at most limit of them.
func (in *instance) packedBytes(what string, fn api.Function, limit uint32, args ...uint64) ([]byte, error) {
	v, err := in.call(what, fn, args...)
	if err != nil {
		return nil, err
	}
	return in.unpack(what, v, limit)
}

// exchange runs a request-and-reply export (wt_infer, wt_decide): req goes
// into the scratch block, fn(index, its address, its length) runs, and the
// bytes its return packs, at most limit of them, are the reply. A return of
// 0 is the plugin's refusal: refused makes the error from wt_error's
// message.
func (in *instance) exchange(what string, fn api.Function, index int, req []byte, limit uint32, refused func(msg string) error) ([]byte, error) {
	ptr, err := in.ensureScratch(uint32(len(req)))
	if err != nil {
		return nil, err
	}
	dst, err := in.view(what+" request", ptr, uint32(len(req)))
	if err != nil {
		return nil, err
	}
	copy(dst, req)
	v, err := in.call(what, fn, uint64(index), uint64(ptr), uint64(len(req)))
	if err != nil {
		return nil, err
	}
	if v == 0 {
		msg, err := in.errorMessage()
		if err != nil {
			return nil, err
		}
		return nil, refused(msg)
	}
	return in.unpack(what, v, limit)
}

func (in *instance) unpack(what string, v uint64, limit uint32) ([]byte, error) {
	ptr, n := uint32(v>>32), uint32(v)
	if n > limit {
		return nil, broken(fmt.Errorf("%s: returned a length of %d bytes, more than the %d allowed", what, n, limit))
	}
	b, err := in.view(what+" returned a pointer and length that are not in memory", ptr, n)
	if err != nil {
		return nil, err
	}
	return slices.Clone(b), nil
}

// ensureScratch makes the scratch block at least n bytes and returns it.
func (in *instance) ensureScratch(n uint32) (uint32, error) {
	if in.scratch != 0 && in.scratchLen >= n {
		return in.scratch, nil
	}
	if in.scratch != 0 {
		if _, err := in.call("wt_free", in.free, uint64(in.scratch), uint64(in.scratchLen)); err != nil {
			return 0, err
		}
		in.scratch, in.scratchLen = 0, 0
	}
	size := uint64(max(n, 4096))
	if grown := 2 * uint64(n); grown <= in.limit/4 { // amortise growth of small blocks
		size = max(size, grown)
	}
	ptr, err := in.call("wt_alloc", in.alloc, size)
	if err != nil {
		return 0, err
	}
	p := uint32(ptr)
	switch {
	case p == 0:
		// The allocator is full; a fresh instance starts with empty memory.
		return 0, broken(fmt.Errorf("wt_alloc(%d) returned 0: out of memory (the cap is %s)", size, byteSize(in.limit)))
	case p%8 != 0:
		return 0, broken(fmt.Errorf("wt_alloc(%d) returned %d, which is not 8-byte aligned", size, p))
	}
	if _, err := in.view(fmt.Sprintf("wt_alloc(%d) returned %d", size, p), p, uint32(size)); err != nil {
		return 0, err
	}
	in.scratch, in.scratchLen = p, uint32(size)
	return p, nil
}

// errorMessage reads wt_error after a failed wt_kernel or wt_infer.
func (in *instance) errorMessage() (string, error) {
	b, err := in.packedBytes("wt_error", in.lastError, maxErrorBytes)
	if err != nil {
		return "", err
	}
	msg := strings.TrimSpace(strings.ToValidUTF8(string(b), "\uFFFD"))
	if msg == "" {
		msg = "(no message from wt_error)"
	}
	return msg, nil
}

const maxErrorBytes = 64 << 10

func byteSize(n uint64) string {
	switch {
	case n >= 1<<30 && n%(1<<30) == 0:
		return fmt.Sprintf("%d GiB", n>>30)
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}

// wasmImport is one entry of a module's import section.
type wasmImport struct{ module, name, kind string }

// listImports reads the import section of a module that already compiled,
// so every import kind (functions, memories, tables, globals) is named
// before anything is instantiated.
func listImports(wasm []byte) ([]wasmImport, error) {
	r := &byteReader{b: wasm}
	if len(wasm) < 8 {
		return nil, errors.New("binary too short")
	}
	r.pos = 8 // magic and version
	for r.pos < len(r.b) {
		id := r.byte()
		size := r.u32()
		end := r.pos + int(size)
		if r.err != nil || end > len(r.b) || end < r.pos {
			return nil, errors.New("malformed section header")
		}
		if id != 2 {
			r.pos = end
			continue
		}
		n := r.u32()
		var out []wasmImport
		for i := uint32(0); i < n && r.err == nil; i++ {
			im := wasmImport{module: r.name(), name: r.name()}
			switch r.byte() {
			case 0:
				im.kind = "function"
				r.u32()
			case 1:
				im.kind = "table"
				r.byte()
				r.limits()
			case 2:
				im.kind = "memory"
				r.limits()
			case 3:
				im.kind = "global"
				r.byte()
				r.byte()
			case 4:
				im.kind = "tag"
				r.byte()
				r.u32()
			default:
				return nil, errors.New("malformed import section")
			}
			out = append(out, im)
		}
		if r.err != nil {
			return nil, errors.New("malformed import section")
		}
		return out, nil
	}
	return nil, nil
}

type byteReader struct {
	b   []byte
	pos int
	err error
}

func (r *byteReader) byte() byte {
	if r.pos >= len(r.b) {
		r.err = errors.New("unexpected end")
		return 0
	}
	c := r.b[r.pos]
	r.pos++
	return c
}

func (r *byteReader) u32() uint32 {
	var v uint32
	for shift := 0; shift < 35; shift += 7 {
		c := r.byte()
		v |= uint32(c&0x7f) << shift
		if c&0x80 == 0 {
			return v
		}
	}
	r.err = errors.New("bad LEB128")
	return 0
}

func (r *byteReader) name() string {
	n := int(r.u32())
	if r.err != nil || n < 0 || r.pos+n > len(r.b) {
		r.err = errors.New("bad name")
		return ""
	}
	s := string(r.b[r.pos : r.pos+n])
	r.pos += n
	return s
}

func (r *byteReader) limits() {
	flags := r.byte()
	r.u32()
	if flags&1 != 0 {
		r.u32()
	}
}
