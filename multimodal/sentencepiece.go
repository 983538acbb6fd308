package multimodal

import (
	"encoding/binary"
	"fmt"
	"strings"
	"unicode/utf8"

	"google.golang.org/protobuf/encoding/protowire"
)

// sentencePiece is a sentencepiece ModelProto of model type CHAR, read
// from its protobuf wire format (sentencepiece_model.proto's field
// numbers; the library itself is not needed), with the normalizer the
// library builds from its NormalizerSpec.
type sentencePiece struct {
	pieces  []string
	kinds   []int32 // SentencePiece.Type: 1 normal, 2 unknown, 3 control, 4 user defined, 5 unused, 6 byte
	ids     map[string]int
	unkID   int
	userDef []string // user-defined pieces, matched whole before any character

	// NormalizerSpec
	charsmap                   []uint32 // the Darts double array of precompiled_charsmap
	normalized                 []byte   // the replacement strings it points into
	addDummyPrefix             bool
	removeExtraSpace, escapeWS bool
}

const (
	pieceUnknown     = 2
	pieceControl     = 3
	pieceUserDefined = 4
	modelTypeChar    = 4
	spaceSymbol      = "\u2581"
)

// parseSentencePiece reads a .model file's bytes (path names it in
// errors). Only the CHAR model type, which SpeechT5's spm_char.model is,
// is implemented; byte fallback and whitespace as suffix change encoding
// and fail naming the option.
func parseSentencePiece(data []byte, path string) (*sentencePiece, error) {
	var err error
	sp := &sentencePiece{ids: map[string]int{}, unkID: -1, addDummyPrefix: true, removeExtraSpace: true, escapeWS: true}
	fail := func(format string, args ...any) (*sentencePiece, error) {
		return nil, fmt.Errorf("multimodal: sentencepiece model %s: "+format, append([]any{path}, args...)...)
	}
	modelType := int64(1) // UNIGRAM, the proto's default
	err = eachField(data, func(num protowire.Number, typ protowire.Type, v uint64, b []byte) error {
		switch num {
		case 1: // pieces
			piece, kind := "", int32(1)
			if err := eachField(b, func(n protowire.Number, _ protowire.Type, v uint64, b []byte) error {
				switch n {
				case 1:
					piece = string(b)
				case 3:
					kind = int32(v)
				}
				return nil
			}); err != nil {
				return err
			}
			id := len(sp.pieces)
			sp.pieces, sp.kinds = append(sp.pieces, piece), append(sp.kinds, kind)
			if kind == pieceUnknown && sp.unkID < 0 {
				sp.unkID = id
			}
			if kind == pieceUserDefined {
				sp.userDef = append(sp.userDef, piece)
			}
			if _, dup := sp.ids[piece]; !dup {
				sp.ids[piece] = id
			}
		case 2: // trainer_spec
			return eachField(b, func(n protowire.Number, _ protowire.Type, v uint64, _ []byte) error {
				switch {
				case n == 3:
					modelType = int64(v)
				case n == 24 && v != 0:
					return fmt.Errorf("trainer_spec.treat_whitespace_as_suffix is true, which is not supported")
				case n == 35 && v != 0:
					return fmt.Errorf("trainer_spec.byte_fallback is true, which is not supported")
				}
				return nil
			})
		case 3: // normalizer_spec
			return eachField(b, func(n protowire.Number, _ protowire.Type, v uint64, b []byte) error {
				switch n {
				case 2:
					return sp.readCharsmap(b)
				case 3:
					sp.addDummyPrefix = v != 0
				case 4:
					sp.removeExtraSpace = v != 0
				case 5:
					sp.escapeWS = v != 0
				}
				return nil
			})
		}
		return nil
	})
	if err != nil {
		return fail("%v", err)
	}
	if modelType != modelTypeChar {
		names := map[int64]string{1: "UNIGRAM", 2: "BPE", 3: "WORD", 4: "CHAR"}
		return fail("model type %s (%d) is not supported (supported: CHAR, SpeechT5's spm_char.model)", names[modelType], modelType)
	}
	if sp.unkID < 0 {
		return fail("no piece of type UNKNOWN")
	}
	return sp, nil
}

// eachField calls f for each field of a protobuf message: varints give v,
// length-delimited fields b; fixed32 and fixed64 give their bits in v.
func eachField(data []byte, f func(protowire.Number, protowire.Type, uint64, []byte) error) error {
	for len(data) > 0 {
		num, typ, n := protowire.ConsumeTag(data)
		if n < 0 {
			return fmt.Errorf("malformed protobuf: %v", protowire.ParseError(n))
		}
		data = data[n:]
		var v uint64
		var b []byte
		switch typ {
		case protowire.VarintType:
			v, n = protowire.ConsumeVarint(data)
		case protowire.BytesType:
			b, n = protowire.ConsumeBytes(data)
		case protowire.Fixed32Type:
			var x uint32
			x, n = protowire.ConsumeFixed32(data)
			v = uint64(x)
		case protowire.Fixed64Type:
			v, n = protowire.ConsumeFixed64(data)
		default:
			n = protowire.ConsumeFieldValue(num, typ, data)
		}
		if n < 0 {
			return fmt.Errorf("malformed protobuf field %d: %v", num, protowire.ParseError(n))
		}
		data = data[n:]
		if err := f(num, typ, v, b); err != nil {
			return err
		}
	}
	return nil
}

// readCharsmap splits precompiled_charsmap: a little-endian uint32 byte
// size of the double array, the array, then the NUL-terminated
// replacement strings.
func (sp *sentencePiece) readCharsmap(b []byte) error {
	if len(b) == 0 {
		return nil
	}
	if len(b) < 4 {
		return fmt.Errorf("precompiled_charsmap has %d bytes, too few for its header", len(b))
	}
	size := binary.LittleEndian.Uint32(b)
	if size%4 != 0 || uint64(size) > uint64(len(b)-4) {
		return fmt.Errorf("precompiled_charsmap's trie size %d does not fit its %d bytes", size, len(b))
	}
	sp.charsmap = make([]uint32, size/4)
	for i := range sp.charsmap {
		sp.charsmap[i] = binary.LittleEndian.Uint32(b[4+4*i:])
	}
	sp.normalized = b[4+size:]
	return nil
}

// prefixMatch is Darts' commonPrefixSearch for the longest key of the
// charsmap that starts s: its length and value (0, 0 for none).
func (sp *sentencePiece) prefixMatch(s string) (length, value int) {
	a := sp.charsmap
	if len(a) == 0 {
		return 0, 0
	}
	offset := func(u uint32) uint32 { return (u >> 10) << ((u & (1 << 9)) >> 6) }
	pos := offset(a[0])
	for i := 0; i < len(s) && s[i] != 0; i++ {
		pos ^= uint32(s[i])
		if int(pos) >= len(a) {
			return
		}
		u := a[pos]
		if u&((1<<31)|0xFF) != uint32(s[i]) {
			return
		}
		pos ^= offset(u)
		if (u>>8)&1 == 1 && int(pos) < len(a) {
			length, value = i+1, int(a[pos]&((1<<31)-1))
		}
	}
	return
}

// normalizePrefix is the normalizer's NormalizePrefix: the replacement of
// the longest charsmap key starting s, else s's first character (a
// malformed byte becomes U+FFFD), and the bytes consumed.
func (sp *sentencePiece) normalizePrefix(s string) (string, int) {
	for _, u := range sp.userDef {
		if strings.HasPrefix(s, u) {
			return u, len(u)
		}
	}
	if n, v := sp.prefixMatch(s); n > 0 {
		if v >= len(sp.normalized) {
			return "", n
		}
		end := v
		for end < len(sp.normalized) && sp.normalized[end] != 0 {
			end++
		}
		return string(sp.normalized[v:end]), n
	}
	r, n := utf8.DecodeRuneInString(s)
	if r == utf8.RuneError && n <= 1 {
		return "\ufffd", 1
	}
	return s[:n], n
}

// normalize is sentencepiece's Normalizer::Normalize: the charsmap rules,
// runs of spaces collapsed and the ends trimmed (remove_extra_whitespaces),
// "▁" before the text (add_dummy_prefix) and for every space
// (escape_whitespaces).
func (sp *sentencePiece) normalize(s string) string {
	if sp.removeExtraSpace {
		for s != "" {
			p, n := sp.normalizePrefix(s)
			if p != " " {
				break
			}
			s = s[n:]
		}
	}
	if s == "" {
		return ""
	}
	space := " "
	if sp.escapeWS {
		space = spaceSymbol
	}
	var out strings.Builder
	if sp.addDummyPrefix {
		out.WriteString(space)
	}
	prevSpace := sp.removeExtraSpace
	for s != "" {
		p, n := sp.normalizePrefix(s)
		if prevSpace {
			p = strings.TrimLeft(p, " ")
		}
		if p != "" {
			if sp.escapeWS {
				out.WriteString(strings.ReplaceAll(p, " ", spaceSymbol))
			} else {
				out.WriteString(p)
			}
			prevSpace = strings.HasSuffix(p, " ")
		}
		s = s[n:]
		if !sp.removeExtraSpace {
			prevSpace = false
		}
	}
	res := out.String()
	if sp.removeExtraSpace {
		for strings.HasSuffix(res, space) {
			res = res[:len(res)-len(space)]
		}
	}
	return res
}

// encode is SentencePieceProcessor.encode for a CHAR model: the normalized
// text split into user-defined pieces and characters, each its piece's id
// or the unknown id, a run of unknown characters one unknown id.
func (sp *sentencePiece) encode(text string) []int {
	s := sp.normalize(text)
	var ids []int
	for s != "" {
		n := 0
		for _, u := range sp.userDef {
			if strings.HasPrefix(s, u) && len(u) > n {
				n = len(u)
			}
		}
		if n == 0 {
			_, n = utf8.DecodeRuneInString(s)
		}
		id, ok := sp.ids[s[:n]]
		if !ok || sp.kinds[id] == pieceControl || sp.kinds[id] == pieceUnknown {
			id = sp.unkID
		}
		// sentencepiece merges a run of unknown characters into one
		// unknown piece.
		if id != sp.unkID || len(ids) == 0 || ids[len(ids)-1] != sp.unkID {
			ids = append(ids, id)
		}
		s = s[n:]
	}
	return ids
}

// piece is id's piece, "" outside the vocabulary.
func (sp *sentencePiece) piece(id int) string {
	if id < 0 || id >= len(sp.pieces) {
		return ""
	}
	return sp.pieces[id]
}
