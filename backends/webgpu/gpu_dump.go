package webgpu

import (
	"crypto/sha256"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/webtensor/webtensor/core/config"
)

// dumpKernel writes a kernel's source to $WEBTENSOR_DUMP_WGSL, if set, named
// by its cache key, so users can read and profile what runs.
func dumpKernel(key, src string) {
	dir := config.String("WEBTENSOR_DUMP_WGSL")
	if dir == "" {
		return
	}
	name := strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '_' {
			return r
		}
		return '-'
	}, key)
	if len(name) > 60 {
		name = name[:60]
	}
	sum := sha256.Sum256([]byte(key))
	_ = os.MkdirAll(dir, 0o755)
	_ = os.WriteFile(filepath.Join(dir, fmt.Sprintf("%s-%x.wgsl", name, sum[:4])), []byte(src), 0o644)
}
