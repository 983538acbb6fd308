package main

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"unicode"
)

// The TypeScript and Python SDKs' optimisers: per optimiser, a class over
// the SDK's hand-written Optimizer (sdk/js/src/optimizer.ts,
// sdk/python/webtensor/optim/optimizer.py) with the settings and defaults
// of the table in optim.go.

// tsValue is a setting's default as a TypeScript literal.
func tsValue(p optimParam) string {
	switch p.kind {
	case "bool":
		return fmt.Sprint(p.flag)
	case "pair":
		return "[" + numText(p.floats[0]) + ", " + numText(p.floats[1]) + "]"
	}
	return numText(p.floats[0])
}

// sentence is doc with a capital and a full stop.
func sentence(doc string) string {
	r := []rune(doc)
	r[0] = unicode.ToUpper(r[0])
	return string(r) + "."
}

// tsDoc is an optimiser's class comment: what it is and its equations.
func tsDoc(o optimizer) []string {
	L := []string{"/**"}
	L = append(L, javaWrap(tsComment(o.camelText(o.doc)), 100, " * ")...)
	if o.math != "" {
		L = append(L, " *", " * ```")
		for _, l := range strings.Split(tsComment(o.camelText(o.math)), "\n") {
			L = append(L, " * "+l)
		}
		L = append(L, " * ```")
	}
	return append(L, " */")
}

// tsOptimizer is one optimiser's options interface (unless it takes its
// base's) and class.
func tsOptimizer(o optimizer, byClass map[string]optimizer) []string {
	options := o.class + "Options"
	var L []string
	if o.base == "" {
		L = append(L, "/** The settings of {@link "+o.class+"}; each one left out takes torch's default. */",
			"export interface "+options+" {")
		for _, p := range o.params {
			typ := map[string]string{"float": "number", "bool": "boolean", "pair": "[number, number]"}[p.kind]
			L = append(L, "  /** "+tsComment(sentence(p.doc))+" Default "+tsValue(p)+". */", "  "+camel(p.name)+"?: "+typ+";")
		}
		L = append(L, "}", "")
	} else {
		options = o.base + "Options"
	}
	L = append(L, tsDoc(o)...)
	ctor := "  constructor(params: Iterable<Tensor>, opts: " + options + " = {}) {"
	switch {
	case o.base != "":
		// Only what differs from the base's defaults: the base fills in the rest.
		var over []string
		for i, p := range o.params {
			if b := byClass[o.base].params[i]; p.flag != b.flag || !slices.Equal(p.floats, b.floats) {
				over = append(over, camel(p.name)+": "+tsValue(p))
			}
		}
		L = append(L, "export class "+o.class+" extends "+o.base+" {",
			fmt.Sprintf("  protected override readonly kind = %q;", o.kind), ctor)
		L = append(L, fill("    super(params, { ", append(over, "...opts"), " });", "      ", 120)...)
		return append(L, "    this.sync();", "  }", "}")
	case o.extended:
		L = append(L, "export class "+o.class+" extends Optimizer {", fmt.Sprintf("  protected readonly kind: string = %q;", o.kind))
	default:
		L = append(L, "export class "+o.class+" extends Optimizer {", fmt.Sprintf("  protected readonly kind = %q;", o.kind))
	}
	values := make([]string, 0, len(o.params)+1)
	for _, p := range o.params {
		values = append(values, camel(p.name)+": "+tsValue(p))
	}
	L = append(L, "  readonly options: Required<"+options+">;", ctor, "    super(params);")
	L = append(L, fill("    this.options = { ", append(values, "...opts"), " };", "      ", 120)...)
	if o.extended {
		// The subclass's constructor syncs, once its kind is set.
		L = append(L, "    if (new.target === "+o.class+") this.sync();")
	} else {
		L = append(L, "    this.sync();")
	}
	return append(L, "  }", "}")
}

func tsOptimizers(opts []optimizer) file {
	byClass := map[string]optimizer{}
	for _, o := range opts {
		byClass[o.class] = o
	}
	L := []string{"// " + header, "",
		"// The optimisers with their settings and torch's defaults (Go's nn.Default*), from internal/gen's",
		"// optimiser table; optim.ts exports them beside the schedules.", "",
		`import type { Tensor } from "./core.js";`, `import { Optimizer } from "./optimizer.js";`}
	for _, o := range opts {
		L = append(L, "")
		L = append(L, tsOptimizer(o, byClass)...)
	}
	return file{"sdk/js/src/optim.gen.ts", []byte(strings.Join(L, "\n") + "\n")}
}

const pyOptimPath = "sdk/python/webtensor/optim/_optimizers.py"

// pyValue is a setting's default as a Python literal.
func pyValue(p optimParam) string {
	switch p.kind {
	case "bool":
		if p.flag {
			return "True"
		}
		return "False"
	case "pair":
		return "(" + pyFloat(p.floats[0]) + ", " + pyFloat(p.floats[1]) + ")"
	}
	return pyFloat(p.floats[0])
}

// pyOptimizer is one optimiser's class: its docstring, kind and __init__
// taking the settings as torch's keyword arguments (maximize keyword-only).
func pyOptimizer(o optimizer) []string {
	L := []string{"", "", "class " + o.class + "(" + cmp.Or(o.base, "Optimizer") + "):"}
	doc := pyWrap(o.doc, 120, `    """`, "    ")
	if o.math != "" {
		doc[len(doc)-1] += ":"
		doc = append(doc, "")
		for _, l := range strings.Split(o.math, "\n") {
			doc = append(doc, "        "+l)
		}
	}
	doc = append(doc, "", "    Args:")
	doc = append(doc, pyWrap(`params: The parameters to optimise, or parameter groups (dicts with "params" and settings of their own).`,
		120, "        ", "            ")...)
	for _, p := range o.params {
		doc = append(doc, pyWrap(p.name+": "+sentence(p.doc), 120, "        ", "            ")...)
	}
	L = append(L, doc...)
	L = append(L, `    """`, "", fmt.Sprintf("    _kind = %q", o.kind), "")
	decls := []string{"params: Iterable[Any]"}
	var names []string
	for _, p := range o.params {
		typ := map[string]string{"float": "float", "bool": "bool", "pair": "tuple[float, float]"}[p.kind]
		if p.name == "maximize" {
			decls = append(decls, "*")
		}
		decls = append(decls, p.name+": "+typ+" = "+pyValue(p))
		names = append(names, p.name)
	}
	L = append(L, fill("    def __init__(self, ", decls, "):", "                 ", 120)...)
	if o.base != "" {
		var args []string
		for _, n := range names {
			if n == "maximize" {
				n = "maximize=maximize"
			}
			args = append(args, n)
		}
		return append(L, fill("        super().__init__(params, ", args, ")", "                         ", 120)...)
	}
	var items []string
	for _, p := range o.params {
		v := p.name
		if p.kind == "pair" {
			v = "tuple(" + v + ")"
		}
		items = append(items, fmt.Sprintf("%q: %s", p.name, v))
	}
	return append(L, fill("        super().__init__(params, {", items, "})", "                                  ", 120)...)
}

func pyOptimizers(opts []optimizer) file {
	var all []string
	for _, o := range opts {
		all = append(all, fmt.Sprintf("%q", o.class))
	}
	L := []string{"# " + header, "",
		`"""The optimisers with their settings and torch's defaults (Go's nn.Default*), from internal/gen's`,
		`optimiser table; webtensor.optim exports them."""`, "",
		"from __future__ import annotations", "",
		"from collections.abc import Iterable", "from typing import Any", "",
		"from .optimizer import Optimizer", ""}
	L = append(L, fill("__all__ = [", all, "]", "           ", 120)...)
	for _, o := range opts {
		L = append(L, pyOptimizer(o)...)
	}
	return file{pyOptimPath, []byte(strings.Join(L, "\n") + "\n")}
}
