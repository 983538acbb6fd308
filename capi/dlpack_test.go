package main

import (
	"fmt"
	"github.com/webtensor/webtensor/abi"
	"runtime"
	"sync"
	"testing"
	"time"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/webtensor/webtensor/backends/cpu"
	"github.com/webtensor/webtensor/core"
)

// DLPack constants, as in dlpack.h (test files cannot see C names).
const (
	dlCPU, dlCUDA, dlCUDAHost, dlVulkan = 1, 2, 3, 7
	dlInt, dlUInt, dlFloat, dlBfloat    = 0, 1, 2, 4
	dlComplex, dlBool                   = 5, 6
	flagReadOnly, flagIsCopied          = 1, 2
)

var dlVersions = []struct {
	name      string
	versioned bool
}{{"versioned", true}, {"legacy", false}}

// eventually collects garbage until cond holds: imported storage calls the
// producer's deleter from a GC cleanup, which runs on its own goroutine.
func dlEventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for range 300 {
		runtime.GC()
		if cond() {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatalf("timed out waiting for %s", what)
}

func requireNoDLExports(t *testing.T) {
	t.Helper()
	dlEventually(t, "all DLPack exports to be released", func() bool { n, _ := dlLiveExports(false); return n == 0 })
}

func dlCPUHandle(t *testing.T, vals []float32, shape core.Shape) (int64, *core.Tensor) {
	t.Helper()
	x := core.FromSlice(vals, shape, core.CPU)
	require.NoError(t, x.Err())
	require.True(t, cpu.IsForeign(x.Storage()), "alloc.go should make CPU storage C memory")
	return abi.NewHandle(x, false), x
}

func dlValues(t *testing.T, h int64) []float32 {
	t.Helper()
	x, err := abi.TensorOf(h)
	require.NoError(t, err)
	v, err := x.Float32s()
	require.NoError(t, err)
	return v
}

// cFloats copies vals into fresh C memory.
func dlCFloats(vals []float32) unsafe.Pointer {
	p := dlCAlloc(4 * len(vals))
	copy(unsafe.Slice((*float32)(p), len(vals)), vals)
	return p
}

func dlIota(n int) []float32 {
	v := make([]float32, n)
	for i := range v {
		v[i] = float32(i)
	}
	return v
}

func TestDLPackLayout(t *testing.T) {
	pinThread(t)
	if unsafe.Sizeof(uintptr(0)) != 8 {
		t.Skip("the DLPack layout numbers below are for 64-bit targets")
	}
	// From the DLPack 1.1 specification (dlpack.h), on LP64.
	want := map[string]uintptr{
		"DLDevice": 8, "DLDataType": 4, "DLPackVersion": 8,
		"DLDataType.code": 0, "DLDataType.bits": 1, "DLDataType.lanes": 2,
		"DLTensor": 48, "DLTensor.data": 0, "DLTensor.device": 8, "DLTensor.ndim": 16, "DLTensor.dtype": 20,
		"DLTensor.shape": 24, "DLTensor.strides": 32, "DLTensor.byte_offset": 40,
		"DLManagedTensor": 64, "DLManagedTensor.dl_tensor": 0, "DLManagedTensor.manager_ctx": 48, "DLManagedTensor.deleter": 56,
		"DLManagedTensorVersioned": 80, "DLManagedTensorVersioned.version": 0, "DLManagedTensorVersioned.manager_ctx": 8,
		"DLManagedTensorVersioned.deleter": 16, "DLManagedTensorVersioned.flags": 24, "DLManagedTensorVersioned.dl_tensor": 32,
	}
	assert.Equal(t, want, dlpackLayout())
}

func TestDLPackRoundTrip(t *testing.T) {
	pinThread(t)
	for _, v := range dlVersions {
		t.Run(v.name, func(t *testing.T) {
			pinThread(t)
			h, x := dlCPUHandle(t, []float32{1, 2, 3, 4, 5, 6}, core.Shape{2, 3})
			m, st := exportDLPack(v.versioned, h, false)
			require.Equal(t, int32(statusOK), st, lastError())
			s, _ := dlReadManaged(v.versioned, m)
			if v.versioned {
				assert.Equal(t, [2]uint32{1, 1}, [2]uint32{s.Major, s.Minor})
				assert.Zero(t, s.Flags, "a C-memory CPU tensor is shared, not copied")
			}
			assert.Equal(t, []int64{2, 3}, s.Shape)
			assert.Equal(t, []int64{3, 1}, s.Strides)
			assert.Equal(t, [3]int{dlFloat, 32, 1}, [3]int{int(s.Code), int(s.Bits), int(s.Lanes)})
			assert.Equal(t, [2]int{dlCPU, 0}, [2]int{int(s.DeviceType), int(s.DeviceID)})
			assert.Zero(t, s.ByteOffset)
			base := unsafe.Pointer(unsafe.SliceData(x.Storage().(core.HostStorage).Host()))
			assert.Equal(t, base, s.Data, "the export shares the storage")
			n, _ := dlLiveExports(false)
			assert.Equal(t, int64(1), n)

			h2, st := importDLPack(v.versioned, m, false)
			require.Equal(t, int32(statusOK), st, lastError())
			assert.Equal(t, []float32{1, 2, 3, 4, 5, 6}, dlValues(t, h2))
			unsafe.Slice((*float32)(s.Data), 6)[4] = 42 // as a consumer writing through the pointer
			assert.Equal(t, []float32{1, 2, 3, 4, 42, 6}, dlValues(t, h2))
			assert.Equal(t, []float32{1, 2, 3, 4, 42, 6}, dlValues(t, h))

			require.NoError(t, abi.TensorFree(h))
			runtime.GC()
			n, _ = dlLiveExports(false)
			assert.Equal(t, int64(1), n, "the import still holds the export")
			assert.Equal(t, []float32{1, 2, 3, 4, 42, 6}, dlValues(t, h2))
			require.NoError(t, abi.TensorFree(h2))
			requireNoDLExports(t)
		})
	}
}

// TestDLPackExportOutlivesHandle frees the handle, collects, and reuses
// the allocator: the export's data must still hold its values.
func TestDLPackExportOutlivesHandle(t *testing.T) {
	pinThread(t)
	for _, v := range dlVersions {
		t.Run(v.name, func(t *testing.T) {
			pinThread(t)
			vals := dlIota(1024)
			h, _ := dlCPUHandle(t, vals, core.Shape{1024})
			m, st := exportDLPack(v.versioned, h, false)
			require.Equal(t, int32(statusOK), st, lastError())
			require.NoError(t, abi.TensorFree(h))
			var churn []*core.Tensor
			for i := range 20 {
				runtime.GC()
				churn = append(churn, core.FromSlice(make([]float32, 1024), core.Shape{1024}, core.CPU))
				if i%5 == 0 {
					churn = churn[:0]
				}
			}
			s, _ := dlReadManaged(v.versioned, m)
			assert.Equal(t, vals, unsafe.Slice((*float32)(s.Data), 1024))
			n, _ := dlLiveExports(false)
			assert.Equal(t, int64(1), n)
			dlCallDeleter(v.versioned, m)
			n, _ = dlLiveExports(false)
			assert.Equal(t, int64(0), n)
			runtime.KeepAlive(churn)
		})
	}
}

func TestDLPackImportDeleterRunsOnce(t *testing.T) {
	pinThread(t)
	for _, v := range dlVersions {
		t.Run(v.name, func(t *testing.T) {
			pinThread(t)
			data := dlCFloats([]float32{1, 2, 3, 4})
			defer dlCFree(data)
			p := dlNewProducer(dlSpec{Major: 1, Minor: 1, Data: data, DeviceType: dlCPU, Ndim: 2,
				Code: dlFloat, Bits: 32, Lanes: 1, Shape: []int64{2, 2}})
			defer dlCFree(p)
			h, st := importDLPack(v.versioned, dlProducerManaged(p, v.versioned), false)
			require.Equal(t, int32(statusOK), st, lastError())
			x, err := abi.TensorOf(h)
			require.NoError(t, err)
			view := core.NewView(x, core.Shape{2}, []int{2}, 1) // column 1 outlives the handle
			require.NoError(t, abi.TensorFree(h))
			for range 5 {
				runtime.GC()
				time.Sleep(time.Millisecond)
			}
			assert.Zero(t, dlProducerCalls(p), "the deleter ran while a view still used the memory")
			got, err := view.Float32s()
			require.NoError(t, err)
			assert.Equal(t, []float32{2, 4}, got)
			runtime.KeepAlive(view)
			dlEventually(t, "the producer's deleter", func() bool { return dlProducerCalls(p) > 0 })
			for range 5 {
				runtime.GC()
			}
			assert.Equal(t, int64(1), dlProducerCalls(p))
		})
	}
}

// dlLayoutCase is a strided view over a buffer of 0, 1, 2, ...; want is read
// with the same formula the DLPack spec gives.
type dlLayoutCase struct {
	name       string
	shape      []int64
	strides    []int64 // nil: row-major
	byteOffset uint64
	bufLen     int
}

func (c dlLayoutCase) want() []float32 {
	n := 1
	for _, d := range c.shape {
		n *= int(d)
	}
	strides := c.strides
	if strides == nil {
		strides = make([]int64, len(c.shape))
		acc := int64(1)
		for i := len(c.shape) - 1; i >= 0; i-- {
			strides[i], acc = acc, acc*c.shape[i]
		}
	}
	out := make([]float32, 0, n)
	idx := make([]int64, len(c.shape))
	for range n {
		pos := int64(c.byteOffset / 4)
		for i := range idx {
			pos += idx[i] * strides[i]
		}
		out = append(out, float32(pos))
		for d := len(idx) - 1; d >= 0; d-- {
			if idx[d]++; idx[d] < c.shape[d] {
				break
			}
			idx[d] = 0
		}
	}
	return out
}

func TestDLPackImportLayouts(t *testing.T) {
	pinThread(t)
	cases := []dlLayoutCase{
		{name: "null strides", shape: []int64{2, 3}, bufLen: 6},
		{name: "scalar", shape: []int64{}, bufLen: 1},
		{name: "size-1 dims with odd strides", shape: []int64{2, 1, 3, 1}, strides: []int64{3, 999999, 1, -77}, bufLen: 6},
		{name: "byte offset", shape: []int64{2, 2}, byteOffset: 8, bufLen: 6},
		{name: "negative stride", shape: []int64{4}, strides: []int64{-1}, byteOffset: 12, bufLen: 4},
		{name: "negative strides 2d", shape: []int64{2, 3}, strides: []int64{-3, -1}, byteOffset: 20, bufLen: 6},
		{name: "mixed signs", shape: []int64{3, 2}, strides: []int64{2, -1}, byteOffset: 4, bufLen: 6},
		{name: "transposed", shape: []int64{3, 2}, strides: []int64{1, 3}, bufLen: 6},
		{name: "step slice", shape: []int64{3}, strides: []int64{3}, byteOffset: 4, bufLen: 9},
		{name: "zero stride", shape: []int64{3, 2}, strides: []int64{0, 1}, bufLen: 2},
	}
	for _, v := range dlVersions {
		for _, c := range cases {
			t.Run(v.name+"/"+c.name, func(t *testing.T) {
				pinThread(t)
				data := dlCFloats(dlIota(c.bufLen))
				defer dlCFree(data)
				p := dlNewProducer(dlSpec{Major: 1, Data: data, DeviceType: dlCPU, Ndim: int32(len(c.shape)),
					Code: dlFloat, Bits: 32, Lanes: 1, Shape: c.shape, Strides: c.strides, ByteOffset: c.byteOffset})
				defer dlCFree(p)
				h, st := importDLPack(v.versioned, dlProducerManaged(p, v.versioned), false)
				require.Equal(t, int32(statusOK), st, lastError())
				assert.Equal(t, c.want(), dlValues(t, h))
				if c.name == "size-1 dims with odd strides" {
					x, _ := abi.TensorOf(h)
					assert.Equal(t, []int{3, 3, 1, 1}, x.Strides(), "a size-1 dim's stride becomes the row-major one")
				}
				// Shared, not copied: a write through the producer's memory shows.
				unsafe.Slice((*float32)(data), c.bufLen)[int(c.byteOffset/4)] = -5
				assert.Equal(t, float32(-5), dlValues(t, h)[0])
				x, _ := abi.TensorOf(h)
				x.Storage().Release() // deterministic: runs the deleter now
				assert.Equal(t, int64(1), dlProducerCalls(p))
				require.NoError(t, abi.TensorFree(h))
			})
		}
	}
}

func TestDLPackExportViews(t *testing.T) {
	pinThread(t)
	h, base := dlCPUHandle(t, []float32{0, 1, 2, 3, 4, 5}, core.Shape{2, 3})
	defer abi.TensorFree(h)
	views := []struct {
		name           string
		shape          core.Shape
		strides        []int
		offset         int
		want           []float32
		wantByteOffset uint64
	}{
		{"transposed", core.Shape{3, 2}, []int{1, 3}, 0, []float32{0, 3, 1, 4, 2, 5}, 0},
		{"offset row", core.Shape{3}, []int{1}, 3, []float32{3, 4, 5}, 12},
		{"reversed", core.Shape{3}, []int{-1}, 5, []float32{5, 4, 3}, 20},
	}
	for _, v := range dlVersions {
		for _, c := range views {
			t.Run(v.name+"/"+c.name, func(t *testing.T) {
				pinThread(t)
				hv := abi.NewHandle(core.NewView(base, c.shape, c.strides, c.offset), false)
				defer abi.TensorFree(hv)
				m, st := exportDLPack(v.versioned, hv, false)
				require.Equal(t, int32(statusOK), st, lastError())
				s, _ := dlReadManaged(v.versioned, m)
				assert.Equal(t, dlInt64s(c.strides), s.Strides)
				assert.Equal(t, c.wantByteOffset, s.ByteOffset)
				h2, st := importDLPack(v.versioned, m, false)
				require.Equal(t, int32(statusOK), st, lastError())
				assert.Equal(t, c.want, dlValues(t, h2))
				x, _ := abi.TensorOf(h2)
				x.Storage().Release() // runs our own export's deleter
				require.NoError(t, abi.TensorFree(h2))
				n, _ := dlLiveExports(false)
				assert.Zero(t, n)
			})
		}
	}
}

func dlInt64s(v []int) []int64 {
	out := make([]int64, len(v))
	for i, x := range v {
		out[i] = int64(x)
	}
	return out
}

// dlGoStorage is CPU storage in the Go heap, whose address C must not keep.
type dlGoStorage struct{ b []byte }

func (s *dlGoStorage) Len() int     { return len(s.b) }
func (s *dlGoStorage) Release()     {}
func (s *dlGoStorage) Host() []byte { return s.b }

func TestDLPackExportCopiesGoMemory(t *testing.T) {
	pinThread(t)
	b, err := core.BackendFor(core.CPU)
	require.NoError(t, err)
	raw := unsafe.Slice((*byte)(unsafe.Pointer(&[]float32{7, 8, 9}[0])), 12)
	st := &dlGoStorage{b: append([]byte{}, raw...)}
	h := abi.NewHandle(core.WrapStorage(b, st, core.Shape{3}, nil, 0, core.F32), false)
	defer abi.TensorFree(h)
	m, status := exportDLPack(true, h, false)
	require.Equal(t, int32(statusOK), status, lastError())
	s, _ := dlReadManaged(true, m)
	assert.Equal(t, uint64(flagIsCopied), s.Flags)
	assert.NotEqual(t, unsafe.Pointer(&st.b[0]), s.Data)
	assert.Equal(t, []float32{7, 8, 9}, unsafe.Slice((*float32)(s.Data), 3))
	dlCallDeleter(true, m)
	n, _ := dlLiveExports(false)
	assert.Zero(t, n)
}

func TestDLPackReadOnly(t *testing.T) {
	pinThread(t)
	data := dlCFloats([]float32{1, 2})
	defer dlCFree(data)
	p := dlNewProducer(dlSpec{Major: 1, Flags: flagReadOnly, Data: data, DeviceType: dlCPU, Ndim: 1,
		Code: dlFloat, Bits: 32, Lanes: 1, Shape: []int64{2}})
	defer dlCFree(p)
	h, st := importDLPack(true, dlProducerManaged(p, true), false)
	require.Equal(t, int32(statusOK), st, lastError())
	x, readOnly, err := abi.Lookup(h)
	require.NoError(t, err)
	assert.True(t, readOnly)
	m, st := exportDLPack(true, h, false)
	require.Equal(t, int32(statusOK), st, lastError())
	s, _ := dlReadManaged(true, m)
	assert.Equal(t, uint64(flagReadOnly), s.Flags)
	dlCallDeleter(true, m)
	x.Storage().Release()
	require.NoError(t, abi.TensorFree(h))
	assert.Equal(t, int64(1), dlProducerCalls(p))
}

func TestDLPackDTypes(t *testing.T) {
	pinThread(t)
	want := map[core.DType][2]int{core.F32: {dlFloat, 32}, core.F64: {dlFloat, 64}, core.F16: {dlFloat, 16},
		core.BF16: {dlBfloat, 16}, core.I64: {dlInt, 64}, core.I32: {dlInt, 32}, core.I16: {dlInt, 16},
		core.I8: {dlInt, 8}, core.U32: {dlUInt, 32}, core.U8: {dlUInt, 8}, core.Bool: {dlBool, 8},
		core.U16: {dlUInt, 16}, core.U64: {dlUInt, 64}}
	require.Len(t, want, len(core.AllDTypes))
	for _, d := range core.AllDTypes {
		for _, v := range dlVersions {
			t.Run(fmt.Sprint(d, "/", v.name), func(t *testing.T) {
				pinThread(t)
				x := core.FromFloat64s(d, core.Shape{2}, []float64{1, 0})
				require.NoError(t, x.Err())
				h := abi.NewHandle(x, false)
				defer abi.TensorFree(h)
				m, st := exportDLPack(v.versioned, h, false)
				require.Equal(t, int32(statusOK), st, lastError())
				s, _ := dlReadManaged(v.versioned, m)
				assert.Equal(t, want[d], [2]int{int(s.Code), int(s.Bits)})
				assert.Equal(t, uint16(1), s.Lanes)
				h2, st := importDLPack(v.versioned, m, false)
				require.Equal(t, int32(statusOK), st, lastError())
				y, _ := abi.TensorOf(h2)
				assert.Equal(t, d, y.DType())
				got, err := y.Float64s()
				require.NoError(t, err)
				assert.Equal(t, []float64{1, 0}, got)
				y.Storage().Release()
				require.NoError(t, abi.TensorFree(h2))
			})
		}
	}
	requireNoDLExports(t)
}

func TestDLPackEmpty(t *testing.T) {
	pinThread(t)
	// NULL data is fine when there is nothing to read.
	p := dlNewProducer(dlSpec{Major: 1, DeviceType: dlCPU, Ndim: 2, Code: dlFloat, Bits: 32, Lanes: 1,
		Shape: []int64{0, 3}, Strides: []int64{1 << 60, -(1 << 60)}})
	defer dlCFree(p)
	h, st := importDLPack(true, dlProducerManaged(p, true), false)
	require.Equal(t, int32(statusOK), st, lastError())
	x, _ := abi.TensorOf(h)
	assert.Equal(t, core.Shape{0, 3}, x.Shape())
	assert.Equal(t, []float32{}, dlValues(t, h))
	// Re-exported, it gets a non-NULL data pointer (some consumers insist).
	m, st := exportDLPack(true, h, false)
	require.Equal(t, int32(statusOK), st, lastError())
	s, _ := dlReadManaged(true, m)
	assert.NotNil(t, s.Data)
	dlCallDeleter(true, m)
	x.Storage().Release()
	require.NoError(t, abi.TensorFree(h))
	assert.Equal(t, int64(1), dlProducerCalls(p))
}

func TestDLPackMalformed(t *testing.T) {
	pinThread(t)
	data := dlCFloats(dlIota(16))
	defer dlCFree(data)
	good := dlSpec{Major: 1, Minor: 1, Data: data, DeviceType: dlCPU, Ndim: 1, Code: dlFloat, Bits: 32, Lanes: 1,
		Shape: []int64{4}, Strides: []int64{1}}
	with := func(f func(*dlSpec)) dlSpec { s := good; f(&s); return s }
	cases := []struct {
		name    string
		spec    dlSpec
		onlyVer bool // version fields exist only in the versioned struct
		status  int32
		msg     string
	}{
		{"ndim negative", with(func(s *dlSpec) { s.Ndim = -1 }), false, statusInvalid, "ndim -1"},
		{"ndim 65", with(func(s *dlSpec) { s.Ndim = 65 }), false, statusInvalid, "ndim 65"},
		{"null shape", with(func(s *dlSpec) { s.Shape, s.Ndim = nil, 2 }), false, statusInvalid, "shape is NULL"},
		{"negative extent", with(func(s *dlSpec) { s.Shape = []int64{-3} }), false, statusInvalid, "negative"},
		{"overflowing count", with(func(s *dlSpec) { s.Ndim, s.Shape = 2, []int64{1 << 40, 1 << 40} }), false, statusInvalid, "too many elements"},
		{"huge extent", with(func(s *dlSpec) { s.Shape = []int64{1 << 62} }), false, statusInvalid, "too many elements"},
		{"cuda device", with(func(s *dlSpec) { s.DeviceType = dlCUDA }), false, statusUnsupported, "kDLCUDA"},
		{"vulkan device", with(func(s *dlSpec) { s.DeviceType, s.DeviceID = dlVulkan, 3 }), false, statusUnsupported, "kDLVulkan (device_type 7, device_id 3)"},
		{"unknown device", with(func(s *dlSpec) { s.DeviceType = 99 }), false, statusUnsupported, "device_type 99"},
		{"complex32", with(func(s *dlSpec) { s.Code, s.Bits = dlComplex, 32 }), false, statusUnsupported, "kDLComplex"}, // 64 and 128 are c64, c128
		{"float8", with(func(s *dlSpec) { s.Bits = 8 }), false, statusUnsupported, "8 bits"},
		{"uint128", with(func(s *dlSpec) { s.Code, s.Bits = dlUInt, 128 }), false, statusUnsupported, "kDLUInt"},
		{"lanes", with(func(s *dlSpec) { s.Lanes = 4 }), false, statusUnsupported, "4 lanes"},
		{"version 2", with(func(s *dlSpec) { s.Major = 2 }), true, statusUnsupported, "version 2.1"},
		{"version 0", with(func(s *dlSpec) { s.Major = 0 }), true, statusUnsupported, "version 0.1"},
		{"null data", with(func(s *dlSpec) { s.Data = nil }), false, statusInvalid, "data is NULL"},
		{"misaligned", with(func(s *dlSpec) { s.ByteOffset = 2 }), false, statusInvalid, "not aligned"},
		{"stride overflow", with(func(s *dlSpec) { s.Strides = []int64{1 << 62} }), false, statusInvalid, "beyond"},
		{"strides sum overflow", with(func(s *dlSpec) {
			s.Ndim, s.Shape, s.Strides = 3, []int64{3, 3, 3}, []int64{1 << 59, 1 << 59, 1 << 59}
		}), false, statusInvalid, "beyond"},
		{"negative stride below address 0", with(func(s *dlSpec) { s.Strides = []int64{-(1 << 55)} }), false, statusInvalid, "wraps"},
		{"huge byte offset", with(func(s *dlSpec) { s.ByteOffset = 1 << 63 }), false, statusInvalid, "byte_offset"},
	}
	for _, v := range dlVersions {
		for _, c := range cases {
			if c.onlyVer && !v.versioned {
				continue
			}
			t.Run(v.name+"/"+c.name, func(t *testing.T) {
				pinThread(t)
				p := dlNewProducer(c.spec)
				defer dlCFree(p)
				_, st := importDLPack(v.versioned, dlProducerManaged(p, v.versioned), false)
				assert.Equal(t, c.status, st, lastError())
				assert.Contains(t, lastError(), c.msg)
				assert.NotContains(t, lastError(), "internal error")
				assert.Zero(t, dlProducerCalls(p), "on failure the caller keeps the tensor")
			})
		}
		t.Run(v.name+"/null pointers", func(t *testing.T) {
			pinThread(t)
			_, st := importDLPack(v.versioned, nil, false)
			assert.Equal(t, int32(statusInvalid), st)
			assert.Contains(t, lastError(), "NULL")
			p := dlNewProducer(good)
			defer dlCFree(p)
			_, st = importDLPack(v.versioned, dlProducerManaged(p, v.versioned), true)
			assert.Equal(t, int32(statusInvalid), st)
			assert.Zero(t, dlProducerCalls(p))
		})
		t.Run(v.name+"/export errors", func(t *testing.T) {
			pinThread(t)
			_, st := exportDLPack(v.versioned, 1<<62, false)
			assert.Equal(t, int32(statusHandle), st)
			h, _ := dlCPUHandle(t, []float32{1}, core.Shape{1})
			_, st = exportDLPack(v.versioned, h, true)
			assert.Equal(t, int32(statusInvalid), st)
			require.NoError(t, abi.TensorFree(h))
			_, st = exportDLPack(v.versioned, h, false)
			assert.Equal(t, int32(statusHandle), st, "a freed handle")
			// A view whose storage was released through another tensor.
			h, x := dlCPUHandle(t, []float32{1, 2}, core.Shape{2})
			hv := abi.NewHandle(core.NewView(x, core.Shape{1}, []int{1}, 1), false)
			x.Release()
			_, st = exportDLPack(v.versioned, hv, false)
			assert.Equal(t, int32(statusInvalid), st)
			assert.Contains(t, lastError(), "released")
			require.NoError(t, abi.TensorFree(h))
			require.NoError(t, abi.TensorFree(hv))
		})
	}
	_, st := dlLiveExports(true)
	assert.Equal(t, int32(statusInvalid), st)
}

// TestDLPackDeletersFromManyThreads runs export deleters concurrently from
// goroutines and from threads Go did not create.
func TestDLPackDeletersFromManyThreads(t *testing.T) {
	pinThread(t)
	h, _ := dlCPUHandle(t, dlIota(8), core.Shape{8})
	defer abi.TensorFree(h)
	const n = 16
	ms := make([]unsafe.Pointer, n)
	for i := range ms {
		var st int32
		ms[i], st = exportDLPack(true, h, false)
		require.Equal(t, int32(statusOK), st, lastError())
	}
	live, _ := dlLiveExports(false)
	require.Equal(t, int64(n), live)
	var wg sync.WaitGroup
	for i, m := range ms {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if i%2 == 0 {
				dlCallDeleter(true, m)
			} else {
				assert.Zero(t, dlDeleteOnForeignThread(m))
			}
		}()
	}
	wg.Wait()
	live, _ = dlLiveExports(false)
	assert.Zero(t, live)
}
