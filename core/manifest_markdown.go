package core

import (
	"fmt"
	"io"
	"sort"
	"strings"
)

// Markdown renders the op reference (docs/ops.md, `webtensor ops --markdown`)
// from the manifest. Backends are left out: they depend on the machine, the
// reference must not.
func (m Manifest) Markdown() string {
	var w strings.Builder
	fmt.Fprintf(&w, "# Op reference\n\nGenerated from the op registry by `make generate` (`webtensor ops --markdown`); do not edit.\n")
	byCat := map[string][]ManifestOp{}
	for _, op := range m.Ops {
		if !op.Internal {
			byCat[op.Category] = append(byCat[op.Category], op)
		}
	}
	cats := make([]string, 0, len(byCat))
	for c := range byCat {
		cats = append(cats, c)
	}
	sort.Strings(cats)
	total := 0
	for _, c := range cats {
		fmt.Fprintf(&w, "\n## %s\n\n| op | inputs | attributes | grad | description |\n|---|---|---|---|---|\n", c)
		for _, op := range byCat[c] {
			total++
			ins := make([]string, len(op.Inputs))
			for i, in := range op.Inputs {
				s := in.Name
				if in.Variadic {
					s += "..."
				}
				if in.Optional {
					s += "?"
				}
				ins[i] = s
			}
			attrs := make([]string, len(op.Attrs))
			for i, a := range op.Attrs {
				s := fmt.Sprintf("%s: %s", a.Name, a.Kind)
				if a.Required {
					s += " (required)"
				} else if a.Default != nil {
					s += fmt.Sprintf(" = %v", a.Default)
				}
				attrs[i] = s
			}
			grad := ""
			if op.Differentiable {
				grad = "yes"
			}
			fmt.Fprintf(&w, "| `%s` | %s | %s | %s | %s |\n", op.Name, strings.Join(ins, ", "),
				strings.ReplaceAll(strings.Join(attrs, "<br>"), "|", "\\|"), grad, strings.ReplaceAll(op.Doc, "|", "\\|"))
		}
	}
	fmt.Fprintf(&w, "\n%d ops.\n", total)
	writeHostWork(&w, m.HostWork)
	return w.String()
}

// writeHostWork lists the kernels and library functions that do part of
// their work on the host although their data is on a device: each call of
// one is counted in the fallback report (kind "host").
func writeHostWork(w io.Writer, hw []HostWork) {
	if len(hw) == 0 {
		return
	}
	fmt.Fprintf(w, "\n## Host-side work on devices\n\nThese kernels and library functions read device memory back and "+
		"compute part of the op on the host. Every call that does is counted: `webtensor doctor`, the SDKs' fallback "+
		"calls (`wt.fallbacks()`, kind `host`) and the conformance report's host-work column.\n\n"+
		"| op | backend | what the host does |\n|---|---|---|\n")
	for _, h := range hw {
		backend := h.Backend
		if backend == AnyDevice {
			backend = "any device"
		}
		fmt.Fprintf(w, "| `%s` | %s | %s |\n", h.Op, backend, strings.ReplaceAll(h.Reason, "|", "\\|"))
	}
}
