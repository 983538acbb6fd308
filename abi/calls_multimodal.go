package abi

import (
	"encoding/json"
	"math"
)

// The multimodal library's methods as wt_call targets (call.go): each
// reads its arguments by name and runs the function of this package that
// does the work (multimodal.go, speech.go, video.go, conformer.go,
// image.go). Tensors go in and come back as handles; lists of indices and
// lengths come back as numbers, since every SDK would read them at once.

func init() {
	registerCalls(map[string]method{
		"tokenizer.load": {"tokenizer handle", func(c *CallArgs) func() (any, error) {
			return loadEither(c, tokenizerLoad, tokenizerLoadBytes)
		}},
		"tokenizer.free":       {"null", freeCall(tokenizerFree)},
		"tokenizer.vocab_size": {"integer", getCall(tokenizerVocabSize)},
		"tokenizer.encode": {`object: "input_ids", "token_type_ids", "attention_mask" tensors (texts, length) i64`, func(c *CallArgs) func() (any, error) {
			texts, add := c.Strings("texts"), c.Bool("add_special_tokens", true)
			pad, dev := c.Int("pad_id", -1), c.Str("device", "")
			return func() (any, error) {
				e, err := tokenizerEncode(c.Self, texts, add, pad, dev)
				return map[string]int64{"input_ids": e.IDs, "token_type_ids": e.TypeIDs, "attention_mask": e.Mask}, err
			}
		}},
		"tokenizer.decode": {"string", func(c *CallArgs) func() (any, error) {
			ids, skip := c.Ints("ids"), c.Bool("skip_special_tokens", false)
			return func() (any, error) { return tokenizerDecode(c.Self, ids, skip) }
		}},
		"tokenizer.batch_decode": {"list of strings, one a row", func(c *CallArgs) func() (any, error) {
			ids, skip := c.Tensor("ids"), c.Bool("skip_special_tokens", false)
			return func() (any, error) { return batchDecode(c.Self, ids, skip) }
		}},

		"image_processor.load": {"image_processor handle", func(c *CallArgs) func() (any, error) {
			return loadEither(c, imageProcessorLoad, imageProcessorLoadBytes)
		}},
		"image_processor.free": {"null", freeCall(imageProcessorFree)},
		"image_processor.preprocess": {"tensor (images, 3, H, W) f32 pixel values", func(c *CallArgs) func() (any, error) {
			images, dev := c.Tensors("images"), c.Str("device", "")
			return func() (any, error) { return imageProcessorPreprocess(c.Self, images, dev) }
		}},
		"image_processor.preprocess_video": {"tensor (videos, frames, 3, H, W) f32 pixel values", func(c *CallArgs) func() (any, error) {
			videos, dev := c.Tensors("videos"), c.Str("device", "")
			return func() (any, error) { return imageProcessorPreprocessVideo(c.Self, videos, dev) }
		}},
		"video.sample_frame_indices": {"list of clip_len integers", func(c *CallArgs) func() (any, error) {
			clip, rate := c.NeedIntIn("clip_len", 0, math.MaxInt32), c.NeedIntIn("frame_sample_rate", 0, math.MaxInt32)
			seg, seed := c.NeedIntIn("seg_len", 0, math.MaxInt32), c.IntIn("seed", 0, 0, math.MaxUint32)
			return func() (any, error) {
				return ints(videoSampleFrameIndices(int(clip), int(rate), int(seg), uint32(seed)))
			}
		}},
		"video.uniform_frame_indices": {"list of num_frames integers", func(c *CallArgs) func() (any, error) {
			total, n := c.NeedIntIn("total", 0, math.MaxInt32), c.NeedIntIn("num_frames", 0, math.MaxInt32)
			return func() (any, error) { return ints(videoUniformFrameIndices(int(total), int(n))) }
		}},
		"audio.resample": {"tensor (..., time at to_hz) on x's device", func(c *CallArgs) func() (any, error) {
			// Any int32: the resampler's own check names a rate that is not positive.
			x := c.Tensor("x")
			from, to := c.NeedIntIn("from_hz", math.MinInt32, math.MaxInt32), c.NeedIntIn("to_hz", math.MinInt32, math.MaxInt32)
			return func() (any, error) { return audioResample(x, int(from), int(to)) }
		}},

		"sentence_encoder.load": {"sentence_encoder handle", func(c *CallArgs) func() (any, error) {
			return loadModel(c, sentenceEncoderLoad, sentenceEncoderLoadZip)
		}},
		"sentence_encoder.free": {"null", freeCall(sentenceEncoderFree)},
		"sentence_encoder.dim":  {"integer: an embedding's length", getCall(sentenceEncoderDim)},
		"sentence_encoder.encode": {"tensor (texts, dim) f32", func(c *CallArgs) func() (any, error) {
			texts, batch := c.Strings("texts"), c.IntIn("batch_size", 32, 0, math.MaxInt32)
			return func() (any, error) { return sentenceEncoderEncode(c.Self, texts, int(batch)) }
		}},

		"clip.load": {"clip handle", func(c *CallArgs) func() (any, error) { return loadModel(c, clipLoad, clipLoadZip) }},
		"clip.free": {"null", freeCall(clipFree)},
		"clip.zero_shot": {"tensor (images, texts): each image's probabilities over the texts", func(c *CallArgs) func() (any, error) {
			pixels, texts := c.Tensor("pixels"), c.Strings("texts")
			return func() (any, error) { return clipZeroShot(c.Self, pixels, texts) }
		}},
		"clip.text_features": {"tensor (texts, projection_dim), not normalised", func(c *CallArgs) func() (any, error) {
			texts := c.Strings("texts")
			return func() (any, error) { return clipTextFeatures(c.Self, texts) }
		}},
		"clip.image_features": {"tensor (images, projection_dim), not normalised", func(c *CallArgs) func() (any, error) {
			pixels := c.Tensor("pixels")
			return func() (any, error) { return clipImageFeatures(c.Self, pixels) }
		}},
	})
	registerCalls(audioCalls)
}

// loadEither loads from the argument path, or from the call's data when no
// path is given (a tokenizer.json's or a preprocessor_config.json's bytes).
func loadEither(c *CallArgs, fromPath func(string) (int64, error), fromBytes func([]byte) (int64, error)) func() (any, error) {
	if c.Has("path") {
		p := c.Path("path", "load the file's bytes")
		return func() (any, error) { return fromPath(p) }
	}
	data := c.Bytes("the file's bytes (or a path argument)")
	return func() (any, error) { return fromBytes(data) }
}

// loadModel loads a model folder at the argument path, or a zip archive of
// one from the call's data (fromZip nil: a folder only), on the argument
// device.
func loadModel(c *CallArgs, fromDir func(dir, device string) (int64, error),
	fromZip func(data []byte, device string) (int64, error)) func() (any, error) {
	return loadPathOrData(c, fromDir, fromZip, "a zip archive of the model's folder")
}

// loadPathOrData loads from the argument path or, given none, from the
// call's data, which holds what data says (its words in docs/calls.md and
// in the browser's refusal of a path).
func loadPathOrData(c *CallArgs, fromPath func(path, device string) (int64, error),
	fromData func(data []byte, device string) (int64, error), data string) func() (any, error) {
	dev := c.Str("device", "")
	if c.Has("path") || fromData == nil {
		instead := "" // a loader with no way in but a path
		if fromData != nil {
			instead = "load " + data
		}
		p := c.Path("path", instead)
		return func() (any, error) { return fromPath(p, dev) }
	}
	raw := c.Bytes(data + " (or a path argument)")
	return func() (any, error) { return fromData(raw, dev) }
}

// freeCall is an object kind's free: self's handle.
func freeCall(free func(int64) error) CallFunc {
	return func(c *CallArgs) func() (any, error) {
		return func() (any, error) { return nil, free(c.Self) }
	}
}

// getCall is a method without arguments returning a number (a size, a
// sampling rate).
func getCall[T any](get func(int64) (T, error)) CallFunc {
	return func(c *CallArgs) func() (any, error) {
		return func() (any, error) { return get(c.Self) }
	}
}

// ints reads and frees a small i64 tensor a function made (indices,
// lengths): the SDKs take such results as lists.
func ints(h int64, err error) ([]int64, error) {
	if err != nil {
		return nil, err
	}
	defer func() { _ = TensorFree(h) }()
	t, err := TensorOf(h)
	if err != nil {
		return nil, err
	}
	return t.Int64s()
}

// batchDecode decodes each row of a 2-D tensor of ids.
func batchDecode(tok, ids int64, skip bool) ([]string, error) {
	t, err := TensorOf(ids)
	if err != nil {
		return nil, err
	}
	if t.Rank() != 2 {
		return nil, Invalidf("tokenizer.batch_decode: ids must be 2-D (texts, length), got shape %v", t.Shape())
	}
	vals, err := t.Int64s()
	if err != nil {
		return nil, err
	}
	rows, cols := t.Shape()[0], t.Shape()[1]
	out := make([]string, rows)
	for r := range out {
		if out[r], err = tokenizerDecode(tok, vals[r*cols:(r+1)*cols], skip); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// rawJSON passes a JSON document a function already wrote (an info, a
// stream's updates) into the result unchanged.
func rawJSON(s string, err error) (any, error) {
	if err != nil {
		return nil, err
	}
	return json.RawMessage(s), nil
}
