//go:build !js

package webgpu

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// The cache grows by one file per kernel source and tuning decision, and
// fused kernels (keyed by their expression) make that open-ended, so each
// process prunes the directory once, when it first resolves it: temporary
// files a killed writer left behind are removed after an hour, and past
// maxEntryFiles entries the least recently written go first, down to three
// quarters of the cap. Another process reading a file removed under it
// sees a miss, which is what an absent entry is anyway.

// maxEntryFiles bounds the entries kept in one cache directory.
var maxEntryFiles = 4096

// staleTempAge is when a leftover temporary file counts as abandoned.
const staleTempAge = time.Hour

// prune tidies dir as described above; it never fails (a file it cannot
// remove stays).
func prune(dir string, now time.Time) (removed int) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return 0
	}
	type entry struct {
		path string
		mod  time.Time
	}
	var entries []entry
	for _, e := range ents {
		if !e.Type().IsRegular() {
			continue
		}
		info, err := e.Info()
		if err != nil {
			continue
		}
		path := filepath.Join(dir, e.Name())
		switch {
		case strings.HasPrefix(e.Name(), ".tmp-"):
			if now.Sub(info.ModTime()) > staleTempAge && os.Remove(path) == nil {
				removed++
			}
		case strings.HasSuffix(e.Name(), ".entry"):
			entries = append(entries, entry{path, info.ModTime()})
		}
	}
	if len(entries) <= maxEntryFiles {
		return removed
	}
	slices.SortFunc(entries, func(a, b entry) int { return a.mod.Compare(b.mod) })
	for _, e := range entries[:len(entries)-maxEntryFiles*3/4] {
		if os.Remove(e.path) == nil {
			removed++
		}
	}
	return removed
}
