package multimodal

import (
	"encoding/json"
	"fmt"
)

// postProcessor adds special tokens ([CLS] ... [SEP], <s> ... </s>) and
// sets the type ids.
type postProcessor interface {
	// added is how many tokens process adds, for truncation to leave room.
	added(pair bool) int
	process(a, b *Encoding) *Encoding
}

func parsePostProcessor(raw json.RawMessage) (postProcessor, error) {
	typ, err := componentType(raw)
	if err != nil || typ == "" {
		return nil, err
	}
	switch typ {
	case "TemplateProcessing":
		return parseTemplate(raw)
	case "BertProcessing", "RobertaProcessing":
		var j struct {
			Sep [2]json.RawMessage `json:"sep"`
			Cls [2]json.RawMessage `json:"cls"`
		}
		if err := json.Unmarshal(raw, &j); err != nil {
			return nil, fmt.Errorf("in %s: %w", typ, err)
		}
		var p pairProcessing
		if err := readSpecial(j.Sep, &p.sep); err != nil {
			return nil, fmt.Errorf("%s: sep: %w", typ, err)
		}
		if err := readSpecial(j.Cls, &p.cls); err != nil {
			return nil, fmt.Errorf("%s: cls: %w", typ, err)
		}
		p.roberta = typ == "RobertaProcessing"
		return p, nil
	case "ByteLevel":
		// It only trims offsets, which this package does not report.
		return identityPost{}, nil
	case "Sequence":
		var s struct {
			Processors []json.RawMessage `json:"processors"`
		}
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, fmt.Errorf("in Sequence: %w", err)
		}
		var found postProcessor = identityPost{}
		for i, r := range s.Processors {
			p, err := parsePostProcessor(r)
			if err != nil {
				return nil, fmt.Errorf("in Sequence[%d]: %w", i, err)
			}
			if _, id := p.(identityPost); id || p == nil {
				continue
			}
			if _, id := found.(identityPost); !id {
				return nil, fmt.Errorf("in Sequence: more than one processor that adds tokens is not supported")
			}
			found = p
		}
		return found, nil
	}
	return nil, fmt.Errorf("post-processor type %q is not supported (supported: TemplateProcessing, BertProcessing, RobertaProcessing, ByteLevel, Sequence)", typ)
}

type identityPost struct{}

func (identityPost) added(bool) int                   { return 0 }
func (identityPost) process(a, b *Encoding) *Encoding { return joinPlain(a, b) }

type specialToken struct {
	token string
	id    int
}

func readSpecial(raw [2]json.RawMessage, s *specialToken) error {
	if err := json.Unmarshal(raw[0], &s.token); err != nil {
		return err
	}
	return json.Unmarshal(raw[1], &s.id)
}

// pairProcessing is BertProcessing ([CLS] A [SEP] B [SEP], B's part of
// type 1) and RobertaProcessing (<s> A </s> </s> B </s>, all of type 0:
// RoBERTa has no segment embeddings).
type pairProcessing struct {
	sep, cls specialToken
	roberta  bool
}

func (p pairProcessing) added(pair bool) int {
	switch {
	case !pair:
		return 2
	case p.roberta:
		return 4
	}
	return 3
}

func (p pairProcessing) process(a, b *Encoding) *Encoding {
	out := concat(specials(0, p.cls), withType(a, 0), specials(0, p.sep))
	if b == nil {
		return out
	}
	if p.roberta {
		return concat(out, specials(0, p.sep), withType(b, 0), specials(0, p.sep))
	}
	return concat(out, withType(b, 1), specials(1, p.sep))
}

// specials is a run of post-processor tokens of one type id.
func specials(typeID int, toks ...specialToken) *Encoding {
	e := &Encoding{}
	for _, t := range toks {
		e.IDs = append(e.IDs, t.id)
		e.Tokens = append(e.Tokens, t.token)
		e.TypeIDs = append(e.TypeIDs, typeID)
		e.AttentionMask = append(e.AttentionMask, 1)
		e.SpecialTokensMask = append(e.SpecialTokensMask, 1)
	}
	return e
}

func withType(e *Encoding, typeID int) *Encoding {
	for i := range e.TypeIDs {
		e.TypeIDs[i] = typeID
	}
	return e
}

// template is TemplateProcessing: the single and pair layouts as lists of
// sequences (A, B) and special tokens, each with its type id.
type template struct {
	single, pair []templatePiece
	specials     map[string][]specialToken
}

type templatePiece struct {
	special string // the special token's name, or "" for a sequence
	seq     string // "A" or "B"
	typeID  int
}

func parseTemplate(raw json.RawMessage) (*template, error) {
	type pieceJSON struct {
		SpecialToken *struct {
			ID     string `json:"id"`
			TypeID int    `json:"type_id"`
		} `json:"SpecialToken"`
		Sequence *struct {
			ID     string `json:"id"`
			TypeID int    `json:"type_id"`
		} `json:"Sequence"`
	}
	var j struct {
		Single        []pieceJSON `json:"single"`
		Pair          []pieceJSON `json:"pair"`
		SpecialTokens map[string]struct {
			ID     string   `json:"id"`
			IDs    []int    `json:"ids"`
			Tokens []string `json:"tokens"`
		} `json:"special_tokens"`
	}
	if err := json.Unmarshal(raw, &j); err != nil {
		return nil, fmt.Errorf("in TemplateProcessing: %w", err)
	}
	t := &template{specials: map[string][]specialToken{}}
	for name, s := range j.SpecialTokens {
		if len(s.IDs) != len(s.Tokens) {
			return nil, fmt.Errorf("in TemplateProcessing: special token %q has %d ids and %d tokens", name, len(s.IDs), len(s.Tokens))
		}
		for i := range s.IDs {
			t.specials[name] = append(t.specials[name], specialToken{s.Tokens[i], s.IDs[i]})
		}
	}
	conv := func(which string, in []pieceJSON) ([]templatePiece, error) {
		var out []templatePiece
		for i, p := range in {
			switch {
			case p.SpecialToken != nil:
				if _, ok := t.specials[p.SpecialToken.ID]; !ok {
					return nil, fmt.Errorf("in TemplateProcessing: %s[%d]: special token %q is not in special_tokens", which, i, p.SpecialToken.ID)
				}
				out = append(out, templatePiece{special: p.SpecialToken.ID, typeID: p.SpecialToken.TypeID})
			case p.Sequence != nil && (p.Sequence.ID == "A" || p.Sequence.ID == "B"):
				out = append(out, templatePiece{seq: p.Sequence.ID, typeID: p.Sequence.TypeID})
			default:
				return nil, fmt.Errorf("in TemplateProcessing: %s[%d] is neither a special token nor sequence A or B", which, i)
			}
		}
		return out, nil
	}
	var err error
	if t.single, err = conv("single", j.Single); err != nil {
		return nil, err
	}
	if t.pair, err = conv("pair", j.Pair); err != nil {
		return nil, err
	}
	return t, nil
}

func (t *template) added(pair bool) int {
	pieces := t.single
	if pair {
		pieces = t.pair
	}
	n := 0
	for _, p := range pieces {
		n += len(t.specials[p.special])
	}
	return n
}

func (t *template) process(a, b *Encoding) *Encoding {
	pieces := t.single
	if b != nil {
		pieces = t.pair
	}
	var parts []*Encoding
	for _, p := range pieces {
		switch {
		case p.special != "":
			parts = append(parts, specials(p.typeID, t.specials[p.special]...))
		case p.seq == "A":
			parts = append(parts, withType(a, p.typeID))
		case b != nil:
			parts = append(parts, withType(b, p.typeID))
		}
	}
	return concat(parts...)
}

// Truncation limits an encoding's length, the tokenizers library's
// TruncationParams. MaxLength counts the special tokens the
// post-processor adds.
type Truncation struct {
	MaxLength int
	// Strategy for pairs: LongestFirst (the default) shortens the longer
	// text first, OnlyFirst and OnlySecond only the one named.
	Strategy string
	// Stride is kept for round-tripping a tokenizer.json; the overflowing
	// windows it would describe are not returned.
	Stride int
	// Direction is Right (the default, drop the end) or Left.
	Direction string
}

type truncationJSON struct {
	MaxLength int    `json:"max_length"`
	Strategy  string `json:"strategy"`
	Stride    int    `json:"stride"`
	Direction string `json:"direction"`
}

func (j truncationJSON) parse() (Truncation, error) {
	tr := Truncation(j)
	return tr, tr.validate()
}

func (tr *Truncation) validate() error {
	if tr.Strategy == "" {
		tr.Strategy = "LongestFirst"
	}
	if tr.Direction == "" {
		tr.Direction = "Right"
	}
	switch {
	case tr.MaxLength < 0:
		return fmt.Errorf("multimodal: truncation max_length %d is negative", tr.MaxLength)
	case tr.Strategy != "LongestFirst" && tr.Strategy != "OnlyFirst" && tr.Strategy != "OnlySecond":
		return fmt.Errorf("multimodal: truncation strategy %q is not LongestFirst, OnlyFirst or OnlySecond", tr.Strategy)
	case tr.Direction != "Right" && tr.Direction != "Left":
		return fmt.Errorf("multimodal: truncation direction %q is not Right or Left", tr.Direction)
	}
	return nil
}

// apply truncates a (and b) in place so that with added special tokens
// they fit MaxLength, as the tokenizers library's truncate_encodings.
func (tr *Truncation) apply(a, b *Encoding, added int) error {
	if tr.MaxLength < added {
		return fmt.Errorf("multimodal: truncation max_length %d is less than the %d special tokens the post-processor adds", tr.MaxLength, added)
	}
	limit := tr.MaxLength - added
	total := a.Len()
	if b != nil {
		total += b.Len()
	}
	if total <= limit {
		return nil
	}
	remove := total - limit
	switch {
	case tr.Strategy == "OnlyFirst" || tr.Strategy == "OnlySecond":
		target, which := a, "first"
		if tr.Strategy == "OnlySecond" {
			if b == nil {
				return fmt.Errorf("multimodal: truncation strategy OnlySecond needs a pair of texts")
			}
			target, which = b, "second"
		}
		if target.Len() <= remove {
			return fmt.Errorf("multimodal: truncation: the %s sequence (%d tokens) is too short to remove %d", which, target.Len(), remove)
		}
		target.truncate(target.Len()-remove, tr.Direction)
	case b == nil:
		a.truncate(limit, tr.Direction)
	default: // LongestFirst on a pair
		n1, n2 := a.Len(), b.Len()
		swap := n1 > n2
		if swap {
			n1, n2 = n2, n1
		}
		if n1 > limit {
			n2 = n1
		} else {
			n2 = max(n1, limit-n1)
		}
		if n1+n2 > limit {
			n1 = limit / 2
			n2 = n1 + limit%2
		}
		if swap {
			n1, n2 = n2, n1
		}
		a.truncate(n1, tr.Direction)
		b.truncate(n2, tr.Direction)
	}
	return nil
}

// truncate keeps n positions, the first ones (Right) or the last (Left).
func (e *Encoding) truncate(n int, direction string) {
	if n >= e.Len() {
		return
	}
	lo, hi := 0, n
	if direction == "Left" {
		lo, hi = e.Len()-n, e.Len()
	}
	e.IDs, e.Tokens, e.TypeIDs = e.IDs[lo:hi], e.Tokens[lo:hi], e.TypeIDs[lo:hi]
	e.AttentionMask, e.SpecialTokensMask = e.AttentionMask[lo:hi], e.SpecialTokensMask[lo:hi]
}

// Padding pads encodings, the tokenizers library's PaddingParams.
type Padding struct {
	// Length is the fixed length to pad to; 0 pads a batch to its
	// longest encoding (BatchLongest).
	Length          int
	PadToMultipleOf int    // round the length up to a multiple of this (0: no rounding)
	Direction       string // Right (the default) or Left
	PadID           int
	PadTypeID       int
	PadToken        string
}

type paddingJSON struct {
	Strategy        json.RawMessage `json:"strategy"`
	Direction       string          `json:"direction"`
	PadToMultipleOf *int            `json:"pad_to_multiple_of"`
	PadID           int             `json:"pad_id"`
	PadTypeID       int             `json:"pad_type_id"`
	PadToken        string          `json:"pad_token"`
}

func (j paddingJSON) parse() (Padding, error) {
	p := Padding{Direction: j.Direction, PadID: j.PadID, PadTypeID: j.PadTypeID, PadToken: j.PadToken}
	if j.PadToMultipleOf != nil {
		p.PadToMultipleOf = *j.PadToMultipleOf
	}
	var name string
	var fixed struct {
		Fixed *int `json:"Fixed"`
	}
	switch {
	case json.Unmarshal(j.Strategy, &name) == nil && name == "BatchLongest":
	case json.Unmarshal(j.Strategy, &fixed) == nil && fixed.Fixed != nil && *fixed.Fixed > 0:
		p.Length = *fixed.Fixed
	default:
		return Padding{}, fmt.Errorf("strategy %s is neither \"BatchLongest\" nor {\"Fixed\": n} with n > 0", describe(j.Strategy))
	}
	return p, p.validate()
}

func (p *Padding) validate() error {
	if p.Direction == "" {
		p.Direction = "Right"
	}
	switch {
	case p.Length < 0:
		return fmt.Errorf("multimodal: padding length %d is negative", p.Length)
	case p.PadToMultipleOf < 0:
		return fmt.Errorf("multimodal: padding pad_to_multiple_of %d is negative", p.PadToMultipleOf)
	case p.Direction != "Right" && p.Direction != "Left":
		return fmt.Errorf("multimodal: padding direction %q is not Right or Left", p.Direction)
	}
	return nil
}

// padBatch pads every encoding to the fixed length, or to the batch's
// longest, rounded up to PadToMultipleOf; longer encodings are left as
// they are (padding never truncates).
func (t *Tokenizer) padBatch(encs []*Encoding) {
	p := t.pad
	if p == nil {
		return
	}
	target := p.Length
	if target == 0 {
		for _, e := range encs {
			target = max(target, e.Len())
		}
	}
	if m := p.PadToMultipleOf; m > 0 && target%m != 0 {
		target += m - target%m
	}
	for _, e := range encs {
		n := target - e.Len()
		if n <= 0 {
			continue
		}
		pad := &Encoding{}
		for range n {
			pad.IDs = append(pad.IDs, p.PadID)
			pad.Tokens = append(pad.Tokens, p.PadToken)
			pad.TypeIDs = append(pad.TypeIDs, p.PadTypeID)
			pad.AttentionMask = append(pad.AttentionMask, 0)
			pad.SpecialTokensMask = append(pad.SpecialTokensMask, 1)
		}
		if p.Direction == "Left" {
			*e = *concat(pad, e)
		} else {
			*e = *concat(e, pad)
		}
	}
}
