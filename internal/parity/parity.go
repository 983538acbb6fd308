package parity

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
)

// Category is one part of the Python API: its name and its public names.
type Category struct {
	Name  string
	Names []string // sorted, as Python spells them (a submodule's with its prefix: "functional.relu")
}

// SDK is another SDK's public names, normalised (see key).
type SDK struct {
	Name string
	Keys map[string]bool
}

// key is how names are compared across languages: the last dotted part,
// lower case, without underscores.
func key(name string) string {
	if i := strings.LastIndexByte(name, '.'); i >= 0 {
		name = name[i+1:]
	}
	return strings.ToLower(strings.ReplaceAll(name, "_", ""))
}

var (
	pyDef     = regexp.MustCompile(`(?m)^(?:async )?def ([A-Za-z]\w*)\(`)
	pyClass   = regexp.MustCompile(`(?m)^class ([A-Za-z]\w*)`)
	pyAll     = regexp.MustCompile(`(?s)__all__\s*=\s*\[(.*?)\]`)
	pyQuoted  = regexp.MustCompile(`"([^"]+)"`)
	pyReexp   = regexp.MustCompile(`(?m)^from \.[\w.]* import (\w+) as (\w+)`)
	tsDecl    = regexp.MustCompile(`(?m)^export (?:async )?(?:function\*? |abstract class |class |const |let )(\w+)`)
	tsList    = regexp.MustCompile(`(?s)export \{([^}]*)\}`)
	tsModule  = regexp.MustCompile(`(?m)^export \* as (\w+) from`)
	javaClass = regexp.MustCompile(`public (?:static |final |abstract |sealed )*(?:class|interface|record|enum) (\w+)`)
	javaFunc  = regexp.MustCompile(`public (?:static |final |abstract |synchronized |default )*[\w<>\[\]?, .]+ (\w+)\(`)
)

func read(root string, rel ...string) (string, error) {
	b, err := os.ReadFile(filepath.Join(append([]string{root}, rel...)...))
	return string(b), err
}

// public are a Python module's top-level functions and classes.
func public(src string) []string {
	var out []string
	for _, re := range []*regexp.Regexp{pyDef, pyClass} {
		for _, m := range re.FindAllStringSubmatch(src, -1) {
			out = append(out, m[1])
		}
	}
	return out
}

// all is a module's __all__.
func all(src string) []string {
	m := pyAll.FindStringSubmatch(src)
	if m == nil {
		return nil
	}
	var out []string
	for _, q := range pyQuoted.FindAllStringSubmatch(m[1], -1) {
		out = append(out, q[1])
	}
	return out
}

// set sorts and dedupes names, dropping the excluded ones.
func set(names []string, exclude ...string) []string {
	var out []string
	for _, n := range names {
		if !slices.Contains(exclude, n) && !strings.HasPrefix(n, "_") {
			out = append(out, n)
		}
	}
	sort.Strings(out)
	return slices.Compact(out)
}

func prefixed(prefix string, names []string) []string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = prefix + n
	}
	return out
}

// Names of webtensor's top level that are a category of their own.
var (
	submodules   = []string{"nn", "optim", "cuda", "onnx", "data", "auto"}
	compileNames = []string{"compile", "trace"}
	pluginNames  = []string{"Plugin", "call", "load_plugin", "set_tuning_policy", "device_tuning"}
)

// Python reads the Python SDK's categories from sdk/python/webtensor.
func Python(root string) ([]Category, error) {
	pkg := filepath.Join(root, "sdk", "python", "webtensor")
	files := map[string]string{}
	for _, f := range []string{"__init__.py", "onnx.py", "cuda.py", "nn/__init__.py", "nn/functional.py", "nn/init.py",
		"nn/utils.py", "optim/__init__.py", "optim/lr_scheduler.py", "data/__init__.py", "auto.py"} {
		s, err := read(pkg, f)
		if err != nil {
			return nil, err
		}
		files[f] = s
	}
	var ops []string
	opFiles, err := filepath.Glob(filepath.Join(pkg, "_ops", "*.py"))
	if err != nil {
		return nil, err
	}
	for _, f := range opFiles {
		s, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		ops = append(ops, public(string(s))...)
	}
	init := files["__init__.py"]
	top := append(all(init), public(init)...)
	for _, m := range pyReexp.FindAllStringSubmatch(init, -1) {
		top = append(top, m[2])
	}
	excluded := slices.Concat(submodules, compileNames, pluginNames)
	return []Category{
		{"ops", set(ops)},
		{"core", set(top, excluded...)},
		{"compile", set(compileNames)},
		{"plugins", set(pluginNames)},
		{"nn", set(slices.Concat(all(files["nn/__init__.py"]), prefixed("functional.", public(files["nn/functional.py"])),
			prefixed("init.", public(files["nn/init.py"])), prefixed("utils.", all(files["nn/utils.py"]))), "functional", "init", "utils")},
		{"optim", set(slices.Concat(all(files["optim/__init__.py"]), prefixed("lr_scheduler.", public(files["optim/lr_scheduler.py"]))), "lr_scheduler")},
		{"data", set(all(files["data/__init__.py"]))},
		{"onnx", set(prefixed("onnx.", public(files["onnx.py"])))},
		{"cuda", set(prefixed("cuda.", public(files["cuda.py"])))},
		{"auto", set(prefixed("auto.", all(files["auto.py"])))},
	}, nil
}

// walk reads every file under dir whose name ends in ext.
func walk(dir, ext string, fn func(src string)) error {
	return filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ext) {
			return err
		}
		b, err := os.ReadFile(path)
		if err == nil {
			fn(string(b))
		}
		return err
	})
}

// JS reads the TypeScript exports of sdk/js/src.
func JS(root string) (SDK, error) {
	keys := map[string]bool{}
	err := walk(filepath.Join(root, "sdk", "js", "src"), ".ts", func(src string) {
		for _, re := range []*regexp.Regexp{tsDecl, tsModule} { // a module re-exported as a namespace (wt.multimodal) counts
			for _, m := range re.FindAllStringSubmatch(src, -1) {
				keys[key(m[1])] = true
			}
		}
		for _, m := range tsList.FindAllStringSubmatch(src, -1) {
			for _, part := range strings.Split(m[1], ",") {
				fields := strings.Fields(part)
				if len(fields) > 0 {
					keys[key(fields[len(fields)-1])] = true // "a as b" exports b
				}
			}
		}
	})
	return SDK{"JavaScript", keys}, err
}

// Java reads the public classes and methods of sdk/java/src/main.
func Java(root string) (SDK, error) {
	keys := map[string]bool{}
	err := walk(filepath.Join(root, "sdk", "java", "src", "main"), ".java", func(src string) {
		for _, re := range []*regexp.Regexp{javaClass, javaFunc} {
			for _, m := range re.FindAllStringSubmatch(src, -1) {
				keys[key(m[1])] = true
			}
		}
	})
	return SDK{"Java", keys}, err
}

// missing are the names of c an SDK lacks.
func missing(c Category, s SDK) []string {
	var out []string
	for _, n := range c.Names {
		if !s.Keys[key(n)] {
			out = append(out, n)
		}
	}
	return out
}

func pct(covered, total int) string {
	if total == 0 {
		return "-"
	}
	return fmt.Sprintf("%.1f%%", 100*float64(covered)/float64(total))
}

// Report is docs/parity.md for the repository at root.
func Report(root string) (string, error) {
	cats, err := Python(root)
	if err != nil {
		return "", err
	}
	js, err := JS(root)
	if err != nil {
		return "", err
	}
	java, err := Java(root)
	if err != nil {
		return "", err
	}
	sdks := []SDK{js, java}
	var b strings.Builder
	b.WriteString("<!-- Code generated by go test ./internal/parity -update. DO NOT EDIT. -->\n\n")
	b.WriteString("# SDK parity\n\n")
	b.WriteString("The share of the Python SDK's public API each other SDK has, by category (issue 22's target:\n")
	b.WriteString(">= 95%). A name counts as covered when the SDK has one spelt the same up to case and\n")
	b.WriteString("underscores (`manual_seed`, `manualSeed`); internal/parity says where the names are read.\n")
	b.WriteString("Op coverage by behaviour, every SDK on every backend, is conformance/report.md.\n\n")
	b.WriteString("| category | Python names |")
	for _, s := range sdks {
		b.WriteString(" " + s.Name + " |")
	}
	b.WriteString("\n| --- | ---: |" + strings.Repeat(" ---: |", len(sdks)) + "\n")
	total := 0
	covered := make([]int, len(sdks))
	for _, c := range cats {
		fmt.Fprintf(&b, "| %s | %d |", c.Name, len(c.Names))
		total += len(c.Names)
		for i, s := range sdks {
			n := len(c.Names) - len(missing(c, s))
			covered[i] += n
			b.WriteString(" " + pct(n, len(c.Names)) + " |")
		}
		b.WriteString("\n")
	}
	fmt.Fprintf(&b, "| **all** | %d |", total)
	for i := range sdks {
		b.WriteString(" **" + pct(covered[i], total) + "** |")
	}
	b.WriteString("\n")
	for _, s := range sdks {
		fmt.Fprintf(&b, "\n## Missing from %s\n\n", s.Name)
		none := true
		for _, c := range cats {
			if m := missing(c, s); len(m) > 0 {
				none = false
				fmt.Fprintf(&b, "- %s (%d): %s\n", c.Name, len(m), "`"+strings.Join(m, "`, `")+"`")
			}
		}
		if none {
			b.WriteString("Nothing.\n")
		}
	}
	return b.String(), nil
}
