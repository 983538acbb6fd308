package safetensors

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/webtensor/webtensor/core"
)

func sample() map[string]Tensor {
	return map[string]Tensor{
		"w":    {DType: core.F32, Shape: core.Shape{2}, Data: core.EncodeF64(core.F32, []float64{1.5, -2})},
		"idx":  {DType: core.I64, Shape: core.Shape{3}, Data: core.EncodeF64(core.I64, []float64{1, 2, 3})},
		"s":    {DType: core.BF16, Shape: core.Shape{}, Data: core.EncodeF64(core.BF16, []float64{0.5})},
		"none": {DType: core.U8, Shape: core.Shape{0, 4}, Data: []byte{}},
	}
}

func TestRoundTrip(t *testing.T) {
	var buf bytes.Buffer
	require.NoError(t, Encode(&buf, sample(), map[string]string{"format": "pt"}))
	assert.Zero(t, (8+binary.LittleEndian.Uint64(buf.Bytes()))%8, "data must start 8-byte aligned")
	f, err := Decode(buf.Bytes())
	require.NoError(t, err)
	assert.Equal(t, "pt", f.Metadata["format"])
	for name, want := range sample() {
		got := f.Tensors[name]
		assert.Equal(t, want.DType, got.DType, name)
		assert.True(t, want.Shape.Equal(got.Shape), name)
		assert.Equal(t, want.Data, got.Data, name)
	}
	assert.Len(t, f.Names, 4)
}

func TestDecodeRejectsCorruption(t *testing.T) {
	var buf bytes.Buffer
	require.NoError(t, Encode(&buf, sample(), nil))
	good := buf.Bytes()
	cases := map[string][]byte{
		"empty":       {},
		"short":       good[:5],
		"truncated":   good[:len(good)-3],
		"huge header": append([]byte{0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0}, good[8:]...),
		"bad json":    append(append([]byte{}, good[:8]...), bytes.Repeat([]byte{'{'}, len(good)-8)...),
	}
	for name, b := range cases {
		_, err := Decode(b)
		assert.Error(t, err, name)
	}
	bad := []byte(`{"x":{"dtype":"F32","shape":[4],"data_offsets":[0,8]}}`)
	_, err := Decode(withHeader(bad, make([]byte, 8)))
	assert.ErrorContains(t, err, "needs 16")
	bad = []byte(`{"x":{"dtype":"Q9","shape":[1],"data_offsets":[0,4]}}`)
	_, err = Decode(withHeader(bad, make([]byte, 4)))
	assert.ErrorContains(t, err, "Q9")
	bad = []byte(`{"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"b":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}}`)
	_, err = Decode(withHeader(bad, make([]byte, 8)))
	assert.ErrorContains(t, err, "overlaps")
}

func withHeader(h, data []byte) []byte {
	out := make([]byte, 8, 8+len(h)+len(data))
	binary.LittleEndian.PutUint64(out, uint64(len(h)))
	return append(append(out, h...), data...)
}

func TestWriteFileIsAtomic(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "ckpt.safetensors")
	require.NoError(t, WriteFile(path, sample(), nil))
	before, err := os.ReadFile(path)
	require.NoError(t, err)
	bad := map[string]Tensor{"x": {DType: core.F32, Shape: core.Shape{3}, Data: []byte{1}}}
	require.Error(t, WriteFile(path, bad, nil))
	after, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, before, after, "a failed save must leave the old file in place")
	entries, _ := os.ReadDir(dir)
	assert.Len(t, entries, 1, "no temporary file may be left behind")
}

func FuzzDecode(f *testing.F) {
	var buf bytes.Buffer
	_ = Encode(&buf, sample(), map[string]string{"k": "v"})
	f.Add(buf.Bytes())
	f.Add([]byte{})
	f.Add(withHeader([]byte(`{"x":{"dtype":"F32","shape":[-1],"data_offsets":[0,4]}}`), make([]byte, 4)))
	for _, c := range readCorpus(f) {
		if c.Fill == nil || c.Fill.Times < 1000 {
			f.Add(caseBytes(f, c))
		}
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		file, err := Decode(b)
		if err != nil {
			if strings.Contains(err.Error(), "\n") || len(err.Error()) > 1024 {
				t.Fatalf("not one short line: %q", err)
			}
			return
		}
		h, err := ParseHeader(b, int64(len(b)))
		if err != nil {
			t.Fatalf("Decode accepts what ParseHeader refuses: %v", err)
		}
		total := 0
		for name, tn := range file.Tensors {
			if tn.Shape.Numel()*tn.DType.Size() != len(tn.Data) {
				t.Fatalf("%s: decoded size mismatch", name)
			}
			total += len(tn.Data)
		}
		if int64(total) != int64(len(b))-h.DataStart {
			t.Fatalf("the tensors hold %d bytes of %d data bytes", total, int64(len(b))-h.DataStart)
		}
		if !json.Valid(h.JSON()) {
			t.Fatalf("JSON() is not JSON: %s", h.JSON())
		}
	})
}

// The format's U16 and U64 are webtensor's u16 and u64: values past 2^63
// and u16's top come back as their bytes went.
func TestUnsignedRoundTrip(t *testing.T) {
	u64 := binary.LittleEndian.AppendUint64(binary.LittleEndian.AppendUint64(nil, 1<<63+1), 18446744073709551615)
	in := map[string]Tensor{
		"u64": {DType: core.U64, Shape: core.Shape{2}, Data: u64},
		"u16": {DType: core.U16, Shape: core.Shape{2}, Data: []byte{0xff, 0xff, 0x01, 0x80}},
	}
	var buf bytes.Buffer
	require.NoError(t, Encode(&buf, in, nil))
	assert.Contains(t, buf.String(), `"dtype":"U64"`)
	assert.Contains(t, buf.String(), `"dtype":"U16"`)
	f, err := Decode(buf.Bytes())
	require.NoError(t, err)
	for name, want := range in {
		assert.Equal(t, want.DType, f.Tensors[name].DType, name)
		assert.Equal(t, want.Data, f.Tensors[name].Data, name)
	}
}
