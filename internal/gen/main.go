package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"

	// Everything that registers ops or declares host-side work, so the
	// manifest and docs/ops.md list all of it whatever links this program.
	_ "github.com/webtensor/webtensor/backends/cpu"
	_ "github.com/webtensor/webtensor/backends/cuda"
	_ "github.com/webtensor/webtensor/backends/webgpu"
	_ "github.com/webtensor/webtensor/geom"
)

func main() {
	check := flag.Bool("check", false, "write nothing; list the files that differ from the registry and exit 1 if any does")
	root := flag.String("root", "", "the repository root (default: the folder above the working directory holding go.mod)")
	flag.Parse()
	if err := run(*root, *check); err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
}

func run(root string, check bool) error {
	if root == "" {
		var err error
		if root, err = findRoot(); err != nil {
			return err
		}
	}
	r, err := loadRegistry()
	if err != nil {
		return err
	}
	files, err := generateAll(r)
	if err != nil {
		return err
	}
	changes, err := reconcile(root, files, ownedGlobs(), check)
	if err != nil {
		return err
	}
	for _, c := range changes {
		verb := "wrote"
		switch {
		case check:
			verb = "stale:"
		case c.why == "no longer generated":
			verb = "removed"
		}
		fmt.Fprintf(os.Stderr, "gen: %s %s (%s)\n", verb, c.path, c.why)
	}
	if check && len(changes) > 0 {
		return fmt.Errorf("%d generated files are stale: run make generate and commit the result", len(changes))
	}
	return nil
}

// findRoot walks up from the working directory to the folder with go.mod
// (go generate runs this in core/, make in the root).
func findRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no go.mod above the working directory: pass -root")
		}
		dir = parent
	}
}
