//go:build js && wasm

package main

import (
	"syscall/js"

	"github.com/webtensor/webtensor/abi"
)

// The multimodal library (abi/multimodal.go) as the page can use it: a
// tokenizer from a tokenizer.json's bytes and an image processor from a
// preprocessor_config.json's, a sentence encoder and CLIP from a zip
// archive of their folders (abi/multimodal_zip.go), and resampling. The
// other models load from folders, which the page has not (table.go's
// omitted says so per call).

// strings reads an array of strings.
func (a args) strings(i int, what string) ([]string, error) {
	v, err := a.at(i, what)
	if err != nil {
		return nil, err
	}
	if !isArray(v) {
		return nil, abi.Invalidf("%s must be an array of strings, got %s", what, v.Type())
	}
	out := make([]string, v.Length())
	for j := range out {
		s := v.Index(j)
		if s.Type() != js.TypeString {
			return nil, abi.Invalidf("%s[%d] must be a string, got %s", what, j, s.Type())
		}
		out[j] = s.String()
	}
	return out, nil
}

// tokenizerLoadBytes(bytes: Uint8Array) -> tokenizer handle
func tokenizerLoadBytes(a args) (any, error) {
	raw, err := a.bytes(0, "bytes", nil)
	if err != nil {
		return nil, err
	}
	return abi.TokenizerLoadBytes(raw)
}

// imageProcessorLoadBytes(bytes: Uint8Array) -> image processor handle
func imageProcessorLoadBytes(a args) (any, error) {
	raw, err := a.bytes(0, "bytes", nil)
	if err != nil {
		return nil, err
	}
	return abi.ImageProcessorLoadBytes(raw)
}

// imageProcessorPreprocess(proc, images: handles, device) -> pixel values handle
func imageProcessorPreprocess(a args) (any, error) {
	r := a.reader()
	p := r.int(0, "image processor handle")
	imgs := r.ints(1, "images")
	d := r.optStr(2, "device")
	return r.then(func() (any, error) { return abi.ImageProcessorPreprocess(p, imgs, d) })
}

// tokenizerEncode(tok, texts: string[], addSpecial, padId, device) -> [ids, typeIds, mask]
func tokenizerEncode(a args) (any, error) {
	r := a.reader()
	tok := r.int(0, "tokenizer handle")
	texts := r.strings(1, "texts")
	pad := r.int(3, "pad id")
	d := r.optStr(4, "device")
	if r.err != nil {
		return nil, r.err
	}
	enc, err := abi.TokenizerEncode(tok, texts, a.bool(2), pad, d)
	if err != nil {
		return nil, err
	}
	return []any{enc.IDs, enc.TypeIDs, enc.Mask}, nil
}

// tokenizerDecode(tok, ids: number[], skipSpecial) -> text
func tokenizerDecode(a args) (any, error) {
	r := a.reader()
	tok := r.int(0, "tokenizer handle")
	ids := r.ints(1, "ids")
	return r.then(func() (any, error) { return abi.TokenizerDecode(tok, ids, a.bool(2)) })
}

// audioResample(x, fromHz, toHz) -> resampled waveform handle
func audioResample(a args) (any, error) {
	r := a.reader()
	x := r.handle(0)
	from := r.int(1, "from_hz")
	to := r.int(2, "to_hz")
	return r.then(func() (any, error) { return abi.AudioResample(x, int(from), int(to)) })
}

// loadZip(bytes: Uint8Array, device) -> a model's handle, from load, a
// zip loader (sentence encoders, CLIP, diffusion pipelines).
func loadZip(load func([]byte, string) (int64, error)) call {
	return func(a args) (any, error) {
		raw, err := a.bytes(0, "bytes", nil)
		if err != nil {
			return nil, err
		}
		d, err := a.optStr(1, "device")
		if err != nil {
			return nil, err
		}
		return load(raw, d)
	}
}

// sentenceEncoderEncode(enc, texts: string[], batchSize) -> embeddings handle
func sentenceEncoderEncode(a args) (any, error) {
	r := a.reader()
	e := r.handle(0)
	texts := r.strings(1, "texts")
	batch := r.int(2, "batch size")
	if r.err != nil {
		return nil, r.err
	}
	if batch < 0 {
		// The header's batch_size is an int32_t that must be >= 0; the
		// C ABI refuses a negative one before abi sees it, and so does this.
		return nil, abi.Invalidf("wt_sentence_encoder_encode: batch_size %d is negative", batch)
	}
	return abi.SentenceEncoderEncode(e, texts, int(batch))
}

// clipZeroShot(clip, pixels, texts: string[]) -> probabilities handle
func clipZeroShot(a args) (any, error) {
	r := a.reader()
	c := r.handle(0)
	px := r.int(1, "pixels handle")
	texts := r.strings(2, "texts")
	return r.then(func() (any, error) { return abi.CLIPZeroShot(c, px, texts) })
}

// clipTextFeatures(clip, texts: string[]) -> features handle
func clipTextFeatures(a args) (any, error) {
	r := a.reader()
	c := r.handle(0)
	texts := r.strings(1, "texts")
	return r.then(func() (any, error) { return abi.CLIPTextFeatures(c, texts) })
}

// clipImageFeatures(clip, pixels) -> features handle
func clipImageFeatures(a args) (any, error) {
	r := a.reader()
	c := r.handle(0)
	px := r.int(1, "pixels handle")
	return r.then(func() (any, error) { return abi.CLIPImageFeatures(c, px) })
}
