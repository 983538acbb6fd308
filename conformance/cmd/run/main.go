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
	"github.com/webtensor/webtensor/conformance/training"
	"github.com/webtensor/webtensor/core"
)

func main() {
	device := flag.String("device", "cpu", "device to run on (cpu, webgpu, cuda)")
	out := flag.String("out", "", "result file to write (default: stdout)")
	flag.Parse()
	dev, err := core.ParseDevice(*device)
	if err != nil {
		fail(err)
	}
	checkpoint := ""
	if *out != "" {
		// The training check saves its checkpoint beside the result.
		if err := os.MkdirAll(filepath.Dir(*out), 0o755); err != nil {
			fail(err)
		}
		checkpoint = strings.TrimSuffix(*out, ".json") + ".ckpt.safetensors"
	}
	// The CPU-fallback warning stays on (core.WarnWriter): a fallback in a
	// device column is a failure, and its warning says which op.
	res := conformance.RunColumn(dev)
	if checkpoint != "" {
		training.Record(&res, dev, checkpoint)
	}
	raw, _ := json.MarshalIndent(res, "", "  ")
	if *out == "" {
		fmt.Println(string(raw))
		return
	}
	if err := os.WriteFile(*out, raw, 0o644); err != nil {
		fail(err)
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "conformance run:", err)
	os.Exit(1)
}
