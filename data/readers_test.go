package data

import (
	"bytes"
	"encoding/binary"
	"hash/crc32"
	"image"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	_ "github.com/webtensor/webtensor/backends/cpu"
	"github.com/webtensor/webtensor/core"
)

// The files in testdata are written by the reference writers (NumPy,
// safetensors, pyarrow, Pillow: testdata/make.py); x is arange(30) as
// float32 [5, 2, 3], y is arange(5)*10 as int64.

func td(name string) string { return filepath.Join("testdata", name) }

// record reads record i of ds as one byte slice per field.
func record(t *testing.T, ds Dataset, i int) [][]byte {
	t.Helper()
	dst := make([][]byte, len(ds.Fields()))
	for f, fd := range ds.Fields() {
		dst[f] = make([]byte, fd.Bytes())
	}
	require.NoError(t, ds.Read(i, dst))
	return dst
}

func f32s(b []byte) []float32 {
	out := make([]float32, len(b)/4)
	for i := range out {
		out[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return out
}

// checkXY holds a dataset of the x and y arrays to their values.
func checkXY(t *testing.T, ds Dataset) {
	t.Helper()
	require.Equal(t, 5, ds.Len())
	require.Equal(t, []Field{{"x", core.F32, core.Shape{2, 3}}, {"y", core.I64, core.Shape{}}}, ds.Fields())
	r := record(t, ds, 3)
	assert.Equal(t, []float32{18, 19, 20, 21, 22, 23}, f32s(r[0]))
	assert.Equal(t, uint64(30), binary.LittleEndian.Uint64(r[1]))
}

func TestNPY(t *testing.T) {
	ds, err := NPY(td("x.npy"), td("y.npy"))
	require.NoError(t, err)
	checkXY(t, ds)
	raw, err := os.ReadFile(td("y.npy"))
	require.NoError(t, err)
	one, err := NPYBytes("y", raw)
	require.NoError(t, err)
	assert.Equal(t, []Field{{"y", core.I64, core.Shape{}}}, one.Fields())
}

func TestNPYErrorsNameTheFile(t *testing.T) {
	raw, err := os.ReadFile(td("x.npy"))
	require.NoError(t, err)
	_, err = NPYBytes("cut.npy", raw[:len(raw)-4])
	assert.EqualError(t, err, "cut.npy: shape [5 2 3] of f32 needs 120 bytes of data, the file has 116")
	_, err = NPYBytes("junk.npy", []byte("not numpy at all"))
	assert.ErrorContains(t, err, "junk.npy: not a .npy file NumPy wrote: no \\x93NUMPY magic")
	_, err = NPY(td("x.npy"), td("missing.npy"))
	assert.ErrorIs(t, err, os.ErrNotExist)
	_, err = NPY(td("x.npy"), td("table.parquet"))
	assert.ErrorContains(t, err, td("table.parquet")+": not a .npy file")
	_, err = NPY(td("x.npy"), td("x.npy"))
	assert.ErrorContains(t, err, `two arrays are named "x"`)
}

func mustRead(t *testing.T, path string) []byte {
	raw, err := os.ReadFile(path)
	require.NoError(t, err)
	return raw
}

func TestNPZ(t *testing.T) {
	ds, err := NPZ(td("xy.npz"))
	require.NoError(t, err)
	checkXY(t, ds)
	ds, err = NPZ(td("xy.npz"), "y")
	require.NoError(t, err)
	assert.Equal(t, []Field{{"y", core.I64, core.Shape{}}}, ds.Fields())
	_, err = NPZ(td("xy.npz"), "z")
	assert.EqualError(t, err, td("xy.npz")+`: no array "z" (the archive has x, y)`)
}

func TestSafetensors(t *testing.T) {
	ds, err := Safetensors(td("xy.safetensors"), "x", "y")
	require.NoError(t, err)
	checkXY(t, ds)
	ds, err = SafetensorsBytes("mem", mustRead(t, td("xy.safetensors")), "y", "x")
	require.NoError(t, err)
	assert.Equal(t, "y", ds.Fields()[0].Name)
}

func TestParquet(t *testing.T) {
	ds, err := Parquet(td("table.parquet"), "a", "b", "v", "u")
	require.NoError(t, err)
	require.Equal(t, 5, ds.Len())
	assert.Equal(t, []Field{{"a", core.I8, core.Shape{}}, {"b", core.F64, core.Shape{}},
		{"v", core.F32, core.Shape{3}}, {"u", core.U16, core.Shape{}}}, ds.Fields())
	for i := range 5 { // rows span row groups of 2
		r := record(t, ds, i)
		assert.Equal(t, byte(i), r[0][0])
		assert.Equal(t, 0.5*float64(i), math.Float64frombits(binary.LittleEndian.Uint64(r[1])))
		assert.Equal(t, []float32{float32(i), float32(i + 1), float32(i + 2)}, f32s(r[2]))
		assert.Equal(t, uint16(i), binary.LittleEndian.Uint16(r[3])) // a UINT_16 column is u16
	}
	_, err = Parquet(td("table.parquet"))
	assert.EqualError(t, err, td("table.parquet")+`: column "s": type BYTE_ARRAY (String) has no tensor dtype: webtensor reads numbers, bool and lists of them`)
	_, err = Parquet(td("nulls.parquet"))
	assert.EqualError(t, err, td("nulls.parquet")+`: column "n": row 1 is null, an empty list or holds a null (a tensor has no missing values)`)
	_, err = Parquet(td("ragged.parquet"))
	assert.EqualError(t, err, td("ragged.parquet")+`: column "r": row 1 has 1 values, row 0 has 2: lists must have one length`)
	_, err = ParquetBytes("mem", mustRead(t, td("table.parquet")), "zz")
	assert.EqualError(t, err, `mem: no column "zz" (the file has a, b, v, u, s)`)
}

func TestImageFolder(t *testing.T) {
	ds, err := ImageFolder(td("images"), ImageOptions{})
	require.NoError(t, err)
	require.Equal(t, 4, ds.Len())
	assert.Equal(t, []string{"cat", "dog"}, ds.(*imageFolder).Classes())
	assert.Equal(t, []Field{{"image", core.U8, core.Shape{3, 3, 4}}, {"label", core.I64, core.Shape{}}}, ds.Fields())
	r := record(t, ds, 2) // dog/c.png: red 30, green the column, blue the row
	img := r[0]
	assert.Equal(t, byte(30), img[0])
	assert.Equal(t, []byte{0, 1, 2, 3}, img[12:16], "green plane, row 0")
	assert.Equal(t, []byte{2, 2, 2, 2}, img[24+8:24+12], "blue plane, row 2")
	assert.Equal(t, uint64(1), binary.LittleEndian.Uint64(r[1]))
	jpg := record(t, ds, 3)[0]
	assert.InDelta(t, 7, float64(jpg[5]), 2, "a JPEG of 7s decodes near 7")

	gray, err := ImageFolder(td("images"), ImageOptions{Mode: "gray", Size: []int{6, 8}})
	require.NoError(t, err)
	assert.Equal(t, core.Shape{1, 6, 8}, gray.Fields()[0].Shape)
	record(t, gray, 0)

	odd, err := ImageFolder(td("odd"), ImageOptions{})
	require.NoError(t, err)
	err = odd.Read(1, [][]byte{make([]byte, 36), make([]byte, 8)})
	assert.EqualError(t, err, filepath.Join(td("odd"), "one", "b.png")+": record 1: image is 4x5, the dataset's 4x3 (set a size to resize)")
	_, err = ImageFolder(td("images"), ImageOptions{Mode: "cmyk"})
	assert.EqualError(t, err, td("images")+`: image mode "cmyk" (want rgb or gray)`)
}

// A PNG whose header claims 20000 x 20000 pixels (a few bytes of file,
// 400M pixels to its decoder) is refused by its size before it is decoded,
// in a folder of its size or as a record to resize.
func TestImageFolderRefusesAnImageBomb(t *testing.T) {
	var buf bytes.Buffer
	require.NoError(t, png.Encode(&buf, image.NewGray(image.Rect(0, 0, 1, 1))))
	raw := buf.Bytes()
	binary.BigEndian.PutUint32(raw[16:], 20000) // IHDR's width and height
	binary.BigEndian.PutUint32(raw[20:], 20000)
	binary.BigEndian.PutUint32(raw[29:], crc32.ChecksumIEEE(raw[12:29]))
	root := t.TempDir()
	require.NoError(t, os.Mkdir(filepath.Join(root, "a"), 0o755))
	bomb := filepath.Join(root, "a", "bomb.png")
	require.NoError(t, os.WriteFile(bomb, raw, 0o644))

	_, err := ImageFolder(root, ImageOptions{})
	assert.EqualError(t, err, bomb+": image is 20000x20000: more than the 67108864 pixels (8192 x 8192) webtensor decodes")
	ds, err := ImageFolder(root, ImageOptions{Size: []int{8, 8}})
	require.NoError(t, err)
	err = ds.Read(0, [][]byte{make([]byte, 3*8*8), make([]byte, 8)})
	assert.EqualError(t, err, bomb+": record 0: image is 20000x20000: more than the 67108864 pixels (8192 x 8192) webtensor decodes")
	_, err = ImageFolder(root, ImageOptions{Size: []int{9000, 9000}})
	assert.ErrorContains(t, err, "size [9000 9000]: image is 9000x9000: more than the 67108864 pixels")
}

func TestFromTensorsAndGet(t *testing.T) {
	x := core.FromSlice([]float32{1, 2, 3, 4, 5, 6}, core.Shape{3, 2})
	y := core.FromSlice([]int64{7, 8, 9}, core.Shape{3})
	ds, err := FromTensors([]*core.Tensor{x, y})
	require.NoError(t, err)
	assert.Equal(t, []Field{{"0", core.F32, core.Shape{2}}, {"1", core.I64, core.Shape{}}}, ds.Fields())
	got, err := Get(ds, 1, core.CPU)
	require.NoError(t, err)
	v, err := got[0].Float32s()
	require.NoError(t, err)
	assert.Equal(t, []float32{3, 4}, v)
	_, err = Get(ds, 3)
	assert.EqualError(t, err, "data: record 3 out of range (dataset has 3)")
	_, err = FromTensors([]*core.Tensor{x, core.FromSlice([]int64{1, 2}, core.Shape{2})}, "x", "y")
	assert.EqualError(t, err, `tensors: array "y" has 2 records, "x" has 3`)
}

func TestOpen(t *testing.T) {
	ds, err := Open(Spec{Format: "NPY", Paths: []string{td("x.npy"), td("y.npy")}})
	require.NoError(t, err)
	checkXY(t, ds)
	_, err = Open(Spec{Format: "csv", Path: "a.csv"})
	assert.EqualError(t, err, `data: unknown dataset format "csv" (want npy, npz, safetensors, parquet or images)`)
	_, err = OpenBytes(Spec{Format: "images"}, nil)
	assert.Error(t, err)
	ds, err = OpenBytes(Spec{Format: "npz", Keys: []string{"x"}}, mustRead(t, td("xy.npz")))
	require.NoError(t, err)
	assert.Equal(t, 5, ds.Len())
}
