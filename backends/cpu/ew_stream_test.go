package cpu

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/webtensor/webtensor/core"
)

// The streaming-store kernels give binF32's bits on every size around
// their blocks, dst at every 4-byte offset from a 64-byte boundary (the
// head the Go side peels), and single-value operands.
func TestStreamingBinaryMatchesGo(t *testing.T) {
	withLevels(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(7, 8))
		for _, n := range []int{0, 1, 127, 128, 129, 143, 144, 1000, 4099} {
			for _, form := range operandForms {
				for off := range 17 {
					a, b := misaligned(ewValues(rng, n), off%5), misaligned(ewValues(rng, n), off%3)
					if form.aOne && n > 0 {
						a = a[:1]
					}
					if form.bOne && n > 0 {
						b = b[:1]
					}
					for op := binAdd; op <= binDiv; op++ {
						// A guard element after dst catches a store past its end.
						buf := make([]float32, n+off+1)
						got, want := buf[off:off+n], make([]float32, n)
						buf[off+n] = 12345
						binF32Stream(op, got, a, b)
						binF32Go(op, want, a, b)
						require.Equal(t, float32(12345), buf[off+n], "op %d n=%d %s off %d wrote past dst", op, n, form.name, off)
						for i := range want {
							if !sameF32(got[i], want[i]) {
								t.Fatalf("op %d n=%d %s off %d: element %d: %v, Go %v", op, n, form.name, off, i, got[i], want[i])
							}
						}
					}
				}
			}
		}
	})
}

// The unary streaming kernels likewise give unF32's bits.
func TestStreamingUnaryMatchesVector(t *testing.T) {
	withLevels(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(9, 10))
		for _, n := range []int{0, 1, 127, 128, 129, 143, 144, 1000, 4099} {
			src := ewValues(rng, n)
			for off := range 17 {
				for op := unSqrt; op <= unRelu; op++ {
					buf := make([]float32, n+off+1)
					got, want := buf[off:off+n], make([]float32, n)
					buf[off+n] = 12345
					unF32Stream(op, got, src)
					unF32(op, want, src)
					require.Equal(t, float32(12345), buf[off+n], "op %d n=%d off %d wrote past dst", op, n, off)
					for i := range want {
						if !sameF32(got[i], want[i]) {
							t.Fatalf("op %d n=%d off %d: element %d of %v: %v, not streamed %v", op, n, off, i, src[i], got[i], want[i])
						}
					}
				}
			}
		}
	})
}

// Through the op: with every call streaming, add, sub, mul and div over
// views, broadcasts and sizes that split across the pool equal the cached
// path's results bit for bit.
func TestStreamingOpsMatchCachedStores(t *testing.T) {
	defer SetNumThreadsForTest(3)()
	x := core.Call1("randn", core.Attrs{"shape": []int{3, 70001}, "seed": 1})
	y := core.Call1("randn", core.Attrs{"shape": []int{3, 70001}, "seed": 2})
	slice := func(t *core.Tensor, axis, start, stop int) *core.Tensor {
		return core.Call1("slice", core.Attrs{"axis": axis, "start": start, "stop": stop}, t)
	}
	swap := func(t *core.Tensor) *core.Tensor { return core.Call1("transpose", nil, t) }
	cases := map[string][2]*core.Tensor{
		"dense":     {x, y},
		"scalar":    {x, core.Scalar(1.5, core.F32)},
		"offset":    {slice(x, 1, 3, 70000), slice(y, 1, 1, 69998)},
		"row":       {x, slice(y, 0, 0, 1)},
		"transpose": {swap(x), swap(y)},
	}
	for _, op := range []string{"add", "sub", "mul", "div"} {
		for name, in := range cases {
			requireStreamedEqualsCached(t, op+" "+name, op, in[0], in[1])
		}
	}
}

// requireStreamedEqualsCached runs op over ins with no call streaming and
// with every call streaming, and requires the same bytes.
func requireStreamedEqualsCached(t *testing.T, what, op string, ins ...*core.Tensor) {
	t.Helper()
	saved := streamThreshold()
	defer func() { streamMinBytes = saved }()
	var out [2][]byte
	for i, minBytes := range []int{1 << 62, 0} {
		streamMinBytes = minBytes
		b, err := core.Call1(op, nil, ins...).Bytes()
		require.NoError(t, err, what)
		out[i] = b
	}
	require.Equal(t, out[0], out[1], what)
}

// The unary ops with streaming kernels, dense and sliced, equal the
// cached path's results bit for bit.
func TestStreamingUnaryOpsMatchCachedStores(t *testing.T) {
	defer SetNumThreadsForTest(3)()
	x := core.Call1("randn", core.Attrs{"shape": []int{3, 70001}, "seed": 4})
	sliced := core.Call1("slice", core.Attrs{"axis": 1, "start": 5, "stop": 70000}, x)
	for _, op := range []string{"sqrt", "neg", "abs", "square", "relu"} {
		for name, in := range map[string]*core.Tensor{"dense": x, "sliced": sliced} {
			requireStreamedEqualsCached(t, op+" "+name, op, in)
		}
	}
}

func TestReadSysInt(t *testing.T) {
	dir := t.TempDir()
	for text, want := range map[string]int{"3\n": 3, "32768K\n": 32 << 20, "2M": 2 << 20} {
		p := filepath.Join(dir, "v")
		require.NoError(t, os.WriteFile(p, []byte(text), 0o644))
		got, err := readSysInt(p)
		require.NoError(t, err)
		require.Equal(t, want, got, "%q", text)
	}
	require.NoError(t, os.WriteFile(filepath.Join(dir, "v"), []byte("lots"), 0o644))
	_, err := readSysInt(filepath.Join(dir, "v"))
	require.Error(t, err)
	require.Positive(t, lastLevelCacheBytes())
}
