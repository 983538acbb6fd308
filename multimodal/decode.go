package multimodal

import (
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"
)

// tokenDecoder is a tokenizer.json decoder: it joins tokens back into
// text.
type tokenDecoder interface {
	decode(tokens []string) string
}

// parseDecoder reads tokenizer.json's decoder. A type Decode does not
// implement is kept by name, so the tokenizer still encodes and Decode
// fails naming it.
func parseDecoder(raw json.RawMessage) (tokenDecoder, string, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return plainDecoder{}, "", nil
	}
	var head struct {
		Type string `json:"type"`
	}
	if err := json.Unmarshal(raw, &head); err != nil {
		return nil, "", err
	}
	if head.Type == "ByteLevel" {
		return byteLevelDecoder{}, "", nil
	}
	return nil, head.Type, nil
}

// plainDecoder is the tokenizers library without a decoder: the tokens
// joined by spaces.
type plainDecoder struct{}

func (plainDecoder) decode(tokens []string) string { return strings.Join(tokens, " ") }

// byteLevelDecoder undoes GPT-2's byte-to-character map. A token with a
// character outside the map (an added token such as "日本") contributes
// its own UTF-8 bytes, and the bytes become text as Rust's
// String::from_utf8_lossy makes them, as the tokenizers library does.
type byteLevelDecoder struct{}

var runeToByte = func() map[rune]byte {
	m := make(map[rune]byte, 256)
	for b, r := range byteToRune {
		m[r] = byte(b)
	}
	return m
}()

func (byteLevelDecoder) decode(tokens []string) string {
	var buf []byte
	for _, tok := range tokens {
		start := len(buf)
		for _, r := range tok {
			b, ok := runeToByte[r]
			if !ok {
				buf = append(buf[:start], tok...)
				break
			}
			buf = append(buf, b)
		}
	}
	return lossyUTF8(buf)
}

// lossyUTF8 is String::from_utf8_lossy (and Python's "replace"): each
// maximal prefix of a valid sequence that breaks off, or each byte that
// cannot start one, becomes one U+FFFD. Go's utf8.DecodeRune would
// replace a broken three-byte sequence byte by byte instead.
func lossyUTF8(b []byte) string {
	var sb strings.Builder
	for len(b) > 0 {
		r, n := utf8.DecodeRune(b)
		if r != utf8.RuneError || n > 1 {
			sb.WriteRune(r)
			b = b[n:]
			continue
		}
		sb.WriteRune(utf8.RuneError)
		b = b[validPrefix(b):]
	}
	return sb.String()
}

// validPrefix is the length of the longest prefix of b that can begin a
// UTF-8 sequence (at least 1), for a b that does not hold a whole one.
func validPrefix(b []byte) int {
	var need int
	lo, hi := byte(0x80), byte(0xBF) // the second byte's range
	switch c := b[0]; {
	case c >= 0xC2 && c <= 0xDF:
		need = 1
	case c >= 0xE0 && c <= 0xEF:
		need = 2
		if c == 0xE0 {
			lo = 0xA0
		} else if c == 0xED {
			hi = 0x9F
		}
	case c >= 0xF0 && c <= 0xF4:
		need = 3
		if c == 0xF0 {
			lo = 0x90
		} else if c == 0xF4 {
			hi = 0x8F
		}
	default:
		return 1
	}
	n := 1
	for k := 0; k < need && n < len(b); k++ {
		c := b[n]
		if k == 0 && (c < lo || c > hi) || k > 0 && (c < 0x80 || c > 0xBF) {
			break
		}
		n++
	}
	return n
}

// Decode turns ids back into text as the tokenizers library's decode:
// each id's token (added tokens by their content; an unknown id is
// skipped), the special added tokens left out when skipSpecial, then the
// file's decoder. Decoders other than ByteLevel (and none) are not
// implemented and fail naming their type.
func (t *Tokenizer) Decode(ids []int, skipSpecial bool) (string, error) {
	if t.decoder == nil {
		return "", fmt.Errorf("multimodal: Tokenizer.Decode: decoder %q is not supported (supported: ByteLevel, none)", t.decoderType)
	}
	tokens := make([]string, 0, len(ids))
	for _, id := range ids {
		tok, ok := t.IDToToken(id)
		if !ok || skipSpecial && t.added.special[id] {
			continue
		}
		tokens = append(tokens, tok)
	}
	return t.decoder.decode(tokens), nil
}
