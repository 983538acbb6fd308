package main

import (
	"fmt"
	"strings"
)

// The three FFIs' declarations of the C ABI, from the headers (abi_header.go).
// Each SDK keeps by hand only what an FFI cannot say: loading the library,
// mapping statuses to its exceptions, and the calls' idioms.

// abiSkip lists functions an FFI does not declare, with why.
var abiSkip = map[string]map[string]bool{
	// The capsule destructor serves CPython only; koffi and FFM cannot parse
	// its function-pointer parameter and have no use for it.
	"ts":   {"wt_python_capsule_destructor": true},
	"java": {"wt_python_capsule_destructor": true},
}

// abiBorrowed are pointers the library keeps and writes after the call
// returns (wt_tensor_from_host_borrowed's released flag): an FFI must pass
// them as plain addresses, not as output arguments it copies back.
var abiBorrowed = map[string]bool{"wt_tensor_from_host_borrowed.released": true}

// abiFiles writes the ABI's declarations for every SDK.
func abiFiles(r *registry) ([]file, error) {
	h := r.abi
	if h == nil {
		return nil, fmt.Errorf("the C ABI headers were not read")
	}
	py, err := pyABI(h)
	if err != nil {
		return nil, err
	}
	protos, err := tsABIPrototypes(h)
	if err != nil {
		return nil, err
	}
	java, err := javaABI(h)
	if err != nil {
		return nil, err
	}
	return []file{
		{"sdk/python/webtensor/_abi.py", py},
		{"sdk/js/src/abi.gen.ts", tsABIConstants(h)},
		{"sdk/js/src/abi_prototypes.gen.ts", protos},
		{javaDir + "Abi.java", java},
	}, nil
}

// ---- Python (ctypes) -------------------------------------------------------------

func pyCType(f abiFunc, p abiParam) (string, error) {
	t := p.typ
	if t.funcPtr {
		return "_p(C.c_void_p)", nil
	}
	scalar := map[string]string{"int32_t": "_i32", "int64_t": "_i64", "uint64_t": "_u64", "uint32_t": "C.c_uint32",
		"size_t": "_sz", "double": "C.c_double", "wt_attr": "Attr", "DLManagedTensor": "DLManagedTensor",
		"DLManagedTensorVersioned": "DLManagedTensorVersioned"}
	switch {
	case t.base == "char" && t.ptr == 1:
		return "_s", nil // a string in, or a buffer the library fills (create_string_buffer)
	case t.base == "char" && t.ptr == 2:
		return "_p(_s)", nil
	case t.base == "void" && t.ptr == 1:
		return "C.c_void_p", nil
	case t.base == "void" && t.ptr == 2:
		return "_p(C.c_void_p)", nil
	case strings.HasPrefix(t.base, "DLManaged") && t.ptr == 1:
		return "C.c_void_p", nil // a producer's struct, passed by address
	}
	s, ok := scalar[t.base]
	if !ok {
		return "", fmt.Errorf("%s: parameter %s: no ctypes type for %q", f.name, p.name, t.base)
	}
	for range t.ptr {
		s = "_p(" + s + ")"
	}
	return s, nil
}

func pyABI(h *abiHeader) ([]byte, error) {
	var b strings.Builder
	fmt.Fprintf(&b, "# %s\n# ruff: noqa: E501 (a signature is one line, however long)\n", header)
	b.WriteString(`"""The C ABI (capi/include/webtensor.h and webtensor_domains.h) as ctypes
declarations: the statuses, the wt_attr struct and every function's signature.
_lib loads the library and applies SIGNATURES; edit the headers, not this file."""

import ctypes as C

from ._dlpack_h import DLManagedTensor, DLManagedTensorVersioned

`)
	for _, c := range h.consts {
		fmt.Fprintf(&b, "%s = %d\n", c.name, c.value)
	}
	b.WriteString("\n\nclass Attr(C.Structure):\n    \"\"\"wt_attr: one named attribute of an op call.\"\"\"\n\n    _fields_ = [\n")
	attrs := map[string]string{"char": "C.c_char_p", "int32_t": "C.c_int32", "int64_t": "C.c_int64", "double": "C.c_double"}
	for _, p := range h.attr {
		t, ok := attrs[p.typ.base]
		if !ok {
			return nil, fmt.Errorf("wt_attr.%s: no ctypes type for %q", p.name, p.typ.base)
		}
		if p.typ.ptr > 0 && p.typ.base != "char" {
			t = "C.POINTER(" + t + ")"
		}
		fmt.Fprintf(&b, "        (%q, %s),\n", p.name, t)
	}
	b.WriteString("    ]\n\n\n")
	b.WriteString("_i32, _i64, _u64, _sz, _s = C.c_int32, C.c_int64, C.c_uint64, C.c_size_t, C.c_char_p\n_p = C.POINTER\n\n")
	b.WriteString("SIGNATURES: dict[str, tuple[list, object]] = {\n")
	for _, f := range h.funcs {
		ret, err := pyCType(f, abiParam{name: "result", typ: f.ret})
		if err != nil {
			return nil, err
		}
		var args []string
		for _, p := range f.params {
			a, err := pyCType(f, p)
			if err != nil {
				return nil, err
			}
			args = append(args, a)
		}
		fmt.Fprintf(&b, "    %q: ([%s], %s),\n", f.name, strings.Join(args, ", "), ret)
	}
	b.WriteString("}\n")
	return []byte(b.String()), nil
}

// ---- JavaScript (koffi prototypes and the constants) ------------------------------

func tsABIConstants(h *abiHeader) []byte {
	var b strings.Builder
	fmt.Fprintf(&b, "// %s\n", header)
	b.WriteString("// The C ABI's statuses and version (capi/include/webtensor.h), for every runtime.\n\n")
	for _, c := range h.consts {
		fmt.Fprintf(&b, "export const %s = %d;\n", c.name, c.value)
	}
	return []byte(b.String())
}

// tsCDecl writes a parameter or result type in koffi's C syntax: handles as
// int64_t, outputs marked _Out_ (koffi copies them back), a buffer the
// library fills as bytes (koffi would decode char * as a string), foreign
// structs and borrowed pointers as plain addresses.
func tsCDecl(f abiFunc, p abiParam, result bool) string {
	t := p.typ
	base := t.base
	if strings.HasPrefix(base, "DLManaged") || abiBorrowed[f.name+"."+p.name] {
		base = "void"
	}
	out := !result && t.out() && !abiBorrowed[f.name+"."+p.name]
	if out && base == "char" && t.ptr == 1 {
		base = "uint8_t"
	}
	s := base + " " + strings.Repeat("*", t.ptr)
	if t.constPoint {
		s = "const " + s
	}
	if out {
		s = "_Out_ " + s
	}
	if result {
		return strings.TrimSpace(s)
	}
	return strings.TrimSuffix(s, " ") + pSep(t.ptr) + p.name
}

func pSep(ptr int) string {
	if ptr > 0 {
		return ""
	}
	return " "
}

func tsABIPrototypes(h *abiHeader) ([]byte, error) {
	var b strings.Builder
	fmt.Fprintf(&b, "// %s\n", header)
	b.WriteString(`// The C ABI's functions (capi/include/webtensor.h and webtensor_domains.h)
// as koffi prototypes, for the Node binding; edit the headers, not this file.

export const PROTOTYPES = {
`)
	for _, f := range h.funcs {
		if abiSkip["ts"][f.name] {
			continue
		}
		var args []string
		for _, p := range f.params {
			args = append(args, tsCDecl(f, p, false))
		}
		ret := tsCDecl(f, abiParam{typ: f.ret}, true)
		sep := " "
		if strings.HasSuffix(ret, "*") {
			sep = ""
		}
		fmt.Fprintf(&b, "  %s: %q,\n", f.name, ret+sep+f.name+"("+strings.Join(args, ", ")+")")
	}
	b.WriteString("} as const;\n")
	return []byte(b.String()), nil
}

// ---- Java (FFM downcall handles) ---------------------------------------------------

// javaABIName is a function's handle: its name without wt_, in capitals,
// with _CALL after it where that is a constant's name (wt_abi_version's
// handle beside WT_ABI_VERSION's value).
func javaABIName(h *abiHeader, c string) string {
	n := strings.ToUpper(strings.TrimPrefix(c, "wt_"))
	for _, k := range h.consts {
		if k.name == n {
			return n + "_CALL"
		}
	}
	return n
}

func javaLayout(f abiFunc, p abiParam) (string, error) {
	if p.typ.ptr > 0 || p.typ.funcPtr {
		return "A", nil
	}
	l, ok := map[string]string{"int32_t": "I", "uint32_t": "I", "int64_t": "L", "uint64_t": "L", "size_t": "L",
		"double": "D"}[p.typ.base]
	if !ok {
		return "", fmt.Errorf("%s: parameter %s: no Java layout for %q", f.name, p.name, p.typ.base)
	}
	return l, nil
}

func javaABI(h *abiHeader) ([]byte, error) {
	var b strings.Builder
	fmt.Fprintf(&b, "// %s\n", header)
	b.WriteString(`package dev.webtensor;

import java.lang.foreign.MemoryLayout;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_DOUBLE;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * The C ABI (capi/include/webtensor.h and webtensor_domains.h) as FFM declarations: the
 * statuses, the wt_attr layout and a downcall handle per function, named after it without
 * "wt_". Native loads the library and calls through these; edit the headers, not this file.
 */
final class Abi {
    private Abi() {}

`)
	for _, c := range h.consts {
		fmt.Fprintf(&b, "    static final int %s = %d;\n", c.name, c.value)
	}
	b.WriteString("\n    /** wt_attr, field by field with C's alignment. */\n    static final MemoryLayout ATTR = MemoryLayout.structLayout(\n")
	offset := 0
	var fields []string
	for _, p := range h.attr {
		layout, size := "ADDRESS", 8
		if p.typ.ptr == 0 {
			switch p.typ.base {
			case "int32_t":
				layout, size = "JAVA_INT", 4
			case "int64_t":
				layout = "JAVA_LONG"
			case "double":
				layout = "JAVA_DOUBLE"
			default:
				return nil, fmt.Errorf("wt_attr.%s: no Java layout for %q", p.name, p.typ.base)
			}
		}
		if pad := (size - offset%size) % size; pad > 0 {
			fields = append(fields, fmt.Sprintf("MemoryLayout.paddingLayout(%d)", pad))
			offset += pad
		}
		fields = append(fields, fmt.Sprintf("%s.withName(%q)", layout, p.name))
		offset += size
	}
	b.WriteString("            " + strings.Join(fields, ",\n            ") + ");\n\n")
	b.WriteString("    private static final ValueLayout I = JAVA_INT, L = JAVA_LONG, D = JAVA_DOUBLE, A = ADDRESS;\n\n")
	for _, f := range h.funcs {
		if abiSkip["java"][f.name] {
			continue
		}
		ret, err := javaLayout(f, abiParam{name: "result", typ: f.ret})
		if err != nil {
			return nil, err
		}
		layouts := []string{ret}
		for _, p := range f.params {
			l, err := javaLayout(f, p)
			if err != nil {
				return nil, err
			}
			layouts = append(layouts, l)
		}
		fmt.Fprintf(&b, "    static final MethodHandle %s = Native.fn(%q, %s);\n", javaABIName(h, f.name), f.name, strings.Join(layouts, ", "))
	}
	b.WriteString("}\n")
	return []byte(b.String()), nil
}
