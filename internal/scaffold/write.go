package scaffold

import (
	"bytes"
	"fmt"
	"go/format"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"text/template"
)

// Spec is what `webtensor op new` was asked for.
type Spec struct {
	Name     string // the op's name: lower-case letters, digits and underscores
	Formula  string // over x, or x and y for a two-input op
	Category string // unary or activation (one input; default unary); binary for two inputs
	Doc      string // the doc line; a default names the formula
}

// File is one file the scaffold writes or changes, relative to the repo.
type File struct {
	Path    string
	Content []byte
}

var opName = regexp.MustCompile(`^[a-z][a-z0-9_]*$`)

// Plan checks spec and returns the files to write: the OpDef, its training
// test and the reference module with the op's entry added. repo is the
// repository root; registered reports whether an op name is taken.
func Plan(repo string, spec Spec, registered func(string) bool) ([]File, error) {
	if !opName.MatchString(spec.Name) {
		return nil, fmt.Errorf("op name %q: use lower-case letters, digits and underscores, starting with a letter", spec.Name)
	}
	if registered(spec.Name) {
		return nil, fmt.Errorf("op %q is already registered (webtensor ops %s shows it); choose another name", spec.Name, spec.Name)
	}
	n, vars, err := parse(spec.Formula)
	if err != nil {
		return nil, err
	}
	binary := vars["y"]
	switch {
	case binary && spec.Category == "":
		spec.Category = "binary"
	case binary && spec.Category != "binary":
		return nil, fmt.Errorf("the formula uses y, so the op takes two inputs: its category is binary, not %q", spec.Category)
	case !binary && spec.Category == "":
		spec.Category = "unary"
	case !binary && spec.Category != "unary" && spec.Category != "activation":
		return nil, fmt.Errorf("category %q: a one-input op is unary or activation", spec.Category)
	}
	if spec.Doc == "" {
		spec.Doc = spec.Formula + ", elementwise"
		if binary {
			spec.Doc += " with broadcasting"
		}
		spec.Doc += "; integers give f32."
	}
	base := "ops_" + spec.Category + "_" + spec.Name
	for _, p := range []string{filepath.Join("core", base+".go"), filepath.Join("core", base+"_test.go")} {
		if _, err := os.Stat(filepath.Join(repo, p)); err == nil {
			return nil, fmt.Errorf("%s exists already; remove it or choose another name", p)
		}
	}
	data := templateData(spec, n, binary)
	var files []File
	for _, f := range []struct {
		path string
		tmpl *template.Template
	}{{filepath.Join("core", base+".go"), opTemplate}, {filepath.Join("core", base+"_test.go"), testTemplate}} {
		var buf bytes.Buffer
		if err := f.tmpl.Execute(&buf, data); err != nil {
			return nil, err
		}
		src, err := format.Source(buf.Bytes())
		if err != nil {
			return nil, fmt.Errorf("scaffold: the generated %s does not parse: %v\n%s", f.path, err, buf.String())
		}
		files = append(files, File{Path: f.path, Content: src})
	}
	refs, err := addReference(repo, spec, data["Torch"].(string), binary)
	if err != nil {
		return nil, err
	}
	return append(files, refs), nil
}

// Write writes the planned files under repo.
func Write(repo string, files []File) error {
	for _, f := range files {
		if err := os.WriteFile(filepath.Join(repo, f.Path), f.Content, 0o644); err != nil {
			return err
		}
	}
	return nil
}

func templateData(spec Spec, n *node, binary bool) map[string]any {
	positive := uses(n, "log", "sqrt", "log1p") || powFractional(n)
	d := map[string]any{
		"Name": spec.Name, "Doc": strconv.Quote(spec.Doc), "Category": spec.Category, "Formula": spec.Formula,
		"Go": goCode(n), "GPU": gpuConcat(n), "Torch": torchCode(n), "Binary": binary,
		"DX": opsCode(deriv(n, "x"), "x"), "Positive": positive, "Kinks": uses(n, "abs"),
	}
	if binary {
		d["DY"] = opsCode(deriv(n, "y"), "y")
	}
	d["Math"] = strings.Contains(d["Go"].(string), "math.")
	return d
}

func powFractional(n *node) bool {
	if n.kind == "pow" && n.val != float64(int64(n.val)) {
		return true
	}
	for _, a := range n.args {
		if powFractional(a) {
			return true
		}
	}
	return false
}

// gpuConcat is gpuCode as Go code that builds the expression from the
// operand strings x and y.
func gpuConcat(n *node) string {
	src := gpuCode(n)
	var parts []string
	lit := ""
	for i := 0; i < len(src); i++ {
		c := src[i]
		isVar := (c == 'x' || c == 'y') && (i == 0 || !isIdent(src[i-1])) && (i+1 == len(src) || !isIdent(src[i+1]))
		if !isVar {
			lit += string(c)
			continue
		}
		if lit != "" {
			parts = append(parts, strconv.Quote(lit))
			lit = ""
		}
		parts = append(parts, string(c))
	}
	if lit != "" {
		parts = append(parts, strconv.Quote(lit))
	}
	return strings.Join(parts, " + ")
}

func isIdent(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// addReference adds the op's PyTorch reference to the category's REFS.
func addReference(repo string, spec Spec, torch string, binary bool) (File, error) {
	path := filepath.Join("conformance", "gen", "refs", spec.Category+".py")
	src, err := os.ReadFile(filepath.Join(repo, path))
	if err != nil {
		return File{}, fmt.Errorf("reading the references: %v (run from the repository root, or pass --repo)", err)
	}
	s := string(src)
	start := strings.Index(s, "\nREFS = {\n")
	end := -1
	if start >= 0 {
		end = strings.Index(s[start:], "\n}\n")
	}
	if end < 0 {
		return File{}, fmt.Errorf("%s has no REFS = {...} dict to add %s to", path, spec.Name)
	}
	end += start
	params := "x"
	if binary {
		params = "x, y"
	}
	entry := fmt.Sprintf("\n    %q: _float_result(lambda %s: %s),  # webtensor op new: %s", spec.Name, params, torch, spec.Formula)
	s = s[:end] + entry + s[end:]
	if !strings.Contains(s, "_float_result") || !regexp.MustCompile(`(?m)^from \._util import .*_float_result`).MatchString(s) {
		s = strings.Replace(s, "from ._util import ", "from ._util import _float_result, ", 1)
	}
	return File{Path: path, Content: []byte(s)}, nil
}
