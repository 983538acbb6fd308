package safetensors

import (
	"encoding/binary"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/webtensor/webtensor/core/safetensors/safetensorstest"
)

func readCorpus(t testing.TB) []safetensorstest.Case {
	cases, err := safetensorstest.Cases()
	require.NoError(t, err)
	require.Greater(t, len(cases), 40)
	return cases
}

func caseBytes(t testing.TB, c safetensorstest.Case) []byte {
	b, err := c.Bytes()
	require.NoError(t, err)
	return b
}

func TestMalformedCorpus(t *testing.T) {
	dir := t.TempDir()
	for i, c := range readCorpus(t) {
		t.Run(c.Name, func(t *testing.T) {
			b := caseBytes(t, c)
			f, err := Decode(b)
			path := filepath.Join(dir, strconv.Itoa(i)+".safetensors")
			require.NoError(t, os.WriteFile(path, b, 0o644))
			_, ferr := ReadFile(path)
			if c.Want == nil {
				require.NoError(t, err)
				require.NoError(t, ferr)
				assert.Equal(t, c.Tensors, append([]string{}, f.Names...))
				return
			}
			require.Error(t, err)
			assert.Contains(t, err.Error(), *c.Want)
			assert.True(t, strings.HasPrefix(err.Error(), "safetensors: "), err.Error())
			assert.NotContains(t, err.Error(), "\n")
			assert.Less(t, len(err.Error()), 400, "an error quotes at most a short part of the file")
			require.Error(t, ferr)
			assert.Equal(t, path+": "+err.Error(), ferr.Error(), "ReadFile names the file")
		})
	}
}

func TestParseHeaderFromAPrefix(t *testing.T) {
	var buf strings.Builder
	require.NoError(t, Encode(&buf, sample(), map[string]string{"format": "pt"}))
	file := []byte(buf.String())
	hl := binary.LittleEndian.Uint64(file)
	h, err := ParseHeader(file[:8+hl], int64(len(file)))
	require.NoError(t, err, "the header and the file's size are enough")
	assert.Equal(t, int64(8+hl), h.DataStart)
	assert.JSONEq(t, `{"data_start": `+strconv.Itoa(int(8+hl))+`, "metadata": {"format": "pt"}, "tensors": [
		{"name": "idx", "dtype": "i64", "shape": [3], "offsets": [0, 24]},
		{"name": "none", "dtype": "u8", "shape": [0, 4], "offsets": [24, 24]},
		{"name": "s", "dtype": "bf16", "shape": [], "offsets": [24, 26]},
		{"name": "w", "dtype": "f32", "shape": [2], "offsets": [26, 34]}]}`, string(h.JSON()))
	_, err = ParseHeader(file[:8+hl-1], int64(len(file)))
	assert.ErrorContains(t, err, "bytes given of a header of")
	_, err = ParseHeader(file[:8+hl], int64(len(file))+1)
	assert.ErrorContains(t, err, "1 bytes after the last tensor's data")
}

// deadPID is the id of a process that has exited.
func deadPID(t *testing.T) int {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	require.NoError(t, cmd.Run())
	return cmd.Process.Pid
}

func TestWriteFileRemovesStaleTemporaries(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "ckpt.safetensors")
	write := func(name string, age time.Duration) string {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, make([]byte, 1024), 0o644))
		require.NoError(t, os.Chtimes(p, time.Now().Add(-age), time.Now().Add(-age)))
		return name
	}
	dead := deadPID(t)
	killed := write(".ckpt.safetensors.tmp-"+strconv.Itoa(dead)+"-123456", 0)   // a save killed mid-write
	live := write(".ckpt.safetensors.tmp-"+strconv.Itoa(os.Getpid())+"-777", 0) // a save in progress here
	oldLegacy := write(".ckpt.safetensors.tmp-abcd1234", 2*time.Hour)           // an older version's, long untouched
	newLegacy := write(".ckpt.safetensors.tmp-987654", time.Minute)             // an older version's, maybe writing
	other := write(".other.safetensors.tmp-"+strconv.Itoa(dead)+"-1", 0)        // another path's
	require.NoError(t, WriteFile(path, sample(), nil))
	var names []string
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	for _, e := range entries {
		names = append(names, e.Name())
	}
	assert.ElementsMatch(t, []string{"ckpt.safetensors", live, newLegacy, other}, names,
		"removed: %s and %s", killed, oldLegacy)
	_, err = ReadFile(path)
	assert.NoError(t, err)
}
