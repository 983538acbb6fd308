package cuda

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"

	"github.com/webtensor/webtensor/core/config"
)

// diskCache keeps compiled kernels (CUBIN) between processes, keyed by the
// target (architecture and NVRTC version, the folder) and the hash of the
// source (the file), so a kernel is compiled once per machine.
type diskCache struct {
	dir string // "" when disabled
}

func newDiskCache(target string) diskCache {
	if config.Bool("WEBTENSOR_NO_DISK_CACHE") {
		return diskCache{}
	}
	root := config.String("WEBTENSOR_CACHE_DIR")
	if root == "" {
		base, err := os.UserCacheDir()
		if err != nil {
			return diskCache{}
		}
		root = filepath.Join(base, "webtensor")
	}
	return diskCache{dir: filepath.Join(root, "cuda", target)}
}

func sourceKey(src string) string {
	h := sha256.Sum256([]byte(src))
	return hex.EncodeToString(h[:16])
}

// load returns the cached image of src, if any.
func (c diskCache) load(src string) ([]byte, bool) {
	if c.dir == "" {
		return nil, false
	}
	b, err := os.ReadFile(filepath.Join(c.dir, sourceKey(src)+".cubin"))
	return b, err == nil && len(b) > 0
}

// store writes the image atomically; failures only cost a recompile.
func (c diskCache) store(src string, image []byte) {
	if c.dir == "" {
		return
	}
	if err := os.MkdirAll(c.dir, 0o755); err != nil {
		return
	}
	writeAtomically(filepath.Join(c.dir, sourceKey(src)+".cubin"), image)
}

// writeAtomically writes a file through a temporary name in its folder,
// renamed into place, so that a reader (another test process, too) never
// sees half of it.
func writeAtomically(path string, data []byte) error {
	f, err := os.CreateTemp(filepath.Dir(path), ".tmp-*")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name()) // fails harmlessly after the rename
	_, werr := f.Write(data)
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr != nil {
		return werr
	}
	return os.Rename(f.Name(), path)
}
