package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	_ "github.com/webtensor/webtensor/backends/cpu"
	"github.com/webtensor/webtensor/conformance"
	"github.com/webtensor/webtensor/conformance/training"
)

func main() {
	dir := flag.String("results", "build/conformance", "directory of result files (*.json)")
	md := flag.String("md", "conformance/report.md", "markdown report to write")
	js := flag.String("json", "conformance/report.json", "JSON report to write")
	flag.Parse()
	files, _ := filepath.Glob(filepath.Join(*dir, "*.json"))
	sort.Strings(files)
	var cols []conformance.Result
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			fail(err)
		}
		var r conformance.Result
		if err := json.Unmarshal(raw, &r); err != nil {
			fail(fmt.Errorf("%s: %w", f, err))
		}
		cols = append(cols, r)
	}
	if len(cols) == 0 {
		fail(fmt.Errorf("no result files in %s: run the runners first (make conformance)", *dir))
	}
	ops := make([]string, 0)
	for name := range conformance.BuildIndex().Ops {
		ops = append(ops, name)
	}
	sort.Strings(ops)
	head := []string{"op"}
	for _, c := range cols {
		head = append(head, c.SDK+" / "+c.Backend)
	}
	lines := []string{"| " + strings.Join(head, " | ") + " |", "|" + strings.Repeat("---|", len(head))}
	var pass, fails, missing, na int
	dev := checkDevices(cols)
	bad := dev.bad
	fails += dev.fails
	for _, op := range ops {
		row := []string{op}
		for i, c := range cols {
			r, ok := c.Ops[op]
			switch {
			case c.Unavailable():
				row = append(row, "-") // no such device on this machine: not a supported cell
			case c.OpenFailed():
				row = append(row, "FAIL (did not open)") // named once in dev.bad
				fails++
			case ok && r.Status != "fail" && dev.fellBack[i][op]:
				row = append(row, "FAIL (ran on the CPU)") // named in dev.bad
				fails++
			case !ok:
				row = append(row, "missing")
				missing++
				bad = append(bad, op+" @ "+c.SDK+"/"+c.Backend+": missing")
			case r.Status == "pass":
				row = append(row, "pass")
				pass++
			case r.Status == "n/a":
				row = append(row, "n/a")
				na++
			default:
				row = append(row, fmt.Sprintf("FAIL (%.3g)", r.Worst))
				fails++
				bad = append(bad, op+" @ "+c.SDK+"/"+c.Backend+": "+r.Detail)
			}
		}
		lines = append(lines, "| "+strings.Join(row, " | ")+" |")
	}
	// Identity: every column's fingerprints must equal the first's.
	idLines := []string{}
	for _, c := range conformance.IdentityCases {
		want := ""
		agree := true
		for _, col := range cols {
			if !col.Ran() {
				continue
			}
			got, ok := col.Identity[c.Name]
			if !ok {
				got = "missing"
			}
			if want == "" {
				want = got
			}
			if got != want || strings.HasPrefix(got, "error") || got == "missing" {
				agree = false
				bad = append(bad, fmt.Sprintf("identity %s @ %s/%s: %.16s differs from %.16s", c.Name, col.SDK, col.Backend, got, want))
			}
		}
		verdict := "same bytes in every column"
		if !agree {
			verdict = "DIFFER"
			fails++
		} else {
			pass++
		}
		idLines = append(idLines, fmt.Sprintf("- %s (%s): %s (%.16s...)", c.Name, c.Op, verdict, want))
	}
	trainLines, tp, tf, tbad := trainingChecks(cols, *dir)
	pass, fails = pass+tp, fails+tf
	bad = append(bad, tbad...)
	supported := pass + fails + missing
	parity := 100.0
	if supported > 0 {
		parity = 100 * float64(pass) / float64(supported)
	}
	summary := fmt.Sprintf("%d ops x %d columns: %d pass, %d fail, %d missing, %d n/a; parity %.2f%%",
		len(ops), len(cols), pass, fails, missing, na, parity)
	doc := "# Conformance report\n\nWritten by `make conformance`: every SDK runs every reference case " +
		"through its public API on each backend it has (see conformance/README.md).\n\n" + summary + "\n\nColumns " +
		"(a device column fails when any op call ran on the CPU; host-side work is listed, and must be declared):\n\n" +
		strings.Join(dev.rows, "\n") + "\n\nSeeded random streams, made through each SDK's own API:\n\n" +
		strings.Join(idLines, "\n") + "\n\nA 4-16-3 MLP trained for 20 Adam steps from the same seed in every SDK with an nn library, " +
		"and its checkpoints loaded across SDKs:\n\n" + strings.Join(trainLines, "\n") + "\n\n" + strings.Join(lines, "\n") + "\n"
	if len(bad) > 0 {
		doc += "\nNot passing:\n\n- " + strings.Join(bad, "\n- ") + "\n"
	}
	fmt.Println(strings.Join(lines, "\n"))
	fmt.Println(strings.Join(dev.rows, "\n"))
	fmt.Println(strings.Join(idLines, "\n"))
	fmt.Println(strings.Join(trainLines, "\n"))
	fmt.Println(summary)
	if err := os.WriteFile(*md, []byte(doc), 0o644); err != nil {
		fail(err)
	}
	// Checkpoint paths are where this run wrote them: the committed report
	// keeps the file name only (runners in temporary folders pass absolute
	// paths, which name the machine).
	for i := range cols {
		if c := cols[i].Checkpoint; c != "" && !strings.HasPrefix(c, "error") {
			cols[i].Checkpoint = filepath.Base(c)
		}
	}
	raw, _ := json.MarshalIndent(map[string]any{"summary": summary, "parity": parity, "columns": cols}, "", "  ")
	if err := os.WriteFile(*js, raw, 0o644); err != nil {
		fail(err)
	}
	if fails+missing > 0 {
		fmt.Fprintln(os.Stderr, "not passing:\n  "+strings.Join(bad, "\n  "))
		os.Exit(1)
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "conformance report:", err)
	os.Exit(1)
}

// trainingChecks compares the loss curves of the columns that trained the
// MLP, loads every column's checkpoint into a Go model and compares the
// weights, and collects what each SDK reported loading from the others.
func trainingChecks(cols []conformance.Result, dir string) (lines []string, pass, fails int, bad []string) {
	var ref *conformance.Result
	var refVals map[string][]float64
	close := func(a, b float64) bool { return math.Abs(a-b) <= 1e-3+1e-3*math.Abs(b) }
	// Every SDK trains with the same Go optimiser (issue 19, item 2), so on
	// one device their curves and weights must agree bit for bit; across
	// devices the tolerance above applies. The browser's WebGPU is another
	// implementation (the page's navigator.gpu, whose shader compiler rounds
	// in its own way), so it is a device of its own; its CPU backend is the
	// same Go code as everyone's.
	type run struct {
		name   string
		losses []float64
		vals   map[string][]float64
	}
	firstOn := map[string]run{}
	for i := range cols {
		c := &cols[i]
		name := c.SDK + "/" + c.Backend
		if !c.Ran() || (c.Checkpoint == "" && c.Training == nil) {
			continue // no such device, or an SDK without an nn library (C)
		}
		if strings.HasPrefix(c.Checkpoint, "error") || len(c.Training) != training.Steps {
			fails++
			bad = append(bad, fmt.Sprintf("training @ %s: %s", name, c.Checkpoint))
			continue
		}
		// Runners write checkpoints next to their results; the path they
		// report is relative to where they ran, so the results folder wins.
		ckpt := c.Checkpoint
		if alt := filepath.Join(dir, filepath.Base(ckpt)); fileExists(alt) {
			ckpt = alt
		}
		vals, err := training.CheckpointValues(ckpt)
		if err != nil {
			fails++
			bad = append(bad, fmt.Sprintf("checkpoint of %s does not load in Go: %v", name, err))
			continue
		}
		note, bitOK := "", true
		device := c.Backend
		if c.SDK == "browser" && device != "cpu" {
			device += " in the browser"
		}
		if same, seen := firstOn[device]; !seen {
			firstOn[device] = run{name, c.Training, vals}
		} else if diff := bitDiff(same.losses, c.Training, same.vals, vals); diff != "" {
			bitOK, note = false, "not bit-identical to "+same.name
			bad = append(bad, fmt.Sprintf("training @ %s: not bit-identical to %s: %s", name, same.name, diff))
		} else {
			note = "bit-identical to " + same.name
		}
		if ref == nil {
			ref, refVals = c, vals
			lines = append(lines, fmt.Sprintf("- %s: loss %.4f -> %.4f (reference)", name, c.Training[0], c.Training[len(c.Training)-1]))
			pass++
			continue
		}
		ok := true
		for k := range c.Training {
			if !close(c.Training[k], ref.Training[k]) {
				ok = false
				bad = append(bad, fmt.Sprintf("training @ %s: step %d loss %v, reference %v", name, k, c.Training[k], ref.Training[k]))
				break
			}
		}
		for key, want := range refVals {
			got := vals[key]
			for j := range want {
				if j >= len(got) || !close(got[j], want[j]) {
					ok = false
					bad = append(bad, fmt.Sprintf("checkpoint of %s: %s[%d] differs from the reference", name, key, j))
					break
				}
			}
		}
		verdict := "same curve and weights as the reference"
		if !ok || !bitOK {
			verdict = "DIFFERS"
			fails++
		} else {
			pass++
		}
		if note != "" {
			verdict += "; " + note
		}
		lines = append(lines, fmt.Sprintf("- %s: loss %.4f -> %.4f, %s", name, c.Training[0], c.Training[len(c.Training)-1], verdict))
	}
	for _, c := range cols {
		for other, status := range c.LoadsCheckpoints {
			if status != "ok" {
				fails++
				bad = append(bad, fmt.Sprintf("%s/%s cannot load the %s checkpoint: %s", c.SDK, c.Backend, other, status))
			} else {
				pass++
			}
		}
		if len(c.LoadsCheckpoints) > 0 {
			lines = append(lines, fmt.Sprintf("- %s/%s loaded %d other checkpoints", c.SDK, c.Backend, len(c.LoadsCheckpoints)))
		}
	}
	return lines, pass, fails, bad
}

// bitDiff names the first loss or weight where two runs differ in any bit
// ("" when none does).
func bitDiff(lossA, lossB []float64, valsA, valsB map[string][]float64) string {
	if len(lossA) != len(lossB) {
		return fmt.Sprintf("the curve's length (%d, %d)", len(lossA), len(lossB))
	}
	for k := range lossA {
		if math.Float64bits(lossA[k]) != math.Float64bits(lossB[k]) {
			return fmt.Sprintf("the loss of step %d (%v, %v)", k, lossA[k], lossB[k])
		}
	}
	for _, key := range slices.Sorted(maps.Keys(valsA)) {
		a, b := valsA[key], valsB[key]
		if len(a) != len(b) {
			return fmt.Sprintf("%s's length", key)
		}
		for j := range a {
			if math.Float64bits(a[j]) != math.Float64bits(b[j]) {
				return fmt.Sprintf("%s[%d] (%v, %v)", key, j, a[j], b[j])
			}
		}
	}
	return ""
}

func fileExists(p string) bool {
	st, err := os.Stat(p)
	return err == nil && !st.IsDir()
}
