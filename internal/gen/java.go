package main

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/webtensor/webtensor/core"
)

// The Java SDK's op methods, in sdk/java/src/main/java/dev/webtensor/: per
// category, the static functions (OpsActivation, ...) and the Tensor methods
// of the ops whose first input is a tensor (TensorOpsActivation, ...). Each
// category's class extends the previous one's, Ops and TensorOps end the two
// chains, and Tensor extends TensorOps: Ops.softmax and x.softmax() find
// every op while each file holds one category.

const javaDir = "sdk/java/src/main/java/dev/webtensor/"

var javaKeywords = map[string]bool{}

func init() {
	for _, k := range strings.Fields(`abstract assert boolean break byte case catch char class const continue
		default do double else enum extends final finally float for goto if implements import instanceof int
		interface long native new package private protected public return short static strictfp super switch
		synchronized this throw throws transient try void volatile while true false null record yield sealed
		permits`) {
		javaKeywords[k] = true
	}
}

func javaName(s string) string {
	c := camel(s)
	if javaKeywords[c] {
		return c + "_"
	}
	return c
}

type javaParam struct {
	java, typ, role, wire, kind string
	req                         bool
	doc                         string
}

func javaAttrType(kind string, nullable bool) (string, error) {
	boxed := map[string]string{"int": "Long", "float": "Double", "bool": "Boolean"}
	if b, ok := boxed[kind]; ok && nullable {
		return b, nil
	}
	t, ok := map[string]string{"int": "long", "float": "double", "bool": "boolean", "string": "String",
		"dtype": "DType", "ints": "long[]", "floats": "double[]"}[kind]
	if !ok {
		return "", fmt.Errorf("unknown attribute kind %q", kind)
	}
	return t, nil
}

// javaText is a default as the Javadoc shows it: numbers as the manifest
// writes them, lists as Java prints a List.
func javaText(v any) string {
	switch x := v.(type) {
	case []any:
		parts := make([]string, len(x))
		for i, e := range x {
			parts[i] = javaText(e)
		}
		return "[" + strings.Join(parts, ", ") + "]"
	case json.Number:
		return string(x)
	case nil:
		return "null"
	}
	return fmt.Sprint(v)
}

func javaAttrDoc(a core.ManifestAttr) string {
	d := a.Doc
	if len(a.Enum) > 0 {
		if d != "" {
			d += "; "
		}
		d += "one of " + strings.Join(a.Enum, ", ")
	}
	switch {
	case a.Required:
		d += " (required)"
	case a.Default != nil && a.Default != "":
		d += " (default " + javaText(a.Default) + ")"
	default:
		d += " (null: the library's default)"
	}
	return strings.TrimSpace(d)
}

// javaParams is the full parameter list: required inputs, required
// attributes, optional inputs, optional attributes, variadic inputs.
func javaParams(op core.ManifestOp) ([]javaParam, error) {
	var reqIn, optIn, reqAt, optAt, variadic []javaParam
	for _, in := range op.Inputs {
		switch {
		case in.Variadic:
			variadic = append(variadic, javaParam{javaName(in.Name), "Tensor...", "variadic", in.Name, "", true, "the input tensors"})
		case in.Optional:
			optIn = append(optIn, javaParam{javaName(in.Name), "Tensor", "input", in.Name, "", false, "optional input (null for none)"})
		default:
			reqIn = append(reqIn, javaParam{javaName(in.Name), "Tensor", "input", in.Name, "", true, "input"})
		}
	}
	for _, a := range op.Attrs {
		typ, err := javaAttrType(a.Kind, !a.Required && a.Default == nil)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", op.Name, err)
		}
		p := javaParam{javaName(a.Name), typ, "attr", a.Name, a.Kind, a.Required, javaAttrDoc(a)}
		if a.Required {
			reqAt = append(reqAt, p)
		} else {
			optAt = append(optAt, p)
		}
	}
	if len(variadic) > 0 && len(reqIn) > 0 {
		return nil, fmt.Errorf("%s: a variadic input next to other inputs", op.Name)
	}
	all := append(append(append(append(reqIn, reqAt...), optIn...), optAt...), variadic...)
	return all, nil
}

func javaRequired(ps []javaParam) []javaParam {
	var out []javaParam
	for _, p := range ps {
		if p.req {
			out = append(out, p)
		}
	}
	return out
}

// javaSignature is the parameter list; a trailing long[] becomes long...
func javaSignature(ps []javaParam) string {
	out := make([]string, len(ps))
	for i, p := range ps {
		t := p.typ
		if i == len(ps)-1 && t == "long[]" {
			t = "long..."
		}
		out[i] = t + " " + p.java
	}
	return strings.Join(out, ", ")
}

var javaAttrOf = map[string]string{"int": "Int", "float": "Float", "bool": "Bool", "string": "String",
	"dtype": "DType", "ints": "Ints", "floats": "Floats"}

func javaCall(op core.ManifestOp, ps []javaParam) string {
	var ins, attrs []string
	inputs := ""
	for _, p := range ps {
		switch p.role {
		case "variadic":
			inputs = p.java
		case "input":
			ins = append(ins, p.java)
		default:
			attrs = append(attrs, fmt.Sprintf("Attr.of%s(\"%s\", %s)", javaAttrOf[p.kind], p.wire, p.java))
		}
	}
	if inputs == "" {
		inputs = "new Tensor[] {" + strings.Join(ins, ", ") + "}"
	}
	args := ""
	if len(attrs) > 0 {
		args = ", " + strings.Join(attrs, ", ")
	}
	fn := "call1"
	if multiOutput(op) {
		fn = "call"
	}
	return fmt.Sprintf("Op.%s(\"%s\", %s%s)", fn, op.Name, inputs, args)
}

var javaEscaper = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", "*/", "*&#47;", "@", "&#64;",
	"{", "&#123;", "}", "&#125;")

var spaces = regexp.MustCompile(" +")

// javaWrap fills words into lines of at most width characters after prefix.
func javaWrap(text string, width int, prefix string) []string {
	words := spaces.Split(text, -1)
	for len(words) > 0 && words[len(words)-1] == "" {
		words = words[:len(words)-1]
	}
	var lines []string
	line := ""
	for _, w := range words {
		if line != "" && utf8.RuneCountInString(line)+1+utf8.RuneCountInString(w) > width {
			lines = append(lines, prefix+line)
			line = ""
		}
		if line != "" {
			line += " "
		}
		line += w
	}
	if line != "" {
		lines = append(lines, prefix+line)
	}
	return lines
}

func javadoc(op core.ManifestOp, ps []javaParam, full bool) []string {
	d := []string{"    /**"}
	d = append(d, javaWrap(javaEscaper.Replace(op.Doc), 96, "     * ")...)
	if full && len(ps) > 0 {
		d = append(d, "     *")
		for _, p := range ps {
			text := strings.Replace(javaEscaper.Replace("@param "+p.java+" "+p.doc), "&#64;param", "@param", 1)
			d = append(d, javaWrap(text, 96, "     * ")...)
		}
	} else if !full {
		d = append(d, "     * Optional inputs and attributes take the library's defaults.")
	}
	if multiOutput(op) {
		d = append(d, "     * @return the outputs: "+javaEscaper.Replace(strings.Join(op.Outputs, ", ")))
	}
	return append(d, "     */")
}

// javaBody is "return call;", with one attribute a line when the call is long.
func javaBody(call string) []string {
	line := "        return " + call + ";"
	if utf8.RuneCountInString(line) <= 110 {
		return []string{line}
	}
	parts := strings.Split(call, ", Attr.")
	out := []string{"        return " + parts[0] + ","}
	for i, p := range parts[1:] {
		end := ","
		if i == len(parts)-2 {
			end = ";"
		}
		out = append(out, "                Attr."+p+end)
	}
	return out
}

// javaStatics are an op's static functions: the short overload (required
// parameters only) when it has optional ones, and the full one.
func javaStatics(op core.ManifestOp) ([]string, error) {
	all, err := javaParams(op)
	if err != nil {
		return nil, err
	}
	req := javaRequired(all)
	ret := "Tensor"
	if multiOutput(op) {
		ret = "Tensor[]"
	}
	name := javaName(op.Name)
	var out []string
	if len(req) < len(all) {
		out = append(out, javadoc(op, req, false)...)
		out = append(out, "    public static "+ret+" "+name+"("+javaSignature(req)+") {")
		out = append(out, javaBody(javaCall(op, req))...)
		out = append(out, "    }", "")
	}
	out = append(out, javadoc(op, all, true)...)
	out = append(out, "    public static "+ret+" "+name+"("+javaSignature(all)+") {")
	out = append(out, javaBody(javaCall(op, all))...)
	return append(out, "    }", ""), nil
}

// javaMethods are the Tensor methods of an op whose first input is one
// tensor: this is that input.
func javaMethods(op core.ManifestOp) ([]string, error) {
	if len(op.Inputs) == 0 || op.Inputs[0].Variadic || op.Inputs[0].Optional {
		return nil, nil
	}
	all, err := javaParams(op)
	if err != nil {
		return nil, err
	}
	req := javaRequired(all)
	ret := "Tensor"
	if multiOutput(op) {
		ret = "Tensor[]"
	}
	name := javaName(op.Name)
	first := javaWrap(javaEscaper.Replace(op.Doc), 10_000, "")[0]
	lists := [][]javaParam{all}
	if len(req) < len(all) {
		lists = [][]javaParam{req, all}
	}
	var out []string
	for _, ps := range lists {
		rest := ps[1:]
		args := []string{"(Tensor) this"}
		for _, p := range rest {
			args = append(args, p.java)
		}
		out = append(out, "    /** "+first+" See {@link Ops#"+name+"}. */",
			"    public "+ret+" "+name+"("+javaSignature(rest)+") {",
			"        return Ops."+name+"("+strings.Join(args, ", ")+");",
			"    }", "")
	}
	return out, nil
}

// javaClass is one generated class: its declaration and body lines.
func javaClass(name, doc, decl string, body []string) file {
	for len(body) > 0 && body[len(body)-1] == "" {
		body = body[:len(body)-1]
	}
	var s strings.Builder
	s.WriteString("// " + header + "\n\npackage dev.webtensor;\n\n")
	s.WriteString("/** " + doc + " */\n" + decl + " {\n")
	for _, l := range body {
		s.WriteString(l + "\n")
	}
	s.WriteString("}\n")
	return file{javaDir + name + ".java", []byte(s.String())}
}

func javaOps(r *registry) ([]file, error) {
	var files []file
	staticParent, methodParent := "", ""
	for _, c := range r.categories {
		var statics, methods []string
		for _, op := range c.ops {
			s, err := javaStatics(op)
			if err != nil {
				return nil, err
			}
			m, err := javaMethods(op)
			if err != nil {
				return nil, err
			}
			statics = append(statics, s...)
			methods = append(methods, m...)
		}
		cls := "Ops" + pascal(c.name)
		// Public, so that reflection through Ops (scripting languages) can
		// call the inherited functions: javac makes no access bridges for
		// static methods.
		decl := "public abstract class " + cls + javaExtends(staticParent)
		files = append(files, javaClass(cls, "The "+c.name+" ops as static functions (generated); call them through Ops.",
			decl, append([]string{"    " + cls + "() {}", ""}, statics...)))
		staticParent = cls
		if len(methods) == 0 {
			continue
		}
		cls = "TensorOps" + pascal(c.name)
		decl = "abstract class " + cls + javaExtends(methodParent)
		files = append(files, javaClass(cls, "Tensor methods of the "+c.name+" ops (generated); Tensor extends this through TensorOps.",
			decl, append([]string{"    " + cls + "() {}", ""}, methods...)))
		methodParent = cls
	}
	files = append(files,
		javaClass("Ops", "Every public op of the manifest as a static function (generated): the end of a chain of one "+
			"class per op category, each extending the previous one.",
			"public final class Ops"+javaExtends(staticParent), []string{"    private Ops() {}"}),
		javaClass("TensorOps", "Tensor methods of the ops whose first input is a tensor (generated): the end of a chain "+
			"of one class per op category; Tensor extends this.",
			"abstract class TensorOps"+javaExtends(methodParent), []string{"    TensorOps() {}"}))
	return files, nil
}

func javaExtends(parent string) string {
	if parent == "" {
		return ""
	}
	return " extends " + parent
}
