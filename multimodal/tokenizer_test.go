package multimodal

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The tokenizer reference vectors: the tokenizers library encoded a corpus
// under several truncation and padding settings with MiniLM's WordPiece
// tokenizer and two byte-level BPE tokenizers (testdata/make_refs.py).

type tokenizerRefs struct {
	Corpus     []string                      `json:"corpus"`
	Pairs      [][2]string                   `json:"pairs"`
	Tokenizers map[string][]tokenizerRefCase `json:"tokenizers"`
}

type tokenizerRefCase struct {
	Name       string          `json:"name"`
	Truncation json.RawMessage `json:"truncation"` // null, "file" or the settings
	Padding    json.RawMessage `json:"padding"`
	AddSpecial bool            `json:"add_special"`
	Pairs      bool            `json:"pairs"`
	Inputs     []int           `json:"inputs"`
	Expect     []struct {
		IDs               []int    `json:"ids"`
		TypeIDs           []int    `json:"type_ids"`
		AttentionMask     []int    `json:"attention_mask"`
		SpecialTokensMask []int    `json:"special_tokens_mask"`
		Tokens            []string `json:"tokens"`
	} `json:"expect"`
}

func loadTokenizerRefs(t *testing.T) *tokenizerRefs {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "tokenizer_refs.json"))
	require.NoError(t, err)
	var r tokenizerRefs
	require.NoError(t, json.Unmarshal(b, &r))
	require.Len(t, r.Tokenizers, 3)
	return &r
}

// configure applies a case's settings to the tokenizer as the file gave it.
func (c *tokenizerRefCase) configure(t *testing.T, tok *Tokenizer) *Tokenizer {
	t.Helper()
	var err error
	switch string(c.Truncation) {
	case `"file"`:
	case "null":
		tok = tok.WithoutTruncation()
	default:
		var tr struct {
			MaxLength int    `json:"max_length"`
			Strategy  string `json:"strategy"`
			Direction string `json:"direction"`
		}
		require.NoError(t, json.Unmarshal(c.Truncation, &tr))
		tok, err = tok.WithTruncation(Truncation{MaxLength: tr.MaxLength, Strategy: tr.Strategy, Direction: tr.Direction})
		require.NoError(t, err)
	}
	switch string(c.Padding) {
	case `"file"`:
	case "null":
		tok = tok.WithoutPadding()
	default:
		var p struct {
			Length    int    `json:"length"`
			Multiple  int    `json:"pad_to_multiple_of"`
			Direction string `json:"direction"`
			PadID     int    `json:"pad_id"`
			PadTypeID int    `json:"pad_type_id"`
			PadToken  string `json:"pad_token"`
		}
		require.NoError(t, json.Unmarshal(c.Padding, &p))
		tok, err = tok.WithPadding(Padding{Length: p.Length, PadToMultipleOf: p.Multiple, Direction: p.Direction,
			PadID: p.PadID, PadTypeID: p.PadTypeID, PadToken: p.PadToken})
		require.NoError(t, err)
	}
	return tok
}

func TestTokenizersMatchReference(t *testing.T) {
	r := loadTokenizerRefs(t)
	for name, cases := range r.Tokenizers {
		t.Run(name, func(t *testing.T) {
			base, err := LoadTokenizer(filepath.Join("testdata", name, "tokenizer.json"))
			require.NoError(t, err)
			for _, c := range cases {
				t.Run(c.Name, func(t *testing.T) {
					tok := c.configure(t, base)
					var got []*Encoding
					if c.Pairs {
						pairs := make([][2]string, len(c.Inputs))
						for i, k := range c.Inputs {
							pairs[i] = r.Pairs[k]
						}
						got, err = tok.EncodePairBatch(pairs, c.AddSpecial)
					} else {
						texts := make([]string, len(c.Inputs))
						for i, k := range c.Inputs {
							texts[i] = r.Corpus[k]
						}
						got, err = tok.EncodeBatch(texts, c.AddSpecial)
					}
					require.NoError(t, err)
					require.Len(t, got, len(c.Expect))
					for i, want := range c.Expect {
						input := abbreviate(r, c, i)
						if want.Tokens != nil && !assert.Equal(t, want.Tokens, got[i].Tokens, "tokens of %s", input) {
							continue
						}
						assert.Equal(t, want.IDs, got[i].IDs, "ids of %s", input)
						assert.Equal(t, want.TypeIDs, got[i].TypeIDs, "type ids of %s", input)
						assert.Equal(t, want.AttentionMask, got[i].AttentionMask, "attention mask of %s", input)
						assert.Equal(t, want.SpecialTokensMask, got[i].SpecialTokensMask, "special tokens mask of %s", input)
					}
				})
			}
		})
	}
}

// abbreviate names input i of a case in a failure message.
func abbreviate(r *tokenizerRefs, c tokenizerRefCase, i int) string {
	s := ""
	if c.Pairs {
		p := r.Pairs[c.Inputs[i]]
		s = p[0] + " | " + p[1]
	} else {
		s = r.Corpus[c.Inputs[i]]
	}
	if len(s) > 60 {
		s = s[:60] + "..."
	}
	return strings.ReplaceAll(s, "\n", `\n`)
}
