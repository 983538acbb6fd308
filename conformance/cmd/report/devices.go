package main

import (
	"fmt"
	"sort"
	"strings"

	"github.com/webtensor/webtensor/conformance"
	"github.com/webtensor/webtensor/core"
)

// Honest device columns: a column is only "-" when the machine has no such
// device, a device column's ops all ran on that device, and what its
// kernels did on the host was declared (DeclareHostWork, docs/ops.md).

// deviceReport is what the device checks add to the report.
type deviceReport struct {
	rows []string // the Columns table, one row per column
	// fellBack[i] holds the ops of column i that ran on the CPU instead of
	// its device: their cells fail.
	fellBack []map[string]bool
	fails    int
	bad      []string
}

// checkDevices builds the Columns table (with the fallback column) and
// fails columns whose device did not open on a machine that has it, device
// columns with CPU fallbacks, host work nobody declared, and native columns
// that say "no device" where another native SDK ran on that kind.
func checkDevices(cols []conformance.Result) deviceReport {
	r := deviceReport{rows: []string{
		"| column | runs on | CPU fallbacks | host-side work (declared, see docs/ops.md) |",
		"|---|---|---|---|",
	}}
	ranNative := map[string]string{} // backend kind -> a native column that ran on it
	for _, c := range cols {
		if c.Ran() && c.SDK != "browser" {
			ranNative[c.Backend] = c.SDK
		}
	}
	for _, c := range cols {
		name := c.SDK + " / " + c.Backend
		var fell map[string]bool
		switch {
		case c.Unavailable():
			r.rows = append(r.rows, fmt.Sprintf("| `%s` | - (%s) | | |", name, cell(short(strings.TrimPrefix(c.Detail, "unavailable: ")))))
			// The browser has its own GPU stack; the native SDKs share one.
			if other, ok := ranNative[c.Backend]; ok && c.SDK != "browser" {
				r.fails++
				r.bad = append(r.bad, fmt.Sprintf("%s says no %s device, but %s / %s ran on one: %s", name, c.Backend, other, c.Backend, c.Detail))
			}
		case c.OpenFailed():
			r.rows = append(r.rows, fmt.Sprintf("| `%s` | DID NOT OPEN: %s | | |", name, cell(strings.TrimPrefix(c.Detail, conformance.DetailOpenFailed))))
			r.fails++
			r.bad = append(r.bad, fmt.Sprintf("%s: this machine has the device but its backend did not open: %s", name, c.Detail))
		default:
			var row string
			row, fell = r.ranColumn(c)
			r.rows = append(r.rows, fmt.Sprintf("| `%s` | %s | %s |", name, cell(c.Detail), row))
		}
		r.fellBack = append(r.fellBack, fell)
	}
	return r
}

// ranColumn is a run column's fallback cells, and the ops that fell back.
func (r *deviceReport) ranColumn(c conformance.Result) (string, map[string]bool) {
	name := c.SDK + " / " + c.Backend
	if c.Fallbacks == nil {
		if c.Backend != "cpu" && c.SDK != "browser" {
			r.fails++
			r.bad = append(r.bad, name+": the runner did not report its fallbacks")
		}
		return "not reported | not reported", nil
	}
	cpu, host := c.DeviceFallbacks()
	fell := map[string]bool{}
	if len(cpu) > 0 && c.Backend != "cpu" {
		for op := range cpu {
			fell[op] = true
		}
		r.fails++
		r.bad = append(r.bad, fmt.Sprintf("%s: op calls ran on the CPU instead of %s: %s", name, c.Backend, counts(cpu)))
	}
	for op, f := range host {
		if f.Reason == "" {
			r.fails++
			r.bad = append(r.bad, fmt.Sprintf("%s: %s did host-side work no backend declared (core.DeclareHostWork)", name, op))
		}
	}
	return fmt.Sprintf("%s | %s", total(cpu), total(host)), fell
}

// total is "0", or the sum and the ops with their counts.
func total(m map[string]core.Fallback) string {
	if len(m) == 0 {
		return "0"
	}
	var n int64
	for _, f := range m {
		n += f.Count
	}
	return fmt.Sprintf("%d (%s)", n, counts(m))
}

// counts lists "op x n" by op name.
func counts(m map[string]core.Fallback) string {
	ops := make([]string, 0, len(m))
	for op := range m {
		ops = append(ops, op)
	}
	sort.Strings(ops)
	parts := make([]string, len(ops))
	for i, op := range ops {
		parts[i] = fmt.Sprintf("%s x%d", op, m[op].Count)
	}
	return strings.Join(parts, ", ")
}

// short cuts a long reason (the paths a driver was looked for at) for the
// table; report.json keeps it whole.
func short(s string) string {
	if len(s) > 120 {
		return s[:117] + "..."
	}
	return s
}

// cell makes s safe inside a Markdown table cell.
func cell(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "|", "\\|"), "\n", " ")
}
