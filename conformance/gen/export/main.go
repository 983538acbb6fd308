package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"

	_ "github.com/webtensor/webtensor/backends/cpu"
	"github.com/webtensor/webtensor/conformance"
	"github.com/webtensor/webtensor/core"
	"github.com/webtensor/webtensor/core/safetensors"
)

func main() {
	dir := flag.String("dir", "build/vectors-in", "directory to write the inputs to (make_vectors.py reads them)")
	only := flag.String("op", "", "export only this op")
	flag.Parse()
	if err := os.MkdirAll(*dir, 0o755); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	failed := 0
	for _, def := range conformance.OpsWithSamples() {
		if *only != "" && def.Name != *only {
			continue
		}
		if err := export(*dir, def); err != nil {
			fmt.Fprintf(os.Stderr, "export %s: %v\n", def.Name, err)
			failed++
		}
	}
	if failed > 0 {
		os.Exit(1)
	}
}

func export(dir string, def *core.OpDef) error {
	tensors := map[string]safetensors.Tensor{}
	var cases []conformance.CaseSpec
	for _, s := range def.Samples {
		spec := conformance.SpecOf(def, s)
		ins := s.MakeInputs(def.Name, core.CPU)
		for i, t := range ins {
			if t == nil {
				continue
			}
			if t.DType().IsComplex() {
				t = t.ViewAsReal() // the files hold complex inputs as their pairs
			}
			st, err := safetensors.FromTensor(t)
			if err != nil {
				return fmt.Errorf("sample %s input %d: %w", s.Name, i, err)
			}
			tensors[conformance.TensorName(s.Name, "in", i)] = st
		}
		// Run the op once to learn the output dtypes and shapes Go declares;
		// the reference checks its own results against them.
		outs, err := core.CallDef(def, ins, s.ResolvedAttrs(def))
		if err != nil {
			return fmt.Errorf("sample %s: %w", s.Name, err)
		}
		for _, o := range outs {
			spec.Outputs = append(spec.Outputs, conformance.OutputSpecOf(o, def.Dynamic))
		}
		cases = append(cases, spec)
	}
	cj, err := json.Marshal(cases)
	if err != nil {
		return err
	}
	meta := map[string]string{"op": def.Name, "key": conformance.Key(def), "cases": string(cj), "complete": "false"}
	return safetensors.WriteFile(conformance.VectorPath(dir, def.Name), tensors, meta)
}
