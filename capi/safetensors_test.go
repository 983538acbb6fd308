package main

import (
	"encoding/binary"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/webtensor/webtensor/core/safetensors/safetensorstest"
)

// The SDKs load checkpoints through wt_safetensors_header: every file of the
// shared corpus is refused with WT_ERR_INVALID naming the file and the
// problem, or described, given the whole file or only its header.
func TestSafetensorsHeaderCorpus(t *testing.T) {
	pinThread(t)
	cases, err := safetensorstest.Cases()
	require.NoError(t, err)
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			pinThread(t)
			file, err := c.Bytes()
			require.NoError(t, err)
			st, out, msg := callSafetensorsHeader(file, len(file), "dir/model.safetensors")
			if c.Want != nil {
				assert.Equal(t, int32(statusInvalid), st, msg)
				assert.Contains(t, msg, "dir/model.safetensors: safetensors: ")
				assert.Contains(t, msg, *c.Want)
				return
			}
			require.Equal(t, int32(statusOK), st, msg)
			var h struct {
				DataStart int64 `json:"data_start"`
				Tensors   []struct{ Name string }
			}
			require.NoError(t, json.Unmarshal([]byte(out), &h))
			var names []string
			for _, e := range h.Tensors {
				names = append(names, e.Name)
			}
			assert.Equal(t, c.Tensors, append([]string{}, names...))
			// The header alone (and the file's size) is enough.
			hl := int(binary.LittleEndian.Uint64(file))
			st, out2, msg := callSafetensorsHeader(file, 8+hl, "")
			require.Equal(t, int32(statusOK), st, msg)
			assert.Equal(t, out, out2)
		})
	}
}

func TestSafetensorsHeaderArguments(t *testing.T) {
	pinThread(t)
	st, _, msg := callSafetensorsHeader(make([]byte, 16), 0, "")
	assert.Equal(t, int32(statusInvalid), st)
	assert.Contains(t, msg, "safetensors: 0 bytes given of the file's 8-byte header length")
	assert.Equal(t, int32(statusInvalid), int32(wt_safetensors_header(nil, 8, 16, nil, nil, 0, nil)))
	assert.Contains(t, lastError(), "buf is NULL but nbytes is 8")
}
