package main

import (
	"fmt"
	"strings"

	"github.com/webtensor/webtensor/core"
)

// The JavaScript SDK's op functions: sdk/js/src/ops/<category>.gen.ts, each
// a function per op (a Tensor method too when its first input is a single
// tensor) with TypeScript types and doc comments, and src/ops.gen.ts
// re-exporting them all.

var tsTypes = map[string]string{
	"int": "number", "float": "number", "bool": "boolean", "string": "string",
	"ints": "readonly number[]", "floats": "readonly number[]", "dtype": "DType",
}

// tsReservedWords cannot name a function; such an op's function gets a
// trailing underscore and is exported under the op's name anyway.
var tsReservedWords = map[string]bool{"var": true, "delete": true, "in": true, "new": true, "function": true,
	"typeof": true, "void": true, "with": true, "default": true}

// tsTensorMembers are Tensor members the generated methods must not shadow
// (core.ts defines them).
var tsTensorMembers = map[string]bool{
	"handle": true, "isDisposed": true, "dispose": true, "dtype": true, "shape": true, "ndim": true, "size": true,
	"strides": true, "isContiguous": true, "device": true, "to": true, "detach": true, "dataSync": true,
	"data": true, "item": true, "toString": true, "requiresGrad": true, "backward": true, "grad": true,
	"zeroGrad": true, "constructor": true,
}

func tsComment(s string) string { return strings.ReplaceAll(s, "*/", "* /") }

type tsParam struct{ decl, doc string }

type tsMethod struct {
	fn, name, doc, ret string
	rest               []tsParam
}

// tsOp appends an op's options interface and function to L and returns its
// Tensor method, if it has one.
func tsOp(L *[]string, op core.ManifestOp) *tsMethod {
	exported := camel(op.Name)
	fn := exported
	if tsReservedWords[exported] {
		fn += "_"
	}
	optName := pascal(op.Name) + "Options"
	hasRequired := false
	for _, a := range op.Attrs {
		hasRequired = hasRequired || a.Required
	}
	if len(op.Attrs) > 0 {
		*L = append(*L, fmt.Sprintf("/** Attributes of {@link %s}. */", fn), fmt.Sprintf("export interface %s {", optName))
		for _, a := range op.Attrs {
			def := ""
			if a.Default != nil {
				def = " (default " + jsonText(a.Default) + ")"
			}
			opt := "?"
			if a.Required {
				opt = ""
			}
			typ, ok := tsTypes[a.Kind]
			if !ok {
				typ = "unknown"
			}
			*L = append(*L, "  /** "+tsComment(a.Doc)+def+" */", "  "+camel(a.Name)+opt+": "+typ+";")
		}
		*L = append(*L, "}", "")
	}
	var params []tsParam
	var names []string
	variadicOnly := len(op.Inputs) == 1 && op.Inputs[0].Variadic
	sawOptional := false
	for _, in := range op.Inputs {
		n := camel(in.Name)
		dts := ""
		if len(in.DTypes) > 0 {
			dts = " (" + strings.Join(in.DTypes, ", ") + ")"
		}
		switch {
		case in.Variadic:
			names = append(names, "..."+n)
			params = append(params, tsParam{n + ": readonly TensorLike[]", "@param " + n + " the input tensors" + dts})
		case in.Optional || sawOptional:
			sawOptional = true
			names = append(names, n)
			// Before required options an optional input is still a parameter: pass null to leave it out.
			decl := n + "?: TensorLike | null"
			if hasRequired {
				decl = n + ": TensorLike | null | undefined"
			}
			params = append(params, tsParam{decl, "@param " + n + " optional input" + dts + " (null leaves it out)"})
		default:
			names = append(names, n)
			params = append(params, tsParam{n + ": TensorLike", "@param " + n + " input" + dts})
		}
	}
	if len(op.Attrs) > 0 {
		opt := "?"
		if hasRequired {
			opt = ""
		}
		params = append(params, tsParam{"options" + opt + ": " + optName, "@param options the attributes (see " + optName + ")"})
	}
	ret, call := "Tensor", "op1"
	if multiOutput(op) {
		ret, call = "Tensor[]", "op"
	}
	inputs := "[" + strings.Join(names, ", ") + "]"
	if variadicOnly {
		inputs = camel(op.Inputs[0].Name)
	}
	// attrsOf checks every key against the op's attributes, so a misspelt
	// or unsupported one (requiresGrad on a creation op) is a TypeError, not
	// silently dropped; an op without attributes checks the argument after
	// its inputs, where a JavaScript caller may pass options all the same.
	var attrNames []string
	for _, a := range op.Attrs {
		attrNames = append(attrNames, camel(a.Name)+": "+jsonText(a.Name))
	}
	attrExpr := fmt.Sprintf("attrsOf(%s, arguments[%d], {})", jsonText(op.Name), len(params))
	if len(op.Attrs) > 0 {
		attrExpr = fmt.Sprintf("attrsOf(%s, options, { %s })", jsonText(op.Name), strings.Join(attrNames, ", "))
	}
	doc := []string{tsComment(op.Doc)}
	if op.Outputs != nil {
		doc = append(doc, "Outputs: "+strings.Join(op.Outputs, ", ")+".")
	}
	decls := make([]string, len(params))
	for i, p := range params {
		doc = append(doc, p.doc)
		decls[i] = p.decl
	}
	*L = append(*L, "/**")
	for _, d := range doc {
		*L = append(*L, " * "+d)
	}
	*L = append(*L, " */")
	export := ""
	if fn == exported {
		export = "export "
	}
	*L = append(*L, fmt.Sprintf("%sfunction %s(%s): %s {", export, fn, strings.Join(decls, ", "), ret),
		fmt.Sprintf("  return %s(%s, %s, %s);", call, jsonText(op.Name), inputs, attrExpr), "}", "")
	if len(op.Inputs) == 0 || op.Inputs[0].Variadic || tsTensorMembers[exported] {
		return nil
	}
	return &tsMethod{fn: fn, name: exported, doc: op.Doc, ret: ret, rest: params[1:]}
}

// tsMethods declares the Tensor methods of a file and defines them on
// Tensor.prototype.
func tsMethods(methods []*tsMethod) []string {
	if len(methods) == 0 {
		return nil
	}
	L := []string{`declare module "../core.js" {`, "  interface Tensor {"}
	for _, m := range methods {
		decls := make([]string, len(m.rest))
		for i, p := range m.rest {
			decls[i] = p.decl
		}
		L = append(L, "    /** "+tsComment(m.doc)+" */", fmt.Sprintf("    %s(%s): %s;", m.name, strings.Join(decls, ", "), m.ret))
	}
	L = append(L, "  }", "}", "", "// The methods call the functions above with the tensor as the first input.",
		"const methods: Record<string, (...args: never[]) => unknown> = {")
	for _, m := range methods {
		if m.fn == m.name {
			L = append(L, "  "+m.fn+",")
		} else {
			L = append(L, "  "+m.name+": "+m.fn+",")
		}
	}
	return append(L, "};",
		"for (const [name, fn] of Object.entries(methods)) {",
		"  Object.defineProperty(Tensor.prototype, name, {",
		"    value: function (this: Tensor, ...rest: unknown[]) {",
		"      return (fn as (...a: unknown[]) => unknown)(this, ...rest);",
		"    },",
		"    writable: true,",
		"    configurable: true,",
		"  });",
		"}",
		"")
}

func tsOps(r *registry) ([]file, error) {
	head := []string{"// " + header, ""}
	var files []file
	index := append([]string{}, head...)
	for _, c := range r.categories {
		var L, renamed []string
		var methods []*tsMethod
		for _, op := range c.ops {
			if m := tsOp(&L, op); m != nil {
				methods = append(methods, m)
			}
			if exported := camel(op.Name); tsReservedWords[exported] {
				renamed = append(renamed, exported+"_ as "+exported)
			}
		}
		if len(renamed) > 0 {
			L = append(L, "export { "+strings.Join(renamed, ", ")+" };", "")
		}
		L = append(L, tsMethods(methods)...)
		body := strings.Join(L, "\n")
		out := append([]string{}, head...)
		out = append(out, fmt.Sprintf("// The %s ops.", c.name), "")
		out = append(out, `import { attrsOf } from "../check.js";`)
		var values []string
		if len(methods) > 0 {
			values = append(values, "Tensor")
		}
		for _, f := range []string{"op", "op1"} {
			if strings.Contains(body, "  return "+f+"(") {
				values = append(values, f)
			}
		}
		out = append(out, "import { "+strings.Join(values, ", ")+` } from "../core.js";`)
		types := []string{"TensorLike"}
		if len(methods) == 0 {
			types = append([]string{"Tensor"}, types...)
		}
		out = append(out, "import type { "+strings.Join(types, ", ")+` } from "../core.js";`)
		if strings.Contains(body, ": DType") {
			out = append(out, `import type { DType } from "../dtype.js";`)
		}
		out = append(out, "", body)
		files = append(files, file{"sdk/js/src/ops/" + c.name + ".gen.ts", []byte(strings.Join(out, "\n"))})
		index = append(index, fmt.Sprintf(`export * from "./ops/%s.gen.js";`, c.name))
	}
	index = append(index, "")
	files = append(files, file{"sdk/js/src/ops.gen.ts", []byte(strings.Join(index, "\n"))})
	return files, nil
}
