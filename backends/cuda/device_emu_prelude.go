//go:build linux && cgo

package cuda

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// emuFlags are the host compiler's flags for every kernel and for the
// precompiled prelude: GCC takes a precompiled header only when the flags
// that shape code generation match.
var emuFlags = []string{"-std=c++17", "-O1", "-w", "-fPIC"}

// precompiledPrelude returns the line that includes emu_head.h and the
// prelude, both precompiled, in place of their text at the start of a
// kernel's source; "" when they could not be precompiled (the kernel then
// compiles from its full text). The system headers and the prelude are
// three quarters of a kernel's parse: the CI's emulator suite compiles some
// 2,500 kernels, each about twice as fast with the header precompiled.
//
// A compiler that cannot read the precompiled file (another version, or
// clang, which looks for .pch) reads the header's text instead, so a kernel
// compiles the same either way.
func (d *emuDevice) precompiledPrelude() string {
	d.preludeOnce.Do(func() {
		text := emuHead + prelude + "\n"
		h := sha256.Sum256([]byte(d.cxx + "\x00" + strings.Join(emuFlags, " ") + "\x00" + text))
		name := "prelude-" + hex.EncodeToString(h[:12]) + ".h"
		header := filepath.Join(d.dir, name)
		if _, err := os.Stat(header + ".gch"); err != nil {
			if err := d.precompile(header, text); err != nil {
				return
			}
		}
		d.preludeInclude = "#include \"" + name + "\"\n"
	})
	return d.preludeInclude
}

// precompile writes the header and its precompiled form, each through a
// temporary name, so that a concurrent test process never reads half of
// either.
func (d *emuDevice) precompile(header, text string) error {
	if err := writeAtomically(header, []byte(text)); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(d.dir, filepath.Base(header)+"-*.gch")
	if err != nil {
		return err
	}
	tmp.Close()
	defer os.Remove(tmp.Name())
	cmd := exec.Command(d.cxx, append(emuFlags, "-x", "c++-header", "-o", tmp.Name(), header)...)
	if _, err := cmd.CombinedOutput(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), header+".gch")
}
