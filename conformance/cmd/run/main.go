// Command run is the Go conformance runner: every case of every vector
// file through the public Go API on one device, graded, written as a result
// file for `make conformance`.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	_ "github.com/webtensor/webtensor/backends/cpu"
	_ "github.com/webtensor/webtensor/backends/cuda"
	_ "github.com/webtensor/webtensor/backends/webgpu"
	"github.com/webtensor/webtensor/conformance"
	"github.com/webtensor/webtensor/core"
)

func main() {
	device := flag.String("device", "cpu", "device to run on (cpu, webgpu, cuda)")
	out := flag.String("out", "", "result file to write (default: stdout)")
	flag.Parse()
	// The CPU-fallback warning stays on (core.WarnWriter): a fallback in a
	// device column is a failure, and its warning says which op.
	dev, err := core.ParseDevice(*device)
	if err != nil {
		fail(err)
	}
	res := conformance.Result{SDK: "go", Backend: dev.Kind, Ops: map[string]conformance.OpResult{}}
	b, err := core.BackendFor(dev)
	if err != nil {
		// No such device here ("-"), or one whose backend failed to open
		// (the report fails the column): written, not a runner crash.
		res.Detail = conformance.OpenDetail(err)
	} else {
		core.ResetFallbacks()
		res.Detail = b.Capabilities().Description
		dir := conformance.VectorsDir()
		for _, def := range conformance.OpsWithSamples() {
			v, err := conformance.LoadVectors(dir, def.Name)
			if err != nil {
				res.Ops[def.Name] = conformance.OpResult{Status: "fail", Detail: err.Error()}
				continue
			}
			res.Ops[def.Name] = conformance.RunOp(def, v, dev)
		}
		res.Identity = conformance.RunIdentity(dev)
		if *out != "" {
			res.Checkpoint = strings.TrimSuffix(*out, ".json") + ".ckpt.safetensors"
			res.Training, err = conformance.TrainMLP(dev, res.Checkpoint)
			if err != nil {
				res.Training, res.Checkpoint = nil, "error: "+err.Error()
			}
		}
		res.Fallbacks = append([]core.Fallback{}, core.Fallbacks()...)
	}
	raw, _ := json.MarshalIndent(res, "", "  ")
	if *out == "" {
		fmt.Println(string(raw))
		return
	}
	if err := os.MkdirAll(filepath.Dir(*out), 0o755); err != nil {
		fail(err)
	}
	if err := os.WriteFile(*out, raw, 0o644); err != nil {
		fail(err)
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "conformance run:", err)
	os.Exit(1)
}
