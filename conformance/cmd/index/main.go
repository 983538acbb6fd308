// Command index writes conformance/vectors/index.json, the op list and
// tolerances every SDK's conformance runner reads; -check fails when the
// file is stale.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"

	_ "github.com/webtensor/webtensor/backends/cpu"
	"github.com/webtensor/webtensor/conformance"
)

func main() {
	check := flag.Bool("check", false, "fail when the index is stale instead of writing it")
	flag.Parse()
	path := filepath.Join(conformance.VectorsDir(), "index.json")
	want := conformance.BuildIndex().JSON()
	if *check {
		have, err := os.ReadFile(path)
		if err != nil || !bytes.Equal(have, want) {
			fmt.Fprintf(os.Stderr, "%s is stale: run make generate\n", path)
			os.Exit(1)
		}
		return
	}
	if err := os.WriteFile(path, want, 0o644); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
