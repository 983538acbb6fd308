package safetensors

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// Saving: a temporary file beside the target, renamed over it when whole.
// Every SDK names its temporary ".NAME.tmp-PID-RANDOM" (PID: the writer's
// process id) and, before writing, removes the temporaries of earlier saves
// to the same path whose writer is gone: a save killed mid-write left its
// temporary, up to the checkpoint's size, forever.

// staleAfter is how long a temporary without a writer's PID in its name
// (from an older version) must go unmodified before a save removes it.
const staleAfter = time.Hour

// TempPrefix is the name every SDK gives a temporary file of a save to path,
// before its PID: ".NAME.tmp-".
func TempPrefix(path string) string { return "." + filepath.Base(path) + ".tmp-" }

// RemoveStaleTemps removes the temporary files of earlier saves to path
// whose writer has exited (its PID names no live process), or, for names
// without a PID, that have not changed for staleAfter. A save in progress
// in a live process is left alone. It is best effort: what cannot be read
// or removed stays, and it returns the names it removed.
func RemoveStaleTemps(path string) []string {
	dir, prefix := filepath.Dir(path), TempPrefix(path)
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var removed []string
	for _, e := range entries {
		name := e.Name()
		if !strings.HasPrefix(name, prefix) || !e.Type().IsRegular() || !stale(e, name[len(prefix):]) {
			continue
		}
		if os.Remove(filepath.Join(dir, name)) == nil {
			removed = append(removed, name)
		}
	}
	return removed
}

// stale decides for one temporary whose name continues with rest.
func stale(e os.DirEntry, rest string) bool {
	if pidText, _, ok := strings.Cut(rest, "-"); ok {
		if pid, err := strconv.Atoi(pidText); err == nil && pid > 0 {
			if alive, known := processAlive(pid); known {
				return !alive
			}
		}
	}
	info, err := e.Info()
	return err == nil && time.Since(info.ModTime()) > staleAfter
}

// WriteFile writes atomically: a temporary file in the same directory is
// written, synced and renamed over path, so a failed save never leaves a
// broken file where a good one was. Stale temporaries of earlier saves to
// path are removed first.
func WriteFile(path string, tensors map[string]Tensor, metadata map[string]string) (err error) {
	RemoveStaleTemps(path)
	tmp, err := os.CreateTemp(filepath.Dir(path), TempPrefix(path)+fmt.Sprintf("%d-*", os.Getpid()))
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	if err = Encode(tmp, tensors, metadata); err != nil {
		return err
	}
	if err = tmp.Sync(); err != nil {
		return err
	}
	if err = tmp.Close(); err != nil {
		return err
	}
	if err = os.Rename(tmp.Name(), path); err != nil {
		return err
	}
	if dir, derr := os.Open(filepath.Dir(path)); derr == nil {
		dir.Sync() // make the rename durable; best effort on filesystems without directory sync
		dir.Close()
	}
	return nil
}
