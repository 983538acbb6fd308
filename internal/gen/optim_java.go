package main

import (
	"fmt"
	"strings"
	"unicode"
)

// The Java SDK's optimisers (dev.webtensor.optim): per optimiser, a class
// holding its settings as an Options record, one with... method a setting,
// defaults() and the constructors, which hand the settings to the
// hand-written Optimizer as attributes.

const javaOptimDir = "sdk/java/src/main/java/dev/webtensor/optim/"

// javaComponents are a setting's record components: the setting's name, or
// a pair's field names (beta1, beta2).
func javaComponents(p optimParam) []string {
	if p.kind != "pair" {
		return []string{camel(p.name)}
	}
	out := make([]string, len(p.fields))
	for i, f := range p.fields {
		out[i] = strings.ToLower(f[:1]) + f[1:]
	}
	return out
}

// javaDefaults is defaults()'s Javadoc: each setting and its default.
func javaDefaults(o optimizer) string {
	var parts []string
	for _, p := range o.params {
		v := fmt.Sprint(p.flag)
		switch p.kind {
		case "float":
			v = numText(p.floats[0])
		case "pair":
			v = "(" + numText(p.floats[0]) + ", " + numText(p.floats[1]) + ")"
		}
		parts = append(parts, camel(p.name)+" "+v)
	}
	return "Torch's defaults: " + strings.Join(parts, ", ") + "."
}

// javaSentence is a setting's doc as a Javadoc sentence.
func javaSentence(doc string) string {
	r := []rune(javaEscaper.Replace(doc))
	r[0] = unicode.ToUpper(r[0])
	return string(r) + "."
}

// javaDocLines is a Javadoc comment of text at indent: one line where it
// fits in 120 columns, else a block.
func javaDocLines(indent, text string) []string {
	if line := indent + "/** " + text + " */"; len(line) <= 120 {
		return []string{line}
	}
	L := []string{indent + "/**"}
	L = append(L, javaWrap(text, 116-len(indent), indent+" * ")...)
	return append(L, indent+" */")
}

// javaOptions is the Options record with its with... methods.
func javaOptions(o optimizer) []string {
	var comps, decls []string
	for _, p := range o.params {
		for _, c := range javaComponents(p) {
			comps = append(comps, c)
			typ := "double"
			if p.kind == "bool" {
				typ = "boolean"
			}
			decls = append(decls, typ+" "+c)
		}
	}
	doc := "The settings; torch's defaults from {@link #defaults()}, changed with the with... methods."
	for _, e := range optimTable {
		if e.base == o.class {
			doc = fmt.Sprintf("The settings; torch's defaults from {@link %s#defaults()} (%s's from {@link %s#defaults()}).",
				o.class, e.class, e.class)
		}
	}
	L := javaDocLines("    ", doc)
	L = append(L, fill("    public record Options(", decls, ") {", "                          ", 120)...)
	for _, p := range o.params {
		mine := javaComponents(p)
		var params []string
		args := make([]string, len(comps))
		copy(args, comps)
		for i, c := range comps {
			for _, m := range mine {
				if c != m {
					continue
				}
				if len(mine) == 1 {
					args[i] = "v"
					params = append(params, strings.TrimSuffix(decls[i], " "+c)+" v")
				} else {
					params = append(params, decls[i])
				}
			}
		}
		L = append(L, "        /** "+javaSentence(p.doc)+" */",
			"        public Options with"+pascal(p.name)+"("+strings.Join(params, ", ")+") {")
		L = append(L, fill("            return new Options(", args, ");", "                    ", 120)...)
		L = append(L, "        }", "")
	}
	L[len(L)-1] = "    }"
	return L
}

// javaShortcut is a convenience constructor: defaults() with some settings
// given as arguments.
func javaShortcut(o optimizer, names []string) ([]string, error) {
	decls := []string{"List<Tensor> params"}
	call := "defaults()"
	for _, n := range names {
		p, ok := o.param(n)
		if !ok {
			return nil, fmt.Errorf("optimiser %s: shortcut setting %q is not one of its settings", o.class, n)
		}
		cs := javaComponents(p)
		for _, c := range cs {
			typ := "double"
			if p.kind == "bool" {
				typ = "boolean"
			}
			decls = append(decls, typ+" "+c)
		}
		call += ".with" + pascal(p.name) + "(" + strings.Join(cs, ", ") + ")"
	}
	return []string{
		"    /** The defaults with the given " + andList(javaNames(names)) + ". */",
		"    public " + o.class + "(" + strings.Join(decls, ", ") + ") {",
		"        this(params, " + call + ");",
		"    }", "",
	}, nil
}

// andList is "a", "a and b" or "a, b and c".
func andList(items []string) string {
	if len(items) < 2 {
		return strings.Join(items, "")
	}
	return strings.Join(items[:len(items)-1], ", ") + " and " + items[len(items)-1]
}

func javaNames(names []string) []string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = camel(n)
	}
	return out
}

// javaAttrs is the settings of the record v as the attributes the library
// reads.
func javaAttrs(o optimizer, v string) []string {
	var attrs []string
	for _, p := range o.params {
		var args []string
		for _, c := range javaComponents(p) {
			args = append(args, v+"."+c+"()")
		}
		attrs = append(attrs, fmt.Sprintf("Attr.of(%q, %s)", p.name, strings.Join(args, ", ")))
	}
	return attrs
}

// javaOptimizer is one optimiser's class file.
func javaOptimizer(o optimizer) (file, error) {
	var L []string
	add := func(lines ...string) { L = append(L, lines...) }
	add("// "+header, "", "package dev.webtensor.optim;", "")
	if o.base == "" {
		add("import dev.webtensor.Attr;")
	}
	add("import dev.webtensor.Tensor;", "", "import java.util.List;", "", "/**")
	add(javaWrap(javaEscaper.Replace(o.camelText(o.doc)), 77, " * ")...)
	if o.math != "" {
		add(" *", " * <pre>")
		for _, l := range strings.Split(o.camelText(o.math), "\n") {
			add(" * " + javaEscaper.Replace(l))
		}
		add(" * </pre>")
	}
	if o.example != "" {
		add(" *", " * <pre>{@code", " * "+o.example, " * }</pre>")
	}
	add(" */")
	switch {
	case o.base != "":
		add("public final class " + o.class + " extends " + o.base + " {")
	case o.extended:
		add("public class " + o.class + " extends Optimizer {")
	default:
		add("public final class " + o.class + " extends Optimizer {")
	}
	if o.base == "" {
		add(javaOptions(o)...)
		add("")
	}
	var values []string
	for _, p := range o.params {
		switch p.kind {
		case "bool":
			values = append(values, fmt.Sprint(p.flag))
		default:
			for _, f := range p.floats {
				values = append(values, numText(f))
			}
		}
	}
	add("    /** "+javaDefaults(o)+" */", "    public static Options defaults() {")
	add(fill("        return new Options(", values, ");", "                ", 120)...)
	add("    }", "")
	if o.base == "" {
		add("    private final Options o;", "")
	}
	for _, s := range o.shortcuts {
		lines, err := javaShortcut(o, s)
		if err != nil {
			return file{}, err
		}
		add(lines...)
	}
	add(javaDocLines("    ", "Throws IllegalArgumentException for "+javaEscaper.Replace(o.rejects)+".")...)
	public := "    public " + o.class + "(List<Tensor> params, Options options) {"
	switch {
	case o.base != "":
		add(public, fmt.Sprintf("        super(%q, params, options);", o.kind), "    }")
	case o.extended:
		add(public, fmt.Sprintf("        this(%q, params, options);", o.kind), "    }", "",
			"    /** For the optimisers that extend this one with its settings: kind names theirs. */",
			"    "+o.class+"(String kind, List<Tensor> params, Options o) {")
		add(fill("        super(kind, params, o.lr(), List.of(", javaAttrs(o, "o"), "));", "                ", 120)...)
		add("        this.o = o;", "    }")
	default:
		add(public)
		add(fill(fmt.Sprintf("        super(%q, params, options.lr(), List.of(", o.kind), javaAttrs(o, "options"), "));",
			"                ", 120)...)
		add("        this.o = options;", "    }")
	}
	if o.base == "" {
		add("", "    /** The settings, with the learning rate in use now. */", "    public Options options() {",
			"        return o.withLr(lr());", "    }")
	}
	add("}")
	return file{javaOptimDir + o.class + ".java", []byte(strings.Join(L, "\n") + "\n")}, nil
}

func javaOptimizers(opts []optimizer) ([]file, error) {
	var files []file
	for _, o := range opts {
		f, err := javaOptimizer(o)
		if err != nil {
			return nil, err
		}
		files = append(files, f)
	}
	return files, nil
}
