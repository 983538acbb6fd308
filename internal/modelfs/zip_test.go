package modelfs

import (
	"archive/zip"
	"bytes"
	"errors"
	"hash/crc32"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// entry is one file of a test archive; raw entries are written as given
// (header and data), to forge what a hostile archive declares.
type entry struct {
	name   string
	data   []byte
	method uint16
	raw    *zip.FileHeader
	mode   fs.FileMode
}

func archive(t testing.TB, entries ...entry) []byte {
	var buf bytes.Buffer
	w := zip.NewWriter(&buf)
	for _, e := range entries {
		if e.raw != nil {
			f, err := w.CreateRaw(e.raw)
			require.NoError(t, err)
			_, err = f.Write(e.data)
			require.NoError(t, err)
			continue
		}
		h := &zip.FileHeader{Name: e.name, Method: e.method}
		if e.mode != 0 {
			h.SetMode(e.mode)
		}
		f, err := w.CreateHeader(h)
		require.NoError(t, err)
		_, err = f.Write(e.data)
		require.NoError(t, err)
	}
	require.NoError(t, w.Close())
	return buf.Bytes()
}

func TestZipReadsStoredAndDeflatedFiles(t *testing.T) {
	big := bytes.Repeat([]byte("webtensor "), 5000)
	data := archive(t, entry{name: "model_index.json", data: []byte(`{"a": 1}`)},
		entry{name: "unet/", data: nil},
		entry{name: "unet/config.json", data: big, method: zip.Deflate})
	z, err := OpenZip(data, 1<<20)
	require.NoError(t, err)
	assert.Equal(t, int64(8+len(big)), z.Bytes())
	got, err := z.ReadFile("unet/config.json")
	require.NoError(t, err)
	assert.Equal(t, big, got)
	d, err := In(z, ".")
	require.NoError(t, err)
	got, err = d.Sub("unet").ReadFile("config.json")
	require.NoError(t, err)
	assert.Equal(t, big, got)
	ok, err := d.Exists("unet")
	require.NoError(t, err)
	assert.True(t, ok)
	ok, err = d.Exists("vae")
	require.NoError(t, err)
	assert.False(t, ok)

	_, err = d.ReadFile("vae/config.json")
	assert.ErrorIs(t, err, fs.ErrNotExist)
	assert.EqualError(t, err, "the zip archive has no vae/config.json")
	_, err = z.ReadFile("unet")
	assert.EqualError(t, err, "unet in the zip archive is a folder, not a file")
	root, err := z.Root("model_index.json")
	require.NoError(t, err)
	assert.Equal(t, ".", root)
}

func TestZipFindsTheModelInOneTopFolder(t *testing.T) {
	z, err := OpenZip(archive(t, entry{name: "pipe/model_index.json", data: []byte("{}")},
		entry{name: "pipe/unet/config.json", data: []byte("{}")}), 1<<20)
	require.NoError(t, err)
	root, err := z.Root("model_index.json")
	require.NoError(t, err)
	assert.Equal(t, "pipe", root)

	z, err = OpenZip(archive(t, entry{name: "a/model_index.json"}, entry{name: "b/model_index.json"}), 1<<20)
	require.NoError(t, err)
	_, err = z.Root("model_index.json")
	assert.EqualError(t, err, "zip archive: model_index.json is in several top-level folders (a, b), not at the root: which one is meant?")

	z, err = OpenZip(archive(t, entry{name: "unet/config.json"}, entry{name: "readme.txt"}), 1<<20)
	require.NoError(t, err)
	_, err = z.Root("model_index.json")
	assert.EqualError(t, err, "zip archive: no model_index.json at its root or in a top-level folder (its root holds: readme.txt, unet)")
}

// Hostile archives fail when they open, naming the entry and the problem.
func TestZipRefusesHostileArchives(t *testing.T) {
	zeros := make([]byte, 1<<16)
	var deflated bytes.Buffer
	{
		w := zip.NewWriter(&deflated)
		f, _ := w.CreateHeader(&zip.FileHeader{Name: "z", Method: zip.Deflate})
		_, _ = f.Write(zeros)
		_ = w.Close()
	}
	good := archive(t, entry{name: "model_index.json", data: []byte("{}")}, entry{name: "unet/w", data: zeros})
	for _, c := range []struct {
		name string
		data []byte
		max  int64
		want string
	}{
		{"empty", nil, 1 << 20, "zip archive: empty (0 bytes)"},
		{"not a zip", []byte("model_index.json"), 1 << 20, "not a zip archive, or a truncated one (16 bytes)"},
		{"truncated", good[:len(good)-30], 1 << 20, "not a zip archive, or a truncated one"},
		{"parent", archive(t, entry{name: "../model_index.json"}), 1 << 20, `entry "../model_index.json": the path leaves the archive's root`},
		{"inner parent", archive(t, entry{name: "unet/../../x"}), 1 << 20, `entry "unet/../../x": the path leaves the archive's root`},
		{"absolute", archive(t, entry{name: "/etc/passwd"}), 1 << 20, `entry "/etc/passwd": the path leaves the archive's root`},
		{"backslash", archive(t, entry{name: `..\x`}), 1 << 20, `entry "..\\x": a backslash or drive letter`},
		{"drive", archive(t, entry{name: "C:/x"}), 1 << 20, `entry "C:/x": a backslash or drive letter`},
		{"twice", archive(t, entry{name: "a", data: []byte("1")}, entry{name: "a", data: []byte("2")}), 1 << 20, `entry "a": the archive holds it twice`},
		{"symlink", archive(t, entry{name: "a", data: []byte("/etc/passwd"), mode: fs.ModeSymlink | 0o777}), 1 << 20, `entry "a": a symbolic link`},
		{"method", archive(t, entry{raw: &zip.FileHeader{Name: "a", Method: 12, CompressedSize64: 1, UncompressedSize64: 1}, data: []byte("x")}),
			1 << 20, `entry "a": compression method 12 is not supported`},
		{"bomb", archive(t, entry{raw: &zip.FileHeader{Name: "a", Method: zip.Deflate, CompressedSize64: 2, UncompressedSize64: 1 << 40}, data: []byte{3, 0}}),
			1 << 50, `entry "a": declares 1099511627776 bytes from 2 compressed, more than deflate can expand to (a zip bomb?)`},
		{"stored lie", archive(t, entry{raw: &zip.FileHeader{Name: "a", Method: zip.Store, CompressedSize64: 1, UncompressedSize64: 1 << 30}, data: []byte("x")}),
			1 << 40, `entry "a": stored (not compressed) but declares 1073741824 bytes in 1`},
		{"past the end", archive(t, entry{raw: &zip.FileHeader{Name: "a", Method: zip.Store, CompressedSize64: 1 << 20, UncompressedSize64: 1 << 20}, data: []byte("x")}),
			1 << 30, `entry "a": its 1048576 bytes of data run past the archive's end`},
		{"over the limit", good, 1 << 10, `entry "unet/w": the files declare more than 1024 bytes uncompressed in all, the limit`},
		{"deflated over the limit", deflated.Bytes(), 1 << 10, `entry "z": the files declare more than 1024 bytes uncompressed in all, the limit`},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := OpenZip(c.data, c.max)
			require.Error(t, err)
			assert.Contains(t, err.Error(), c.want)
		})
	}
}

// Data that does not match what the entry declares fails when it is read.
func TestZipRefusesCorruptData(t *testing.T) {
	payload := []byte("the weights")
	bad := archive(t, entry{raw: &zip.FileHeader{Name: "a", Method: zip.Store, CRC32: crc32.ChecksumIEEE(payload) ^ 1,
		CompressedSize64: uint64(len(payload)), UncompressedSize64: uint64(len(payload))}, data: payload})
	z, err := OpenZip(bad, 1<<20)
	require.NoError(t, err)
	_, err = z.ReadFile("a")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "a in the zip archive: corrupt data: zip: checksum error")

	// A deflate stream that ends early.
	var buf bytes.Buffer
	w := zip.NewWriter(&buf)
	f, err := w.CreateRaw(&zip.FileHeader{Name: "b", Method: zip.Deflate, CompressedSize64: 2, UncompressedSize64: 100})
	require.NoError(t, err)
	_, _ = f.Write([]byte{3, 0}) // an empty final block
	require.NoError(t, w.Close())
	z, err = OpenZip(buf.Bytes(), 1<<20)
	require.NoError(t, err)
	_, err = z.ReadFile("b")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "b in the zip archive: its data ends before the declared 100 bytes")
}

func TestInRefusesPathsOutsideTheFS(t *testing.T) {
	z, err := OpenZip(archive(t, entry{name: "a"}), 1<<20)
	require.NoError(t, err)
	for _, p := range []string{"../a", "/a", "a/../b", "a/"} {
		_, err := In(z, p)
		assert.ErrorContains(t, err, "is not a valid path inside the file system", p)
	}
	_, err = In(nil, ".")
	assert.EqualError(t, err, "modelfs: In: the fs.FS is nil")
}

func TestOSDirReadsFiles(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "config.json"), []byte("{}"), 0o644))
	d := OS(dir)
	assert.True(t, d.OnDisk())
	b, err := d.ReadFile("config.json")
	require.NoError(t, err)
	assert.Equal(t, "{}", string(b))
	_, err = d.ReadFile("missing.json")
	assert.True(t, errors.Is(err, fs.ErrNotExist))
	assert.True(t, strings.Contains(err.Error(), filepath.Join(dir, "missing.json")), err.Error())
}

// FuzzOpenZip: whatever the bytes, OpenZip and reading every file fail
// cleanly or give files within the declared bound.
func FuzzOpenZip(f *testing.F) {
	f.Add(archive(f, entry{name: "model_index.json", data: []byte(`{"_class_name": "DDPMPipeline"}`)},
		entry{name: "unet/config.json", data: bytes.Repeat([]byte("ab"), 300), method: zip.Deflate}))
	f.Add(archive(f, entry{name: "p/model_index.json", data: []byte("{}")}, entry{name: "p/unet/"}))
	f.Add([]byte("PK\x05\x06" + strings.Repeat("\x00", 18)))
	f.Fuzz(func(t *testing.T, data []byte) {
		const limit = 1 << 20
		z, err := OpenZip(data, limit)
		if err != nil {
			return
		}
		if z.Bytes() > limit {
			t.Fatalf("declared %d bytes, over the limit %d", z.Bytes(), limit)
		}
		var read int64
		for name := range z.files {
			b, err := z.ReadFile(name)
			if err == nil {
				read += int64(len(b))
			}
		}
		if read > limit {
			t.Fatalf("read %d bytes, over the limit %d", read, limit)
		}
		_, _ = z.Root("model_index.json")
	})
}
