// Package safetensorstest reads the corpus of malformed (and odd but valid)
// safetensors files, core/safetensors/testdata/malformed.json, that every
// loader must treat alike: Go's tests and the C ABI's read it through here,
// the SDKs' tests read the same file.
package safetensorstest

import (
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
)

// Case is one file of the corpus; the corpus's doc says how it becomes bytes.
type Case struct {
	Name      string   `json:"name"`
	RawHex    *string  `json:"raw_hex"`
	Length    string   `json:"length"`
	Header    string   `json:"header"`
	HeaderHex string   `json:"header_hex"`
	Fill      *Fill    `json:"fill"`
	Data      int      `json:"data"`
	Want      *string  `json:"want"`    // part of the error; nil: the file is valid
	Tensors   []string `json:"tensors"` // a valid file's tensors, in data order
}

// Fill replaces the header's @@ with Text repeated Times times.
type Fill struct {
	Text  string `json:"text"`
	Times int    `json:"times"`
}

// Bytes builds the file.
func (c Case) Bytes() ([]byte, error) {
	if c.RawHex != nil {
		return hex.DecodeString(*c.RawHex)
	}
	header := []byte(c.Header)
	if c.HeaderHex != "" {
		var err error
		if header, err = hex.DecodeString(c.HeaderHex); err != nil {
			return nil, err
		}
	}
	if c.Fill != nil {
		header = []byte(strings.Replace(string(header), "@@", strings.Repeat(c.Fill.Text, c.Fill.Times), 1))
	}
	length := uint64(len(header))
	if c.Length != "" {
		var err error
		if length, err = strconv.ParseUint(c.Length, 10, 64); err != nil {
			return nil, err
		}
	}
	out := binary.LittleEndian.AppendUint64(nil, length)
	return append(append(out, header...), make([]byte, c.Data)...), nil
}

// Path is where the corpus is in the repository.
func Path() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "testdata", "malformed.json")
}

// Cases reads the corpus.
func Cases() ([]Case, error) {
	raw, err := os.ReadFile(Path())
	if err != nil {
		return nil, err
	}
	var corpus struct{ Cases []Case }
	if err := json.Unmarshal(raw, &corpus); err != nil {
		return nil, fmt.Errorf("%s: %v", Path(), err)
	}
	return corpus.Cases, nil
}
