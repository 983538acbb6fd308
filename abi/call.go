package abi

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"runtime"
	"slices"
	"sort"
	"strings"
)

// One entry point for the domain libraries' methods (wt_call): a target
// names the method ("sentence_encoder.encode", "video.uniform_frame_indices"),
// self is the object's handle (0 for a constructor or a plain function),
// the arguments come as one JSON object by name, and the result goes back
// as JSON (tensors and objects as their handles). A method is registered
// once, here in Go, and every SDK reaches it through the same three C
// functions, the browser bridge through one: nothing per method is written
// in capi, the bridge, the header or an SDK's binding. The SDK classes stay
// their languages' idioms and hold one call per method.

// CallFunc is one method: it reads its arguments from c and returns the
// work, which runs only when every argument was right (so a wrong option
// never starts a model) and returns what becomes the result's JSON.
type CallFunc func(c *CallArgs) func() (any, error)

// method is a target's CallFunc and what its result's JSON holds, written
// beside it for docs/calls.md: "tensor" is a new tensor handle the caller
// owns, "<kind> handle" a new object to free with "<kind>.free".
type method struct {
	returns string
	fn      CallFunc
}

var callTable = map[string]method{}

// registerCalls adds a domain's methods; a target registered twice, or
// without its result described, is a bug caught at start-up.
func registerCalls(m map[string]method) {
	for k, f := range m {
		if _, dup := callTable[k]; dup {
			panic("abi: call target " + k + " registered twice")
		}
		if f.returns == "" {
			panic("abi: call target " + k + " does not say what it returns")
		}
		callTable[k] = f
	}
}

// CallTargets lists every registered target, sorted (for `doctor`, docs
// and tests).
func CallTargets() []string {
	out := make([]string, 0, len(callTable))
	for k := range callTable {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// maxCallArgs bounds the JSON a call reads: arguments are names, texts and
// numbers (tensors and bytes travel apart), so a larger one is a caller's
// mistake rather than a model.
const maxCallArgs = 64 << 20

// CallContext is what a call's caller brings besides its arguments: its
// grad mode (each binding keeps its own: a C thread's, the page's) and,
// where it can take them, progress reports of long work (the browser's
// onStep; nil elsewhere).
type CallContext struct {
	NoGrad   bool
	Progress func(step, steps int) error
	// OwnsData: data is the call's own copy (the browser bridge's of the
	// page's bytes), which a loader may keep instead of copying again.
	OwnsData bool
}

// Call is wt_call: it runs target on self with argsJSON (a JSON object, ""
// for none) and data (bytes a loader reads, nil for none) and returns the
// result as JSON.
func Call(target string, self int64, argsJSON string, data []byte, ctx CallContext) (string, error) {
	m, ok := callTable[target]
	if !ok {
		return "", Invalidf("wt_call: unknown target %q%s", target, nearTargets(target))
	}
	c, err := parseCallArgs(target, self, argsJSON, data)
	if err != nil {
		return "", err
	}
	c.Ctx = ctx
	run := m.fn(c)
	if err := c.unused(); err != nil { // first: a misspelt argument is why a required one is missing
		return "", err
	}
	if c.err != nil {
		return "", c.err
	}
	v, err := run()
	if err != nil {
		return "", err
	}
	out, err := json.Marshal(v)
	if err != nil {
		return "", Errorf(StatusInternal, "%s: result %T is not JSON: %v", target, v, err)
	}
	return string(out), nil
}

// nearTargets suggests the targets of the same kind as a misspelt one.
func nearTargets(target string) string {
	kind, _, _ := strings.Cut(target, ".")
	var same []string
	for _, k := range CallTargets() {
		if strings.HasPrefix(k, kind+".") {
			same = append(same, k)
		}
	}
	if len(same) == 0 {
		return " (no target has the kind " + fmt.Sprintf("%q", kind) + ")"
	}
	return " (" + kind + " has " + strings.Join(same, ", ") + ")"
}

// CallArgs reads one call's arguments by name. The first wrong argument is
// kept and reported by Call, naming the target and the argument, so a
// method reads all it needs and checks nothing itself; an argument the
// method never read is reported too (a misspelt option is an error, not a
// no-op).
type CallArgs struct {
	Target string
	Self   int64
	Data   []byte
	Ctx    CallContext
	raw    map[string]json.RawMessage
	read   map[string]bool
	err    error
	spec   *CallSpec // describing: the arguments are recorded, not read (describe.go)
	given  bool      // describing: what Has answers
}

func parseCallArgs(target string, self int64, argsJSON string, data []byte) (*CallArgs, error) {
	c := &CallArgs{Target: target, Self: self, Data: data, raw: map[string]json.RawMessage{}, read: map[string]bool{}}
	if len(argsJSON) > maxCallArgs {
		return nil, Invalidf("%s: arguments are %d bytes of JSON, more than %d", target, len(argsJSON), maxCallArgs)
	}
	if strings.TrimSpace(argsJSON) == "" {
		return c, nil
	}
	// json.Unmarshal rather than a Decoder: it refuses trailing text, and a
	// Decoder's buffers cost more than most methods' own work.
	var m map[string]json.RawMessage
	if err := json.Unmarshal([]byte(argsJSON), &m); err != nil || m == nil {
		return nil, Invalidf("%s: arguments must be a JSON object, got %.80q (%v)", target, argsJSON, err)
	}
	for k, v := range m {
		if !bytes.Equal(bytes.TrimSpace(v), []byte("null")) { // null means "the default", as omitting it does
			c.raw[k] = v
		}
	}
	return c, nil
}

func (c *CallArgs) fail(name, format string, args ...any) {
	if c.err == nil {
		c.err = Invalidf("%s: %s %s", c.Target, name, fmt.Sprintf(format, args...))
	}
}

// get decodes argument name into v; it reports whether the caller gave it.
func (c *CallArgs) get(name string, v any, want string) bool {
	c.read[name] = true
	raw, ok := c.raw[name]
	if !ok {
		return false
	}
	if err := json.Unmarshal(raw, v); err != nil {
		c.fail(name, "must be %s, got %.60s", want, raw)
		return false
	}
	return true
}

func (c *CallArgs) missing(name string, ok bool) {
	if !ok && c.err == nil {
		if _, given := c.raw[name]; !given {
			c.fail(name, "is required")
		}
	}
}

// Has reports whether the caller gave argument name (not null).
func (c *CallArgs) Has(name string) bool {
	if c.spec != nil {
		return c.given
	}
	_, ok := c.raw[name]
	return ok
}

// optional reads argument name as a T, def when absent; kind and noted
// (the default as docs/calls.md gives it) describe it, want says what a
// wrong value should have been.
func optional[T any](c *CallArgs, name, kind, want string, def T, noted any) T {
	c.note(name, kind, noted, false)
	v := def
	c.get(name, &v, want)
	return v
}

// required reads argument name as a T that the caller must give.
func required[T any](c *CallArgs, name, kind, want string) T {
	c.note(name, kind, nil, true)
	var v T
	c.missing(name, c.get(name, &v, want))
	return v
}

// Str is a string argument, def when absent.
func (c *CallArgs) Str(name, def string) string {
	return optional(c, name, "string", "a string", def, def)
}

// NeedStr is a required string argument.
func (c *CallArgs) NeedStr(name string) string {
	return required[string](c, name, "string", "a string")
}

// Path is a required file or folder path, refused in the browser build
// (see needFileSystem) saying what to pass instead: instead, or, for a
// target that has no other way in ("" instead), that it needs a file system.
func (c *CallArgs) Path(name, instead string) string {
	p := required[string](c, name, "path", "a string")
	if p != "" {
		if instead == "" {
			instead = "run " + c.Target + " where there is one (Node, Python, Java or C)"
		}
		c.needFileSystem(fmt.Sprintf("%s %q", name, p), instead)
	}
	return p
}

// needFileSystem refuses, in the browser build, a call that would read
// what from files: a page has none, so the error names the argument and
// says what to pass instead, rather than failing in os.Open.
func (c *CallArgs) needFileSystem(what, instead string) {
	if runtime.GOOS == "js" && c.err == nil {
		c.err = Errorf(StatusUnsupported, "%s: a page has no file system to read %s from; %s instead", c.Target, what, instead)
	}
}

// Strings is a required list of strings; one string counts as a list of one
// (every SDK's texts argument takes either).
func (c *CallArgs) Strings(name string) []string {
	c.note(name, "string or list of strings", nil, true)
	if raw, ok := c.raw[name]; ok && bytes.HasPrefix(bytes.TrimSpace(raw), []byte(`"`)) {
		var one string
		c.get(name, &one, "a string")
		return []string{one}
	}
	v := listOf[string](c, name, "a string")
	if v == nil && c.err == nil {
		v = []string{}
	}
	return v
}

// listOf reads a required JSON list whose every element must be what want
// says: JSON's null decodes to a zero value without complaint, which
// would turn a caller's hole into an empty text or handle 0.
func listOf[T any](c *CallArgs, name, want string) []T {
	// The whole list at once when it holds no null (the common case, and
	// 10x faster than element by element); otherwise, or when that fails,
	// element by element, to name the one that is wrong.
	if raw, ok := c.raw[name]; ok && !bytes.Contains(raw, []byte("null")) {
		var all []T
		if json.Unmarshal(raw, &all) == nil && all != nil {
			c.read[name] = true
			return all
		}
	}
	var items []json.RawMessage
	if !c.get(name, &items, "a list") {
		c.missing(name, false)
		return nil
	}
	out := make([]T, len(items))
	for i, it := range items {
		if bytes.Equal(bytes.TrimSpace(it), []byte("null")) || json.Unmarshal(it, &out[i]) != nil {
			c.fail(fmt.Sprintf("%s[%d]", name, i), "must be %s, got %.40s", want, it)
			return nil
		}
	}
	return out
}

// Int is an integer argument, def when absent; a number with a fraction or
// past int64 is refused rather than rounded.
func (c *CallArgs) Int(name string, def int64) int64 {
	n := optional[json.Number](c, name, "integer", "an integer", "", def)
	if n == "" {
		return def
	}
	v, err := n.Int64()
	if err != nil {
		c.fail(name, "must be an integer, got %s", n)
		return def
	}
	return v
}

// IntIn is Int bounded to [lo, hi] (sizes, counts, seeds of a width).
func (c *CallArgs) IntIn(name string, def, lo, hi int64) int64 {
	v := c.Int(name, def)
	c.note(name, fmt.Sprintf("integer in [%d, %d]", lo, hi), def, false)
	if v < lo || v > hi {
		c.fail(name, "is %d, outside [%d, %d]", v, lo, hi)
	}
	return v
}

// NeedIntIn is a required integer in [lo, hi].
func (c *CallArgs) NeedIntIn(name string, lo, hi int64) int64 {
	_, given := c.raw[name]
	v := c.IntIn(name, 0, lo, hi)
	c.note(name, fmt.Sprintf("integer in [%d, %d]", lo, hi), nil, true)
	c.missing(name, given)
	return v
}

// Object is a required handle of another object (a whisper model for its
// stream); kind names it.
func (c *CallArgs) Object(name, kind string) int64 {
	return required[int64](c, name, kind+" handle", "a "+kind+" handle")
}

// Float is a number argument, def when absent (JSON has no NaN or
// infinity: the SDKs send those as the strings "nan", "inf", "-inf").
func (c *CallArgs) Float(name string, def float64) float64 {
	var s string
	if raw, ok := c.raw[name]; ok && json.Unmarshal(raw, &s) == nil {
		c.read[name] = true
		switch strings.ToLower(s) {
		case "nan":
			return math.NaN()
		case "inf", "infinity", "+inf":
			return math.Inf(1)
		case "-inf", "-infinity":
			return math.Inf(-1)
		}
		c.fail(name, "must be a number, got %q", s)
		return def
	}
	return optional(c, name, "number", "a number", def, def)
}

// Bool is a boolean argument, def when absent.
func (c *CallArgs) Bool(name string, def bool) bool {
	return optional(c, name, "bool", "true or false", def, def)
}

// Ints is a required list of integers.
func (c *CallArgs) Ints(name string) []int64 {
	c.note(name, "list of integers", nil, true)
	return listOf[int64](c, name, "an integer")
}

// Tensor is a required tensor argument: its handle.
func (c *CallArgs) Tensor(name string) int64 {
	return required[int64](c, name, "tensor", "a tensor handle")
}

// OptTensor is an optional tensor argument: its handle, 0 when absent.
func (c *CallArgs) OptTensor(name string) int64 {
	return optional(c, name, "tensor", "a tensor handle", int64(0), nil)
}

// Tensors is a required list of tensors: their handles (one handle counts
// as a list of one).
func (c *CallArgs) Tensors(name string) []int64 {
	c.note(name, "tensor or list of tensors", nil, true)
	if raw, ok := c.raw[name]; ok && !bytes.HasPrefix(bytes.TrimSpace(raw), []byte("[")) {
		var one int64
		c.get(name, &one, "a tensor handle or a list of them")
		return []int64{one}
	}
	return listOf[int64](c, name, "a tensor handle")
}

// JSON is an argument passed on as the JSON text a function parses itself
// (an agent's options); "" when absent.
func (c *CallArgs) JSON(name, kind string) string {
	return string(optional[json.RawMessage](c, name, kind, "JSON", nil, nil))
}

// NeedJSON is JSON for a required argument.
func (c *CallArgs) NeedJSON(name, kind string) string {
	return string(required[json.RawMessage](c, name, kind, "JSON"))
}

// OptBytes is the call's data when a method takes it or not (nil: none).
func (c *CallArgs) OptBytes(what string) []byte {
	if c.spec != nil {
		c.spec.Data = what
	}
	return c.Data
}

// Bytes is the call's data, required: the loaders from bytes read it.
func (c *CallArgs) Bytes(what string) []byte {
	if c.spec != nil {
		c.spec.Data = what
		return nil
	}
	if c.Data == nil && c.err == nil {
		c.err = Invalidf("%s: needs %s as the call's data, got none", c.Target, what)
	}
	return c.Data
}

// unused reports the arguments no body read: misspelt or of another method.
func (c *CallArgs) unused() error {
	var extra []string
	for k := range c.raw {
		if !c.read[k] {
			extra = append(extra, k)
		}
	}
	if len(extra) == 0 {
		return nil
	}
	sort.Strings(extra)
	known := make([]string, 0, len(c.read))
	for k := range c.read {
		known = append(known, k)
	}
	slices.Sort(known)
	return Invalidf("%s: unknown argument %s (it takes %s)", c.Target, strings.Join(extra, ", "), orNone(known))
}

func orNone(names []string) string {
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ", ")
}

// callResults hold wt_call's results until the caller reads them: a call
// (a model's generate) cannot be run again to fill a larger buffer.
var callResults = newObjects[string]("call result")

// CallToResult is wt_call as the C ABI has it: the result kept behind a
// handle for CallResultJSON.
func CallToResult(target string, self int64, argsJSON string, data []byte, ctx CallContext) (int64, error) {
	s, err := Call(target, self, argsJSON, data, ctx)
	if err != nil {
		return 0, err
	}
	return callResults.add(s), nil
}

// CallResultJSON is wt_call_result_json: a result's JSON.
func CallResultJSON(h int64) (string, error) { return callResults.get(h) }

// CallResultFree is wt_call_result_free.
func CallResultFree(h int64) error { return callResults.free(h) }
