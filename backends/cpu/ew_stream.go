package cpu

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"unsafe"

	"github.com/webtensor/webtensor/core"
)

// Streaming stores for the memory-bound ops: f32 add, sub, mul and div,
// and the unary ops of a few instructions (sqrt, neg, abs, square, relu).
// A cached store first reads the line it overwrites (a read for
// ownership), so add over arrays that outgrow the last-level cache moves
// four bytes for every three it needs, and the output it leaves in the
// cache is evicted before a later op can read it. Stores that go around
// the caches (VMOVNTPS) skip that read: add over 4M f32 at one thread went
// from 28-32 to 50-53 GB/s on an AMD EPYC (Zen 4) in C, and PyTorch's
// cached-store kernel streams 30-40 there. Near and below the cache's size
// the cached store can win: an op repeated over the same tensors finds
// them in the cache (relu over 4M f32, 32 MB in and out against a 32 MB
// L3, ran at 58-100 GB/s cached against 53-95 streamed at two threads).

// streamMinBytes is the least an op's operands and output together span
// for it to store around the caches: a quarter more than the last-level
// cache, past the sizes where the cached store still won on that EPYC
// (add over 4M f32, 48 MB, streams; relu over 4M, 32 MB, does not; relu
// over 5M, 40 MB, streams: 38-40 against 24-25 GB/s at one thread, about
// even at two). It is read from sysfs on the first op large enough to
// ask (streamThreshold), not at package init: most programs never do.
var (
	streamMinBytes int
	streamMinOnce  sync.Once
)

// streamThreshold is streamMinBytes, measured on first use.
func streamThreshold() int {
	streamMinOnce.Do(func() { streamMinBytes = lastLevelCacheBytes() * 5 / 4 })
	return streamMinBytes
}

// defaultLastLevelCache is assumed where the size cannot be read (other
// systems than Linux, containers that hide sysfs): a common L3 per core
// complex.
const defaultLastLevelCache = 32 << 20

// lastLevelCacheBytes reads the size of the highest cache level of CPU 0
// from sysfs.
func lastLevelCacheBytes() int {
	dirs, _ := filepath.Glob("/sys/devices/system/cpu/cpu0/cache/index*")
	best, size := 0, 0
	for _, d := range dirs {
		level, err1 := readSysInt(filepath.Join(d, "level"))
		bytes, err2 := readSysInt(filepath.Join(d, "size"))
		if err1 == nil && err2 == nil && level > best && bytes > 0 {
			best, size = level, bytes
		}
	}
	if size == 0 {
		return defaultLastLevelCache
	}
	return size
}

// readSysInt reads a sysfs number, with a K or M suffix for sizes.
func readSysInt(path string) (int, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	s, scale := strings.TrimSpace(string(b)), 1
	switch {
	case strings.HasSuffix(s, "K"):
		s, scale = strings.TrimSuffix(s, "K"), 1<<10
	case strings.HasSuffix(s, "M"):
		s, scale = strings.TrimSuffix(s, "M"), 1<<20
	}
	v, err := strconv.Atoi(s)
	return v * scale, err
}

// streamsF32 reports whether a binary f32 op over a and b into n output
// elements stores around the caches (checked in the order that lets a
// small op leave first: this runs on every call).
func streamsF32(op ewBin, a, b *core.Tensor, n int) bool {
	if simdLevel == simdNone || op < binAdd || op > binDiv {
		return false
	}
	minBytes := streamThreshold()
	return 12*n >= minBytes && 4*(a.Numel()+b.Numel()+n) >= minBytes
}

// binF32Stream is binF32 with non-temporal stores into the part of dst that
// starts on a 64-byte boundary and is a whole number of vector blocks; the
// few elements before and after it take binF32. The same bits either way.
func binF32Stream(op ewBin, dst, a, b []float32) {
	n := len(dst)
	head, body, ok := streamedPart(dst)
	if !ok {
		binF32(op, dst, a, b)
		return
	}
	binF32(op, dst[:head], operandPart(a, 0, head), operandPart(b, 0, head))
	var ab, bb [ewBroadcast]float32
	ap, ai := operandF32(operandPart(a, head, n), &ab)
	bp, bi := operandF32(operandPart(b, head, n), &bb)
	vecBinStreamF32(wide(), op, &dst[head], ap, ai, bp, bi, body)
	binF32(op, dst[head+body:], operandPart(a, head+body, n), operandPart(b, head+body, n))
}

// streamedPart splits dst for a streaming kernel: head elements before
// the first 64-byte boundary, then body elements of whole vector blocks.
// ok is false where dst is too short to be worth it or not aligned to its
// elements (no boundary can be reached).
func streamedPart(dst []float32) (head, body int, ok bool) {
	if len(dst) < 2*ewBroadcast || uintptr(unsafe.Pointer(&dst[0]))%4 != 0 {
		return 0, 0, false
	}
	head = int(-uintptr(unsafe.Pointer(&dst[0])) % 64 / 4)
	return head, (len(dst) - head) &^ (ewLanes - 1), true
}

// operandPart is elements [lo, hi) of an operand that has len(dst)
// elements or one (which stays itself).
func operandPart(v []float32, lo, hi int) []float32 {
	if len(v) == 1 {
		return v
	}
	return v[lo:hi]
}

// streamsUnF32 reports whether a unary f32 op over n elements stores
// around the caches.
func streamsUnF32(op ewUn, n int) bool {
	return simdLevel != simdNone && op >= unSqrt && op <= unRelu && 8*n >= streamThreshold()
}

// unF32Stream is unF32 with non-temporal stores into the 64-byte aligned
// whole blocks of dst (the op is one of streamsUnF32's); the same bits.
func unF32Stream(op ewUn, dst, src []float32) {
	n := len(dst)
	head, body, ok := streamedPart(dst)
	if !ok {
		unF32(op, dst, src)
		return
	}
	unF32(op, dst[:head], src[:head])
	vecUnStreamF32(wide(), op, &dst[head], &src[head], body)
	unF32(op, dst[head+body:], src[head+body:n])
}
