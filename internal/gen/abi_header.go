package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
)

// The C ABI's headers are the one description of the library's functions:
// the SDKs' FFI declarations (ctypes signatures, koffi prototypes, Java FFM
// downcall handles) are generated from them, so an SDK cannot drift from the
// header (a changed signature used to need three hand edits, and a missed one
// crashed at run time instead of failing to build).
var abiHeaders = []string{"capi/include/webtensor.h", "capi/include/webtensor_domains.h"}

// abiHeader is what the generators read from the headers.
type abiHeader struct {
	funcs   []abiFunc
	consts  []abiConst // WT_ABI_VERSION and the WT_OK / WT_ERR_* statuses, in header order
	attr    []abiParam // the fields of the wt_attr struct, in order
	handles map[string]bool
}

type abiConst struct {
	name  string // without the WT_ prefix: OK, ERR_INVALID, ABI_VERSION
	value int
}

type abiFunc struct {
	name   string
	ret    abiType
	params []abiParam
}

type abiParam struct {
	name string
	typ  abiType
}

// abiType is a C type as the FFIs need it: the base type after typedefs to
// int64_t handles are resolved, whether the pointee is const, the pointer
// depth (an array parameter counts as a pointer) and whether it is a
// function pointer (only Python's capsule destructor has one).
type abiType struct {
	base       string
	handle     string // the wt_* typedef the base came from, for documentation
	constPoint bool
	ptr        int
	funcPtr    bool
}

// out reports whether a parameter is written by the library: a pointer to
// non-const data (the header's convention for outputs and buffers).
func (t abiType) out() bool { return t.ptr > 0 && !t.constPoint && !t.funcPtr }

var (
	blockComment = regexp.MustCompile(`(?s)/\*.*?\*/`)
	lineComment  = regexp.MustCompile(`//[^\n]*`)
	preprocessor = regexp.MustCompile(`(?m)^\s*#.*$`)
	defineConst  = regexp.MustCompile(`(?m)^#define WT_(ABI_VERSION|OK|ERR_[A-Z_]+)\s+(\d+)`)
	handleDef    = regexp.MustCompile(`typedef int64_t (wt_[a-z0-9_]+);`)
	attrStruct   = regexp.MustCompile(`(?s)typedef struct \{([^}]*)\} wt_attr;`)
	funcStart    = regexp.MustCompile(`([A-Za-z_][A-Za-z0-9_ ]*?[ *]+)(wt_[a-z0-9_]+)\s*\(`)
)

// readABI parses the headers under root.
func readABI(root string) (*abiHeader, error) {
	h := &abiHeader{handles: map[string]bool{}}
	for _, rel := range abiHeaders {
		raw, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(rel)))
		if err != nil {
			return nil, err
		}
		text := string(raw)
		for _, m := range defineConst.FindAllStringSubmatch(text, -1) {
			v, _ := strconv.Atoi(m[2])
			h.consts = append(h.consts, abiConst{m[1], v})
		}
		code := preprocessor.ReplaceAllString(lineComment.ReplaceAllString(blockComment.ReplaceAllString(text, " "), " "), " ")
		for _, m := range handleDef.FindAllStringSubmatch(code, -1) {
			h.handles[m[1]] = true
		}
		if m := attrStruct.FindStringSubmatch(code); m != nil {
			for _, field := range strings.Split(m[1], ";") {
				if strings.TrimSpace(field) == "" {
					continue
				}
				p, err := h.param(field)
				if err != nil {
					return nil, fmt.Errorf("%s: wt_attr: %w", rel, err)
				}
				h.attr = append(h.attr, p)
			}
		}
		fs, err := h.functions(code)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", rel, err)
		}
		h.funcs = append(h.funcs, fs...)
	}
	if len(h.funcs) == 0 || len(h.attr) == 0 || len(h.consts) == 0 {
		return nil, fmt.Errorf("the headers %v declare no functions, wt_attr or statuses: has their layout changed?", abiHeaders)
	}
	return h, nil
}

// functions finds every wt_* prototype in code (comments and preprocessor
// lines removed).
func (h *abiHeader) functions(code string) ([]abiFunc, error) {
	var fs []abiFunc
	for _, loc := range funcStart.FindAllStringSubmatchIndex(code, -1) {
		ret, name := code[loc[2]:loc[3]], code[loc[4]:loc[5]]
		if strings.Contains(ret, "typedef") {
			continue
		}
		// The parameter list ends at the matching parenthesis (function
		// pointer parameters nest).
		depth, end := 1, loc[1]
		for ; end < len(code) && depth > 0; end++ {
			switch code[end] {
			case '(':
				depth++
			case ')':
				depth--
			}
		}
		if !strings.HasPrefix(strings.TrimSpace(code[end:]), ";") {
			continue // a call or a macro, not a prototype
		}
		rt, err := h.typeOf(ret)
		if err != nil {
			return nil, fmt.Errorf("%s: return type: %w", name, err)
		}
		f := abiFunc{name: name, ret: rt}
		for _, p := range splitParams(code[loc[1] : end-1]) {
			if p == "void" {
				continue
			}
			ap, err := h.param(p)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", name, err)
			}
			f.params = append(f.params, ap)
		}
		fs = append(fs, f)
	}
	return fs, nil
}

// splitParams splits a parameter list at its top-level commas.
func splitParams(list string) []string {
	var out []string
	depth, start := 0, 0
	for i, c := range list {
		switch c {
		case '(', '[':
			depth++
		case ')', ']':
			depth--
		case ',':
			if depth == 0 {
				out = append(out, strings.TrimSpace(list[start:i]))
				start = i + 1
			}
		}
	}
	if last := strings.TrimSpace(list[start:]); last != "" {
		out = append(out, last)
	}
	return out
}

var funcPtrParam = regexp.MustCompile(`^(.*)\(\s*(\*+)\s*([A-Za-z_]\w*)\s*\)\s*\(.*\)$`)

// param parses one declaration: `const int64_t *shape`, `void *const api[4]`,
// `void (**destructor)(void *)`.
func (h *abiHeader) param(decl string) (abiParam, error) {
	decl = strings.Join(strings.Fields(decl), " ")
	if m := funcPtrParam.FindStringSubmatch(decl); m != nil {
		return abiParam{name: m[3], typ: abiType{base: "void", ptr: len(m[2]), funcPtr: true}}, nil
	}
	ptr := 0
	if i := strings.Index(decl, "["); i >= 0 {
		decl, ptr = strings.TrimSpace(decl[:i]), 1
	}
	decl = strings.ReplaceAll(decl, "*", " * ")
	words := strings.Fields(decl)
	if len(words) < 2 {
		return abiParam{}, fmt.Errorf("parameter %q has no name", decl)
	}
	name := words[len(words)-1]
	t, err := h.typeOf(strings.Join(words[:len(words)-1], " "))
	t.ptr += ptr
	return abiParam{name: name, typ: t}, err
}

// typeOf parses a type without a name: `const char *`, `wt_tensor *`.
func (h *abiHeader) typeOf(decl string) (abiType, error) {
	var t abiType
	seenBase := false
	for _, w := range strings.Fields(strings.ReplaceAll(decl, "*", " * ")) {
		switch {
		case w == "*":
			t.ptr++
		case w == "const":
			if !seenBase {
				t.constPoint = true
			} // a const after a * makes the pointer const, which no FFI sees
		case seenBase:
			return t, fmt.Errorf("type %q: two base types", decl)
		default:
			seenBase = true
			t.base = w
			if h.handles[w] {
				t.base, t.handle = "int64_t", w
			}
		}
	}
	if !seenBase {
		return t, fmt.Errorf("type %q has no base type", decl)
	}
	return t, nil
}
