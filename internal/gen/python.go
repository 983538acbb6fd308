package main

import (
	"fmt"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/webtensor/webtensor/core"
)

// The Python SDK's op functions: sdk/python/webtensor/_ops/, one module per
// category, an __init__.py re-exporting them and a one-line-per-op stub.

const pyDir = "sdk/python/webtensor/_ops/"

var pyTypes = map[string]string{
	"int": "int", "float": "float", "bool": "bool", "string": "str", "dtype": "DTypeLike",
	"ints": "int | Sequence[int]", "floats": "float | Sequence[float]",
}

// pyAliases are the Python array API standard (2023.12) spellings accepted
// beside the registry's: keyword-only aliases, so sum(x, axis=0,
// keepdims=True) works as the standard writes it and sum(x, axes=[0],
// keepdim=True) as PyTorch does. Registry name -> alias and annotation.
var pyAliases = []struct{ name, alias, ann string }{
	{"axes", "axis", "int | Sequence[int] | None"},
	{"keepdim", "keepdims", "bool | None"},
}

var pyKeywords = map[string]bool{
	"False": true, "None": true, "True": true, "and": true, "as": true, "assert": true, "async": true,
	"await": true, "break": true, "class": true, "continue": true, "def": true, "del": true, "elif": true,
	"else": true, "except": true, "finally": true, "for": true, "from": true, "global": true, "if": true,
	"import": true, "in": true, "is": true, "lambda": true, "nonlocal": true, "not": true, "or": true,
	"pass": true, "raise": true, "return": true, "try": true, "while": true, "with": true, "yield": true,
}

func pyName(name string) string {
	if pyKeywords[name] {
		return name + "_"
	}
	return name
}

type pyParam struct {
	name, ann string
	def       string // "" when required
	role      string // input, variadic, attr
	attr      core.ManifestAttr
}

// pyParams are an op's parameters in signature order: required inputs,
// required attributes, optional inputs, the other attributes.
func pyParams(op core.ManifestOp) []pyParam {
	var reqIn, optIn, reqAt, optAt []pyParam
	for _, in := range op.Inputs {
		switch {
		case in.Variadic:
			reqIn = append(reqIn, pyParam{name: pyName(in.Name), ann: "Sequence[TensorLike]", role: "variadic"})
		case in.Optional:
			optIn = append(optIn, pyParam{name: pyName(in.Name), ann: "TensorLike | None", def: "None", role: "input"})
		default:
			reqIn = append(reqIn, pyParam{name: pyName(in.Name), ann: "TensorLike", role: "input"})
		}
	}
	for _, a := range op.Attrs {
		p := pyParam{name: pyName(a.Name), ann: pyTypes[a.Kind], role: "attr", attr: a}
		if a.Required {
			reqAt = append(reqAt, p)
			continue
		}
		p.def = pyDefault(a)
		if p.def == "None" {
			p.ann += " | None"
		}
		optAt = append(optAt, p)
	}
	return append(append(append(reqIn, reqAt...), optIn...), optAt...)
}

func pyDefault(a core.ManifestAttr) string {
	switch {
	case a.Default == nil:
		return "None"
	case a.Kind == "float":
		return pyAsFloat(a.Default)
	}
	return pyRepr(a.Default)
}

type pyAlias struct{ alias, ann, name string }

// pyOpAliases are the aliases of the op's attributes that have one.
func pyOpAliases(op core.ManifestOp) []pyAlias {
	names := map[string]bool{}
	for _, a := range op.Attrs {
		names[a.Name] = true
	}
	var out []pyAlias
	for _, al := range pyAliases {
		if names[al.name] && !names[al.alias] {
			out = append(out, pyAlias{al.alias, al.ann, al.name})
		}
	}
	return out
}

func pySignature(op core.ManifestOp) string {
	var ps []string
	for _, p := range pyParams(op) {
		s := p.name + ": " + p.ann
		if p.def != "" {
			s += " = " + p.def
		}
		ps = append(ps, s)
	}
	if als := pyOpAliases(op); len(als) > 0 {
		ps = append(ps, "*")
		for _, al := range als {
			ps = append(ps, al.alias+": "+al.ann+" = None")
		}
	}
	ret := "Tensor"
	if multiOutput(op) {
		ret = "tuple[Tensor, ...]"
	}
	line := fmt.Sprintf("def %s(%s) -> %s", op.Name, strings.Join(ps, ", "), ret)
	if utf8.RuneCountInString(line) <= 114 {
		return line
	}
	var b strings.Builder
	fmt.Fprintf(&b, "def %s(\n", op.Name)
	for _, p := range ps {
		fmt.Fprintf(&b, "    %s,\n", p)
	}
	fmt.Fprintf(&b, ") -> %s", ret)
	return b.String()
}

func pyDocstring(op core.ManifestOp) []string {
	lines := pyWrap(op.Doc, 100, "", "")
	if len(lines) == 0 {
		lines = []string{op.Name}
	}
	var documented []core.ManifestAttr
	for _, a := range op.Attrs {
		if a.Doc != "" {
			documented = append(documented, a)
		}
	}
	if len(documented) > 0 {
		lines = append(lines, "", "Args:")
		for _, a := range documented {
			lines = append(lines, pyWrap(a.Name+": "+a.Doc, 100, "    ", "        ")...)
		}
	}
	if als := pyOpAliases(op); len(als) > 0 {
		var spelled []string
		for _, al := range als {
			spelled = append(spelled, al.alias+"= (for "+al.name+")")
		}
		lines = append(lines, "", "Also accepts the array API's "+strings.Join(spelled, " and ")+".")
	}
	if multiOutput(op) {
		lines = append(lines, "", "Returns a tuple: "+strings.Join(op.Outputs, ", ")+".")
	}
	if len(lines) == 1 {
		return []string{`    """` + lines[0] + `"""`}
	}
	out := []string{`    """` + lines[0]}
	for _, l := range lines[1:] {
		out = append(out, strings.TrimRight("    "+l, " \t"))
	}
	return append(out, `    """`)
}

func pyFunction(op core.ManifestOp) []string {
	ps := pyParams(op)
	var ins, attrs []string
	for _, p := range ps {
		switch p.role {
		case "input":
			ins = append(ins, p.name)
		case "variadic":
			ins = append(ins, "*"+p.name)
		case "attr":
			attrs = append(attrs, fmt.Sprintf("(%s, %s, %s)", pyString(p.attr.Name), pyString(p.attr.Kind), p.name))
		}
	}
	call := fmt.Sprintf("run_op(%s, [%s], [%s])", pyString(op.Name), strings.Join(ins, ", "), strings.Join(attrs, ", "))
	body := "    return " + call + "[0]"
	if multiOutput(op) {
		body = "    return tuple(" + call + ")"
	}
	if utf8.RuneCountInString(body) > 118 {
		body = strings.Replace(body, ", [", ",\n        [", 1)
		for _, l := range strings.Split(body, "\n") {
			if utf8.RuneCountInString(l) > 118 {
				body = strings.ReplaceAll(body, "), (", "),\n         (")
				break
			}
		}
	}
	out := []string{pySignature(op) + ":"}
	out = append(out, pyDocstring(op)...)
	for _, al := range pyOpAliases(op) {
		out = append(out, fmt.Sprintf("    if %s is not None:\n        %s = %s", al.alias, pyName(al.name), al.alias))
	}
	return append(out, body)
}

func pyOps(r *registry) ([]file, error) {
	head := "# " + header + "\n"
	var files []file
	for _, c := range r.categories {
		var body []string
		for _, op := range c.ops {
			body = append(body, "")
			body = append(body, pyFunction(op)...)
			body = append(body, "")
		}
		code := strings.Join(body, "\n")
		text := []string{head, fmt.Sprintf(`"""The %s ops."""`, c.name), "", "from __future__ import annotations", ""}
		if strings.Contains(code, "Sequence[") {
			text = append(text, "from collections.abc import Sequence", "")
		}
		text = append(text, "from .._tensor import Tensor, run_op")
		var used []string
		for _, n := range []string{"DTypeLike", "TensorLike"} {
			if strings.Contains(code, n) {
				used = append(used, n)
			}
		}
		if len(used) > 0 {
			text = append(text, "from ._types import "+strings.Join(used, ", "))
		}
		text = append(text, "", code)
		files = append(files, file{pyDir + c.name + ".py", []byte(strings.TrimRight(strings.Join(text, "\n"), " \t\n\r") + "\n")})
	}
	public := r.public()
	init := []string{head, `"""Every public op of the manifest, as a function (generated)."""`, ""}
	for _, c := range r.categories {
		init = append(init, "from ."+c.name+" import (")
		for _, op := range c.ops {
			init = append(init, "    "+op.Name+",")
		}
		init = append(init, ")")
	}
	init = append(init, "", "__all__ = [")
	for _, op := range public {
		init = append(init, "    "+pyString(op.Name)+",")
	}
	init = append(init, "]", "")
	// Ops that read as methods: those whose first parameter is one tensor.
	init = append(init, "METHODS = (")
	for _, op := range public {
		if len(op.Inputs) > 0 && !op.Inputs[0].Variadic {
			init = append(init, "    "+pyString(op.Name)+",")
		}
	}
	init = append(init, ")")
	files = append(files, file{pyDir + "__init__.py", []byte(strings.Join(init, "\n") + "\n")})
	stub := []string{head, "from collections.abc import Sequence", "", "from .._tensor import Tensor",
		"from ._types import DTypeLike, TensorLike", "", "METHODS: tuple[str, ...]", "__all__: list[str]", ""}
	for _, op := range public {
		stub = append(stub, pySignature(op)+": ...")
	}
	files = append(files, file{pyDir + "__init__.pyi", []byte(strings.Join(stub, "\n") + "\n")})
	files = append(files, file{pyDir + "_types.py", []byte(strings.Join([]string{
		head, `"""Type aliases of the generated op signatures."""`, "", "from __future__ import annotations", "",
		"from typing import Any", "", "from .._dtype import DType", "from .._tensor import Tensor", "",
		"TensorLike = Tensor | int | float | bool | Any", "DTypeLike = DType | str | Any", ""}, "\n"))})
	sort.Slice(files, func(i, j int) bool { return files[i].path < files[j].path })
	return files, nil
}
