package geom

import (
	"archive/zip"
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/webtensor/webtensor/core"
)

func writeFile(t *testing.T, path, text string) {
	t.Helper()
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
	require.NoError(t, os.WriteFile(path, []byte(text), 0o644))
}

func TestLoadEdgeList(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "g.txt")
	writeFile(t, p, "# a comment\n0 1 0.5\n1,2,2\n\n2\t0\t1\n")
	g, err := LoadEdgeList(p, 0)
	require.NoError(t, err)
	assert.Equal(t, 3, g.NumNodes)
	src, dst := g.Edges()
	assert.Equal(t, []int64{0, 1, 2}, src)
	assert.Equal(t, []int64{1, 2, 0}, dst)
	w, _ := g.Weight.Float64s()
	assert.Equal(t, []float64{0.5, 2, 1}, w)
	writeFile(t, p, "0 1\n1 x\n")
	_, err = LoadEdgeList(p, 0)
	assert.ErrorContains(t, err, "g.txt:2: node ids must be integers >= 0")
	writeFile(t, p, "0 1\n1 2 3\n")
	_, err = LoadEdgeList(p, 0)
	assert.ErrorContains(t, err, "a weight after 1 edges without one")
	_, err = LoadEdgeList(filepath.Join(dir, "none.txt"), 0)
	assert.ErrorContains(t, err, "no such file")
}

// npy builds a version-1 .npy file.
func npy(descr string, shape []int, data any) []byte {
	dims := ""
	for _, d := range shape {
		dims += fmt.Sprintf("%d, ", d)
	}
	h := fmt.Sprintf("{'descr': '%s', 'fortran_order': False, 'shape': (%s), }", descr, dims)
	for (10+len(h)+1)%64 != 0 {
		h += " "
	}
	h += "\n"
	var b bytes.Buffer
	b.WriteString("\x93NUMPY\x01\x00")
	_ = binary.Write(&b, binary.LittleEndian, uint16(len(h)))
	b.WriteString(h)
	_ = binary.Write(&b, binary.LittleEndian, data)
	return b.Bytes()
}

func TestLoadNPZGraph(t *testing.T) {
	p := filepath.Join(t.TempDir(), "g.npz")
	f, err := os.Create(p)
	require.NoError(t, err)
	z := zip.NewWriter(f)
	for name, data := range map[string][]byte{
		"edge_index.npy": npy("<i8", []int{2, 3}, []int64{0, 1, 2, 1, 2, 0}),
		"x.npy":          npy("<f8", []int{3, 2}, []float64{1, 2, 3, 4, 5, 6}),
		"y.npy":          npy("<i8", []int{3}, []int64{0, 2, 1}),
		"train_idx.npy":  npy("<i8", []int{2}, []int64{0, 1}),
	} {
		w, err := z.Create(name)
		require.NoError(t, err)
		_, _ = w.Write(data)
	}
	require.NoError(t, z.Close())
	require.NoError(t, f.Close())
	d, err := LoadNPZGraph(p)
	require.NoError(t, err)
	assert.Equal(t, 3, d.Graph.NumNodes)
	assert.Equal(t, 3, d.NumClasses)
	assert.Equal(t, core.F32, d.X.DType())
	x, _ := d.X.Float64s()
	assert.Equal(t, []float64{1, 2, 3, 4, 5, 6}, x)
	_, dst := d.Graph.Edges()
	assert.Equal(t, []int64{1, 2, 0}, dst)
	assert.Nil(t, d.Test)
	u, err := readNPY(bytes.NewReader(npy("<u8", []int{2}, []uint64{1<<63 + 3, 7})), "u.npy")
	require.NoError(t, err)
	assert.Equal(t, core.U64, u.DType())
	uv, _ := u.Uint64s()
	assert.Equal(t, []uint64{1<<63 + 3, 7}, uv) // exact past 2^63
	_, err = readNPY(bytes.NewReader(npy(">f4", []int{1}, []float32{1})), "be.npy")
	assert.ErrorContains(t, err, `dtype ">f4" is not supported (little-endian floats, ints, unsigned ints, bool)`)
	_, err = readNPY(bytes.NewReader([]byte("garbage!")), "x.npy")
	assert.ErrorContains(t, err, "not a .npy file")
	trunc := npy("<f4", []int{4}, []float32{1, 2, 3, 4})
	_, err = readNPY(bytes.NewReader(trunc[:len(trunc)-3]), "t.npy")
	assert.ErrorContains(t, err, "16 bytes of data expected for shape [4] of f32")
}

func gz(t *testing.T, path, text string) {
	t.Helper()
	var b bytes.Buffer
	w := gzip.NewWriter(&b)
	_, _ = w.Write([]byte(text))
	require.NoError(t, w.Close())
	writeFile(t, path+".gz", b.String())
}

func TestLoadOGBNodeLayout(t *testing.T) {
	dir := t.TempDir()
	gz(t, filepath.Join(dir, "raw", "edge.csv"), "0,1\n1,2\n")
	gz(t, filepath.Join(dir, "raw", "node-feat.csv"), "0.5,1\n1.5,2\n2.5,3\n")
	gz(t, filepath.Join(dir, "raw", "node-label.csv"), "1\n0\n1\n")
	gz(t, filepath.Join(dir, "split", "time", "train.csv"), "0\n2\n")
	gz(t, filepath.Join(dir, "split", "time", "test.csv"), "1\n")
	d, err := LoadOGBNode(dir, true)
	require.NoError(t, err)
	assert.Equal(t, 4, d.Graph.NumEdges(), "both directions")
	assert.Equal(t, 2, d.NumClasses)
	tr, _ := d.Train.Int64s()
	assert.Equal(t, []int64{0, 2}, tr)
	_, err = LoadOGBNode(t.TempDir(), false)
	assert.ErrorContains(t, err, "never downloaded")
}

func TestBatchGraphsPoolsPerGraph(t *testing.T) {
	a, _ := NewGraph(2, []int64{0}, []int64{1}, nil)
	b, _ := NewGraph(3, []int64{0, 1}, []int64{1, 2}, nil)
	xa := core.FromSlice([]float32{1, 2}, core.Shape{2, 1})
	xb := core.FromSlice([]float32{3, 4, 5}, core.Shape{3, 1})
	g, x, batch, err := BatchGraphs([]*Graph{a, b}, []*core.Tensor{xa, xb})
	require.NoError(t, err)
	src, dst := g.Edges()
	assert.Equal(t, []int64{0, 2, 3}, src)
	assert.Equal(t, []int64{1, 3, 4}, dst)
	sum, _ := Pool(x, batch, 2, "add").Float64s()
	assert.Equal(t, []float64{3, 12}, sum)
	mx, _ := Pool(x, batch, 2, "max").Float64s()
	assert.Equal(t, []float64{2, 5}, mx)
	_, _, _, err = BatchGraphs([]*Graph{a}, []*core.Tensor{xb})
	assert.ErrorContains(t, err, "graph 0 has 2 nodes but features of shape [3 1]")
}
