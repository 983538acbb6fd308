//go:build !js

package webgpu

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/webtensor/webtensor/core"
	"github.com/webtensor/webtensor/core/config"
	"github.com/webtensor/webtensor/wgsl"
)

// diskCache keeps, one file per entry, what a new process can reuse: the
// WGSL source of each kernel key and the tuner's decisions. wgpu-native
// exposes no pipeline cache to serialise, so compiling stays per process;
// what the disk saves is re-timing variants (the expensive part of warm-up)
// and re-rendering sources.
//
// Each entry's key holds the format version, the device signature, a salt
// naming the code the entry depends on, and the entry's own name; its file
// is named by a hash of that key. A file is written to a temporary file in
// the same directory and renamed into place, so readers never see half of
// one and two writers both leave a whole one. A file whose header,
// checksum, key or JSON is wrong counts as corrupt, reads as a miss and is
// rewritten by the caller. A directory that refuses a write turns writing
// off with one warning; nothing here fails an op.
type diskCache struct {
	diskCounters
	device string // deviceSignature of the adapter

	mu       sync.Mutex
	resolved bool
	dir      string
	off      string // why there is no disk cache ("" when there is one)
	noWrite  bool   // the directory refused a write; reading goes on
}

// diskFormat is the entry format's version: it is in every key and header,
// so a new format never reads an old one's files.
const diskFormat = 1

// kernelsFingerprint hashes the embedded WGSL once; wgsl.Fingerprint reads
// every file each call.
var kernelsFingerprint = sync.OnceValue(wgsl.Fingerprint)

// maxEntryBytes bounds what a read accepts: a kernel source is a few KiB.
const maxEntryBytes = 8 << 20

// diskMagic starts every entry file, followed by diskFormat.
const diskMagic = "webtensor-cache"

// errCorrupt marks an entry file that exists but cannot be trusted.
var errCorrupt = errors.New("corrupt cache entry")

// diskEntry is an entry file's JSON payload. The full key is kept so that a
// file whose name matches by accident (or by copying) is not taken.
type diskEntry struct {
	Key   string          `json:"key"`
	Value json.RawMessage `json:"value"`
}

// cacheDir resolves the directory from the environment:
// WEBTENSOR_NO_DISK_CACHE turns the cache off, WEBTENSOR_CACHE_DIR names
// it, else $XDG_CACHE_HOME/webtensor, else os.UserCacheDir()/webtensor.
// Entries sit in a webgpu folder under it, apart from other caches there.
func cacheDir() (dir, off string) {
	if config.Bool("WEBTENSOR_NO_DISK_CACHE") {
		return "", "WEBTENSOR_NO_DISK_CACHE=" + config.String("WEBTENSOR_NO_DISK_CACHE")
	}
	if d := config.String("WEBTENSOR_CACHE_DIR"); d != "" {
		return filepath.Join(d, "webgpu"), ""
	}
	base := os.Getenv("XDG_CACHE_HOME")
	if base == "" {
		var err error
		if base, err = os.UserCacheDir(); err != nil {
			return "", fmt.Sprintf("no user cache directory: %v", err)
		}
	}
	return filepath.Join(base, "webtensor", "webgpu"), ""
}

// status is the entries' directory, or why there is none. The environment
// is read on first use (and again after reset), not when the device opens,
// so a process may point the cache elsewhere before its first kernel.
func (c *diskCache) status() (dir, off string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.resolved {
		c.dir, c.off = cacheDir()
		c.resolved, c.noWrite = true, false
		if c.off == "" {
			prune(c.dir, time.Now())
		}
	}
	return c.dir, c.off
}

// reset makes the next use read the environment again.
func (c *diskCache) reset() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.resolved = false
}

// entryKey is the full key of entry name of kind: format, kind, device and
// what the entry was derived from. A kernel source depends on the code that
// rendered it (codeIdentity); a tuning decision on the kernels it timed
// and on how they were timed (tuneRule).
func (c *diskCache) entryKey(kind, name string) string {
	salt := fmt.Sprintf("%s|rule%d", kernelsFingerprint(), tuneRule)
	if kind == entryKernel {
		salt = codeIdentity()
	}
	return fmt.Sprintf("v%d|%s|%s|%s|%s", diskFormat, kind, c.device, salt, name)
}

// entryFile is the file name of key: its kind, then a hash of it.
func entryFile(kind, key string) string {
	sum := sha256.Sum256([]byte(key))
	return kind + "-" + hex.EncodeToString(sum[:16]) + ".entry"
}

// path is where entry name of kind lives ("" when the cache is off).
func (c *diskCache) path(kind, name string) string {
	dir, off := c.status()
	if off != "" {
		return ""
	}
	return filepath.Join(dir, entryFile(kind, c.entryKey(kind, name)))
}

// load decodes entry name of kind into v. A missing file is a miss; a bad
// one is counted corrupt and read as a miss, so the caller rebuilds the
// value and stores it over the bad file.
func (c *diskCache) load(kind, name string, v any) bool {
	path := c.path(kind, name)
	if path == "" {
		return false
	}
	value, err := readEntry(path, c.entryKey(kind, name))
	if err == nil {
		err = json.Unmarshal(value, v)
		if err != nil {
			err = fmt.Errorf("%w: %v", errCorrupt, err)
		}
	}
	switch {
	case err == nil:
		c.hits.Add(1)
		return true
	case errors.Is(err, errCorrupt):
		c.corrupt.Add(1)
	default:
		c.misses.Add(1) // absent or unreadable
	}
	return false
}

// store writes v as entry name of kind.
func (c *diskCache) store(kind, name string, v any) {
	path := c.path(kind, name)
	if path == "" || c.writingOff() {
		return
	}
	value, err := json.Marshal(v)
	if err != nil {
		return // a value of ours that JSON cannot hold: a bug, but no reason to fail the op
	}
	payload, err := json.Marshal(diskEntry{Key: c.entryKey(kind, name), Value: value})
	if err != nil {
		return
	}
	if err := writeAtomic(path, encodeEntry(payload)); err != nil {
		c.stopWriting(filepath.Dir(path), err)
		return
	}
	c.writes.Add(1)
}

func (c *diskCache) writingOff() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.noWrite
}

// stopWriting turns writing off after the first failure, with one warning:
// an unwritable cache costs speed, never correctness.
func (c *diskCache) stopWriting(dir string, err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.noWrite {
		return
	}
	c.noWrite = true
	if core.WarnWriter != nil {
		fmt.Fprintf(core.WarnWriter, "webtensor: warning: cannot write the kernel cache in %s (%v); "+
			"continuing without saving kernels (set WEBTENSOR_CACHE_DIR or WEBTENSOR_NO_DISK_CACHE=1)\n", dir, err)
	}
}

// scan calls fn with the name and value of each valid entry of kind made
// for this device and code, for reports; it counts nothing.
func (c *diskCache) scan(kind string, fn func(name string, value json.RawMessage)) {
	dir, off := c.status()
	if off != "" {
		return
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	prefix := c.entryKey(kind, "")
	for _, e := range ents {
		if !strings.HasPrefix(e.Name(), kind+"-") || !strings.HasSuffix(e.Name(), ".entry") {
			continue
		}
		raw, err := readFileChecked(filepath.Join(dir, e.Name()))
		if err != nil {
			continue
		}
		var ent diskEntry
		if decodeEntry(raw, &ent) != nil {
			continue
		}
		if name, ok := strings.CutPrefix(ent.Key, prefix); ok {
			fn(name, ent.Value)
		}
	}
}

// encodeEntry frames payload: a magic and version line, a checksum line,
// then the payload.
func encodeEntry(payload []byte) []byte {
	sum := sha256.Sum256(payload)
	head := fmt.Sprintf("%s %d\n%x\n", diskMagic, diskFormat, sum)
	return append([]byte(head), payload...)
}

// decodeEntry checks a file's frame and decodes its payload into ent.
func decodeEntry(raw []byte, ent *diskEntry) error {
	magic, rest, ok1 := bytes.Cut(raw, []byte("\n"))
	sum, payload, ok2 := bytes.Cut(rest, []byte("\n"))
	if !ok1 || !ok2 {
		return fmt.Errorf("%w: no header (%d bytes)", errCorrupt, len(raw))
	}
	if want := fmt.Sprintf("%s %d", diskMagic, diskFormat); string(magic) != want {
		return fmt.Errorf("%w: header %.40q, want %q", errCorrupt, magic, want)
	}
	got := sha256.Sum256(payload)
	if hex.EncodeToString(got[:]) != string(sum) {
		return fmt.Errorf("%w: checksum %.64q does not match the %d-byte payload", errCorrupt, sum, len(payload))
	}
	if err := json.Unmarshal(payload, ent); err != nil {
		return fmt.Errorf("%w: %v", errCorrupt, err)
	}
	return nil
}

// readEntry returns the value stored under key at path.
func readEntry(path, key string) (json.RawMessage, error) {
	raw, err := readFileChecked(path)
	if err != nil {
		return nil, err
	}
	var ent diskEntry
	if err := decodeEntry(raw, &ent); err != nil {
		return nil, err
	}
	if ent.Key != key {
		return nil, fmt.Errorf("%w: %s holds key %q, not %q", errCorrupt, path, ent.Key, key)
	}
	return ent.Value, nil
}

// readFileChecked reads a regular file of at most maxEntryBytes: anything
// else in the directory (a FIFO would block a read forever, a huge file
// would be read whole) is corrupt.
func readFileChecked(path string) ([]byte, error) {
	st, err := os.Lstat(path)
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() || st.Size() > maxEntryBytes {
		return nil, fmt.Errorf("%w: %s is a %v of %d bytes, not a regular file of at most %d", errCorrupt, path, st.Mode().Type(), st.Size(), maxEntryBytes)
	}
	return os.ReadFile(path)
}

// writeAtomic writes data to path through a temporary file in the same
// directory and a rename, which replaces the file in one step.
func writeAtomic(path string, data []byte) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(dir, ".tmp-*")
	if err != nil {
		return err
	}
	_, werr := tmp.Write(data)
	cerr := tmp.Close()
	if err := errors.Join(werr, cerr); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	if err := os.Chmod(tmp.Name(), 0o644); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	return nil
}

// codeIdentity names the code that renders kernels. A kernel's source is a
// function of its key and of this code, so a rebuilt program must not read
// sources an older build wrote. Build information (version, VCS revision)
// cannot tell two builds of an edited tree apart, so the size and
// modification time of the file holding this code go in too.
var codeIdentity = sync.OnceValue(func() string {
	h := sha256.New()
	fmt.Fprintln(h, core.Version, kernelsFingerprint())
	if bi, ok := debug.ReadBuildInfo(); ok {
		fmt.Fprintln(h, bi.GoVersion, bi.Main.Path, bi.Main.Version, bi.Main.Sum)
		for _, s := range bi.Settings {
			if strings.HasPrefix(s.Key, "vcs.") {
				fmt.Fprintln(h, s.Key, s.Value)
			}
		}
	}
	if file := codeFile(); file != "" {
		if st, err := os.Stat(file); err == nil {
			fmt.Fprintln(h, file, st.Size(), st.ModTime().UnixNano())
		}
	}
	return hex.EncodeToString(h.Sum(nil)[:8])
})

// codeFile is the file this package was loaded from. That is the
// executable, except inside another program (libwebtensor.so under Python
// or Java), where Linux's /proc/self/maps names the library mapped at the
// address of this very function.
func codeFile() string {
	if raw, err := os.ReadFile("/proc/self/maps"); err == nil {
		pc := uint64(reflect.ValueOf(codeFile).Pointer())
		for _, line := range strings.Split(string(raw), "\n") {
			f := strings.Fields(line) // range perms offset dev inode path
			if len(f) < 6 || !strings.HasPrefix(f[5], "/") {
				continue
			}
			lo, hi, _ := strings.Cut(f[0], "-")
			a, err1 := strconv.ParseUint(lo, 16, 64)
			b, err2 := strconv.ParseUint(hi, 16, 64)
			if err1 == nil && err2 == nil && a <= pc && pc < b {
				return strings.Join(f[5:], " ")
			}
		}
	}
	exe, err := os.Executable()
	if err != nil {
		return ""
	}
	return exe
}
