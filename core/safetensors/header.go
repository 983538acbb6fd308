package safetensors

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"math/bits"
	"sort"
	"strconv"
	"unicode/utf8"

	"github.com/webtensor/webtensor/core"
)

// The one validator of safetensors headers: Decode, ReadFile and every SDK
// (through the C ABI's wt_safetensors_header and the browser module) check
// a file with ParseHeader, so a file is accepted or refused, with the same
// message, everywhere. It follows the reference implementation (the Rust
// safetensors crate): the header is a UTF-8 JSON object (padding after it
// may only be whitespace) mapping each tensor's name to its dtype, shape
// and data_offsets, plus an optional __metadata__ of strings; shapes and
// offsets are non-negative JSON integers (not 2.0, not "2"); the tensors'
// bytes tile the data exactly, from 0, with no gap, overlap or trailing
// byte. Unlike the reference, a name given twice is refused instead of the
// last one silently winning. Unknown fields of an entry are ignored, as
// there.

// MaxRank is the most dimensions a tensor of a checkpoint may have (the C
// ABI's limit, so every SDK can make the tensor).
const MaxRank = 64

// Header is a checked safetensors header.
type Header struct {
	// DataStart is where the tensors' bytes begin: 8 + the header's length.
	DataStart int64
	Metadata  map[string]string
	// Entries are in the order of their data, which tiles the rest of
	// the file.
	Entries []Entry
}

// Entry is one tensor of a header.
type Entry struct {
	Name  string
	DType core.DType
	Shape core.Shape
	// Begin and End are byte offsets relative to DataStart.
	Begin, End int64
}

// ParseHeader checks the framing and header of a safetensors file of
// fileSize bytes whose first bytes are prefix (at least the 8-byte header
// length and the header; the whole file will do).
func ParseHeader(prefix []byte, fileSize int64) (*Header, error) {
	if fileSize < 8 {
		return nil, fmt.Errorf("safetensors: file is %d bytes, too short for the 8-byte header length", fileSize)
	}
	if len(prefix) < 8 {
		return nil, fmt.Errorf("safetensors: %d bytes given of the file's 8-byte header length", len(prefix))
	}
	hl := binary.LittleEndian.Uint64(prefix[:8])
	if hl > maxHeader || hl > uint64(fileSize-8) {
		return nil, fmt.Errorf("safetensors: header length %d exceeds the file (%d bytes) or the %d-byte limit: file truncated or not safetensors", hl, fileSize, maxHeader)
	}
	if uint64(len(prefix)-8) < hl {
		return nil, fmt.Errorf("safetensors: %d bytes given of a header of %d", len(prefix)-8, hl)
	}
	raw := prefix[8 : 8+hl]
	h := &Header{DataStart: 8 + int64(hl), Metadata: map[string]string{}}
	if err := h.parse(raw); err != nil {
		return nil, err
	}
	if err := h.checkLayout(fileSize - h.DataStart); err != nil {
		return nil, err
	}
	return h, nil
}

func (h *Header) parse(raw []byte) error {
	switch {
	case len(raw) == 0:
		return errors.New("safetensors: the header is empty")
	case !utf8.Valid(raw):
		return fmt.Errorf("safetensors: the header is not valid UTF-8 (at byte %d)", 8+invalidUTF8At(raw))
	case raw[0] != '{':
		return fmt.Errorf("safetensors: the header does not start with '{' but %q: not safetensors", clipQuote(raw, 16))
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if _, err := dec.Token(); err != nil { // the '{' checked above
		return jsonError(dec, err)
	}
	seen := map[string]bool{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return jsonError(dec, err)
		}
		name := tok.(string) // object keys are strings
		if seen[name] {
			return fmt.Errorf("safetensors: %s appears twice in the header", nameOf(name))
		}
		seen[name] = true
		if name == "__metadata__" {
			if err := h.parseMetadata(dec); err != nil {
				return err
			}
			continue
		}
		e, err := parseEntry(dec, name)
		var syntax *syntaxError
		switch {
		case errors.As(err, &syntax):
			return err
		case err != nil:
			return fmt.Errorf("safetensors: tensor %q: %w", clip(name), err)
		}
		h.Entries = append(h.Entries, e)
	}
	if _, err := dec.Token(); err != nil { // the closing '}'
		return jsonError(dec, err)
	}
	rest := raw[dec.InputOffset():]
	if i := bytes.IndexFunc(rest, func(r rune) bool { return !isJSONSpace(r) }); i >= 0 {
		return fmt.Errorf("safetensors: %q after the header's JSON object at byte %d (only spaces may pad it)",
			clipQuote(rest[i:], 16), 8+int(dec.InputOffset())+i)
	}
	return nil
}

func nameOf(key string) string {
	if key == "__metadata__" {
		return "__metadata__"
	}
	return fmt.Sprintf("tensor %q", clip(key))
}

func isJSONSpace(r rune) bool { return r == ' ' || r == '\t' || r == '\n' || r == '\r' }

// syntaxError is a header that is not JSON: it is about the whole header,
// not the tensor being read when it broke.
type syntaxError struct{ msg string }

func (e *syntaxError) Error() string { return e.msg }

// jsonError says where the header's JSON broke.
func jsonError(dec *json.Decoder, err error) error {
	if errors.Is(err, io.EOF) {
		err = io.ErrUnexpectedEOF
	}
	return &syntaxError{fmt.Sprintf("safetensors: the header is not valid JSON (near byte %d): %v", 8+dec.InputOffset(), err)}
}

func (h *Header) parseMetadata(dec *json.Decoder) error {
	tok, err := dec.Token()
	switch {
	case err != nil:
		return jsonError(dec, err)
	case tok == nil: // null: no metadata, as the reference allows
		return nil
	case tok != json.Delim('{'):
		return fmt.Errorf("safetensors: __metadata__ is %s, not an object of strings", tokenKind(tok))
	}
	for dec.More() {
		k, err := dec.Token()
		if err != nil {
			return jsonError(dec, err)
		}
		key := k.(string)
		if _, dup := h.Metadata[key]; dup {
			return fmt.Errorf("safetensors: __metadata__ key %q appears twice", clip(key))
		}
		v, err := dec.Token()
		if err != nil {
			return jsonError(dec, err)
		}
		s, ok := v.(string)
		if !ok {
			return fmt.Errorf("safetensors: __metadata__ %q is %s, not a string", clip(key), tokenKind(v))
		}
		h.Metadata[key] = s
	}
	if _, err := dec.Token(); err != nil {
		return jsonError(dec, err)
	}
	return nil
}

// tokenKind names a JSON token for an error.
func tokenKind(tok json.Token) string {
	switch v := tok.(type) {
	case json.Delim:
		if v == '[' {
			return "an array"
		}
		return "an object"
	case string:
		return fmt.Sprintf("the string %q", clip(v))
	case json.Number:
		return "the number " + clip(string(v))
	case bool:
		return fmt.Sprintf("%v", v)
	case nil:
		return "null"
	}
	return fmt.Sprintf("%v", tok)
}

func parseEntry(dec *json.Decoder, name string) (Entry, error) {
	e := Entry{Name: name, DType: core.Invalid}
	if tok, err := dec.Token(); err != nil {
		return e, jsonError(dec, err)
	} else if tok != json.Delim('{') {
		return e, fmt.Errorf("the entry is %s, not an object with dtype, shape and data_offsets", tokenKind(tok))
	}
	seen := map[string]bool{}
	for dec.More() {
		k, err := dec.Token()
		if err != nil {
			return e, jsonError(dec, err)
		}
		key := k.(string)
		if seen[key] {
			return e, fmt.Errorf("%q appears twice in the entry", clip(key))
		}
		seen[key] = true
		switch key {
		case "dtype":
			tok, err := dec.Token()
			if err != nil {
				return e, jsonError(dec, err)
			}
			s, ok := tok.(string)
			if !ok {
				return e, fmt.Errorf("dtype is %s, not a string", tokenKind(tok))
			}
			if e.DType, err = ParseDType(s); err != nil {
				return e, err
			}
		case "shape":
			dims, err := intArray(dec, "shape", MaxRank)
			if err != nil {
				return e, err
			}
			e.Shape = core.Shape(make([]int, len(dims)))
			for i, d := range dims {
				e.Shape[i] = int(d)
			}
		case "data_offsets":
			off, err := intArray(dec, "data_offsets", 2)
			if err != nil {
				return e, err
			}
			if len(off) != 2 {
				return e, fmt.Errorf("data_offsets holds %d numbers, not 2 (begin, end)", len(off))
			}
			e.Begin, e.End = off[0], off[1]
		default: // unknown fields are ignored, as the reference does
			var skip json.RawMessage
			if err := dec.Decode(&skip); err != nil {
				return e, jsonError(dec, err)
			}
		}
	}
	if _, err := dec.Token(); err != nil {
		return e, jsonError(dec, err)
	}
	for _, f := range []string{"dtype", "shape", "data_offsets"} {
		if !seen[f] {
			return e, fmt.Errorf("the entry has no %s", f)
		}
	}
	return e, nil
}

// intArray reads a JSON array of at most limit non-negative integers (more
// is an error before they are all read).
func intArray(dec *json.Decoder, what string, limit int) ([]int64, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, jsonError(dec, err)
	}
	if tok != json.Delim('[') {
		return nil, fmt.Errorf("%s is %s, not an array of integers", what, tokenKind(tok))
	}
	var out []int64
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, jsonError(dec, err)
		}
		n, ok := tok.(json.Number)
		if !ok {
			return nil, fmt.Errorf("%s[%d] is %s, not an integer", what, len(out), tokenKind(tok))
		}
		v, err := nonNegativeInt(string(n))
		if err != nil {
			return nil, fmt.Errorf("%s[%d] is %s: %v", what, len(out), clip(string(n)), err)
		}
		if len(out) == limit {
			if what == "shape" {
				return nil, fmt.Errorf("shape has more than %d dimensions, the most webtensor supports", limit)
			}
			return nil, fmt.Errorf("%s has more than %d numbers", what, limit)
		}
		out = append(out, v)
	}
	if _, err := dec.Token(); err != nil {
		return nil, jsonError(dec, err)
	}
	return out, nil
}

// nonNegativeInt reads a JSON number that must be a plain non-negative
// integer: no sign, fraction or exponent, within int64.
func nonNegativeInt(s string) (int64, error) {
	for _, c := range s {
		if c < '0' || c > '9' {
			return 0, errors.New("not a non-negative integer")
		}
	}
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0, errors.New("larger than a 64-bit integer")
	}
	return v, nil
}

// checkLayout checks each entry's byte count against its shape and that the
// entries tile the data region of dataLen bytes exactly, and orders them.
func (h *Header) checkLayout(dataLen int64) error {
	for _, e := range h.Entries {
		if e.End < e.Begin {
			return fmt.Errorf("safetensors: tensor %q: data_offsets [%d, %d] end before they begin", clip(e.Name), e.Begin, e.End)
		}
		want, ok := byteSize(e.Shape, e.DType)
		if !ok || e.End-e.Begin != want {
			return fmt.Errorf("safetensors: tensor %q: data_offsets [%d, %d] hold %d bytes, shape %v of %s needs %s",
				clip(e.Name), e.Begin, e.End, e.End-e.Begin, []int(e.Shape), e.DType, sizeString(want, ok))
		}
	}
	sort.SliceStable(h.Entries, func(i, j int) bool {
		a, b := h.Entries[i], h.Entries[j]
		return a.Begin < b.Begin || (a.Begin == b.Begin && a.End < b.End)
	})
	var end int64
	for _, e := range h.Entries {
		switch {
		case e.Begin < end:
			return fmt.Errorf("safetensors: tensor %q: data_offsets [%d, %d] overlaps the previous tensor's data, which ends at %d", clip(e.Name), e.Begin, e.End, end)
		case e.Begin > end:
			return fmt.Errorf("safetensors: tensor %q: data_offsets [%d, %d] leave bytes [%d, %d) unused", clip(e.Name), e.Begin, e.End, end, e.Begin)
		}
		end = e.End
	}
	switch {
	case end > dataLen:
		return fmt.Errorf("safetensors: the tensors need %d data bytes, the file has %d after its header: truncated", end, dataLen)
	case end < dataLen:
		return fmt.Errorf("safetensors: %d bytes after the last tensor's data (the tensors use %d of %d): trailing bytes", dataLen-end, end, dataLen)
	}
	for _, e := range h.Entries {
		if err := e.Shape.Validate(); err != nil {
			return fmt.Errorf("safetensors: tensor %q: %v", clip(e.Name), err)
		}
	}
	return nil
}

// byteSize is numel(shape) * itemsize, false when it overflows int64.
func byteSize(s core.Shape, d core.DType) (int64, bool) {
	n := uint64(d.Size())
	for _, dim := range s {
		if dim == 0 {
			return 0, true
		}
	}
	for _, dim := range s {
		hi, lo := bits.Mul64(n, uint64(dim))
		if hi != 0 || lo > math.MaxInt64 {
			return 0, false
		}
		n = lo
	}
	return int64(n), true
}

func sizeString(n int64, ok bool) string {
	if !ok {
		return "more than 2^63"
	}
	return strconv.FormatInt(n, 10)
}

// clip shortens a name or value from a file for a message: a header may
// hold 100 MB strings.
func clip(s string) string {
	const keep = 64
	if len(s) <= keep {
		return s
	}
	cut := keep
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + fmt.Sprintf("... (%d bytes)", len(s))
}

func clipQuote(b []byte, n int) string {
	if len(b) > n {
		b = b[:n]
	}
	return string(b)
}

func invalidUTF8At(b []byte) int {
	for i := 0; i < len(b); {
		r, size := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && size <= 1 {
			return i
		}
		i += size
	}
	return len(b)
}

// headerJSON is the form of a checked header the SDKs read (see
// wt_safetensors_header in capi/include/webtensor.h).
type headerJSON struct {
	DataStart int64             `json:"data_start"`
	Metadata  map[string]string `json:"metadata"`
	Tensors   []entryJSON       `json:"tensors"`
}

type entryJSON struct {
	Name    string   `json:"name"`
	DType   string   `json:"dtype"`
	Shape   []int    `json:"shape"`
	Offsets [2]int64 `json:"offsets"`
}

// JSON describes a checked header for the SDKs, which load a checkpoint
// from it instead of parsing the header themselves: the data's start, the
// metadata, and the tensors in data order with webtensor's dtype names and
// offsets relative to the data's start.
func (h *Header) JSON() []byte {
	out := headerJSON{DataStart: h.DataStart, Metadata: h.Metadata, Tensors: make([]entryJSON, len(h.Entries))}
	for i, e := range h.Entries {
		shape := []int(e.Shape)
		if shape == nil {
			shape = []int{}
		}
		out.Tensors[i] = entryJSON{Name: e.Name, DType: e.DType.String(), Shape: shape, Offsets: [2]int64{e.Begin, e.End}}
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(out); err != nil {
		panic(err) // strings, ints and maps of strings always encode
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
}
