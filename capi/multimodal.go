package main

/*
#cgo CFLAGS: -I${SRCDIR}/include -DWT_NO_PROTOTYPES
#include "webtensor.h"
*/
import "C"

import (
	"unsafe"

	"github.com/webtensor/webtensor/abi"
)

// The multimodal library (abi/multimodal.go): tokenizers, sentence
// encoders, CLIP and Whisper behind handles; C strings in, tensors out.

// maxTexts bounds a call's texts, as abi.MaxInputs bounds an op's inputs:
// a corrupted count fails here rather than in an allocation.
const maxTexts = 1 << 20

// goStrings copies n C strings; list and count name them in errors.
func goStrings(p **C.char, n C.int32_t, list, count string) ([]string, error) {
	if err := abi.CheckCount(count, int64(n), maxTexts); err != nil {
		return nil, err
	}
	if n > 0 && p == nil {
		return nil, abi.Invalidf("%s is NULL but %s is %d", list, count, int(n))
	}
	out := make([]string, int(n))
	if n == 0 {
		return out, nil
	}
	for i, s := range unsafe.Slice(p, int(n)) {
		v, ok := goString(s)
		if !ok {
			return nil, abi.Invalidf("%s[%d] is NULL", list, i)
		}
		out[i] = v
	}
	return out, nil
}

// getInt32 writes what f says of object h (a size, a sampling rate) to
// out.
func getInt32(fn string, out *C.int32_t, h int64, f func(h int64) (int, error)) C.int32_t {
	return get(fn, out, func() (int, error) { return f(h) }, func(n int) C.int32_t { return C.int32_t(n) })
}

// setWithOptional writes a call's result to out and, when the caller
// passed a place for it, its optional second tensor (a mask) to second.
func setWithOptional(h, second int64, err error, out, secondOut *C.wt_tensor) C.int32_t {
	if err != nil {
		return fail(err)
	}
	*out = C.wt_tensor(h)
	if secondOut != nil {
		*secondOut = C.wt_tensor(second)
	}
	return statusOK
}

// withTexts is the body of the calls that map a C array of n texts to one
// tensor: out checked, the strings read (goStrings), compute's tensor
// written.
func withTexts(fn string, texts **C.char, n C.int32_t, out *C.wt_tensor, compute func(texts []string) (int64, error)) C.int32_t {
	if out == nil {
		return invalid("%s: out is NULL", fn)
	}
	ts, err := goStrings(texts, n, "texts", "n_texts")
	if err != nil {
		return fail(abi.Prefix(err, "%s", fn))
	}
	h, err := compute(ts)
	return setHandle(h, err, out)
}

//export wt_tokenizer_load
func wt_tokenizer_load(path *C.char, out *C.wt_tokenizer) (status C.int32_t) {
	defer guard(&status)
	return loadNamed("wt_tokenizer_load", path, nil, out, func(p, _ string) (int64, error) { return abi.TokenizerLoad(p) })
}

//export wt_tokenizer_load_bytes
func wt_tokenizer_load_bytes(buf unsafe.Pointer, nbytes C.size_t, out *C.wt_tokenizer) (status C.int32_t) {
	defer guard(&status)
	return loadFromBuffer("wt_tokenizer_load_bytes", buf, nbytes, nil, out,
		func(raw []byte, _ string) (int64, error) { return abi.TokenizerLoadBytes(raw) })
}

//export wt_tokenizer_free
func wt_tokenizer_free(tok C.wt_tokenizer) (status C.int32_t) {
	defer guard(&status)
	return done(abi.TokenizerFree(int64(tok)))
}

//export wt_tokenizer_vocab_size
func wt_tokenizer_vocab_size(tok C.wt_tokenizer, size *C.int32_t) (status C.int32_t) {
	defer guard(&status)
	return getInt32("wt_tokenizer_vocab_size", size, int64(tok), abi.TokenizerVocabSize)
}

//export wt_tokenizer_encode
func wt_tokenizer_encode(tok C.wt_tokenizer, texts **C.char, n C.int32_t, addSpecial C.int32_t, padID C.int64_t,
	device *C.char, ids, typeIDs, mask *C.wt_tensor) (status C.int32_t) {
	defer guard(&status)
	if ids == nil {
		return invalid("wt_tokenizer_encode: ids is NULL")
	}
	ts, err := goStrings(texts, n, "texts", "n_texts")
	if err != nil {
		return fail(abi.Prefix(err, "wt_tokenizer_encode"))
	}
	d, _ := goString(device)
	enc, err := abi.TokenizerEncode(int64(tok), ts, addSpecial != 0, int64(padID), d)
	if err != nil {
		return fail(err)
	}
	*ids = C.wt_tensor(enc.IDs)
	for _, o := range []struct {
		dst *C.wt_tensor
		h   int64
	}{{typeIDs, enc.TypeIDs}, {mask, enc.Mask}} {
		if o.dst == nil {
			_ = abi.TensorFree(o.h) // not wanted
			continue
		}
		*o.dst = C.wt_tensor(o.h)
	}
	return statusOK
}

//export wt_tokenizer_decode
func wt_tokenizer_decode(tok C.wt_tokenizer, ids *C.int64_t, n C.int64_t, skipSpecial C.int32_t, buf *C.char,
	capacity C.size_t, needed *C.size_t) (status C.int32_t) {
	defer guard(&status)
	if n < 0 || (ids == nil && n > 0) {
		return invalid("wt_tokenizer_decode: n is %d with ids %v", int64(n), ids != nil)
	}
	var in []int64
	if n > 0 {
		in = unsafe.Slice((*int64)(unsafe.Pointer(ids)), int(n))
	}
	s, err := abi.TokenizerDecode(int64(tok), in, skipSpecial != 0)
	return writeResult(s, err, buf, capacity, needed)
}

//export wt_image_processor_load
func wt_image_processor_load(path *C.char, out *C.wt_image_processor) (status C.int32_t) {
	defer guard(&status)
	return loadNamed("wt_image_processor_load", path, nil, out, func(p, _ string) (int64, error) { return abi.ImageProcessorLoad(p) })
}

//export wt_image_processor_load_bytes
func wt_image_processor_load_bytes(buf unsafe.Pointer, nbytes C.size_t, out *C.wt_image_processor) (status C.int32_t) {
	defer guard(&status)
	return loadFromBuffer("wt_image_processor_load_bytes", buf, nbytes, nil, out,
		func(raw []byte, _ string) (int64, error) { return abi.ImageProcessorLoadBytes(raw) })
}

//export wt_image_processor_free
func wt_image_processor_free(proc C.wt_image_processor) (status C.int32_t) {
	defer guard(&status)
	return done(abi.ImageProcessorFree(int64(proc)))
}

//export wt_image_processor_preprocess
func wt_image_processor_preprocess(proc C.wt_image_processor, images *C.wt_tensor, n C.int32_t, device *C.char, out *C.wt_tensor) (status C.int32_t) {
	defer guard(&status)
	if out == nil {
		return invalid("wt_image_processor_preprocess: out is NULL")
	}
	hs, err := handles(images, n, "images", "n_images")
	if err != nil {
		return fail(abi.Prefix(err, "wt_image_processor_preprocess"))
	}
	d, _ := goString(device)
	h, err := abi.ImageProcessorPreprocess(int64(proc), hs, d)
	return setHandle(h, err, out)
}

//export wt_sentence_encoder_load
func wt_sentence_encoder_load(dir, device *C.char, out *C.wt_sentence_encoder) (status C.int32_t) {
	defer guard(&status)
	return loadNamed("wt_sentence_encoder_load", dir, device, out, abi.SentenceEncoderLoad)
}

//export wt_sentence_encoder_free
func wt_sentence_encoder_free(enc C.wt_sentence_encoder) (status C.int32_t) {
	defer guard(&status)
	return done(abi.SentenceEncoderFree(int64(enc)))
}

//export wt_sentence_encoder_dim
func wt_sentence_encoder_dim(enc C.wt_sentence_encoder, dim *C.int32_t) (status C.int32_t) {
	defer guard(&status)
	return getInt32("wt_sentence_encoder_dim", dim, int64(enc), abi.SentenceEncoderDim)
}

//export wt_sentence_encoder_encode
func wt_sentence_encoder_encode(enc C.wt_sentence_encoder, texts **C.char, n C.int32_t, batchSize C.int32_t, out *C.wt_tensor) (status C.int32_t) {
	defer guard(&status)
	if out == nil {
		return invalid("wt_sentence_encoder_encode: out is NULL")
	}
	if batchSize < 0 {
		return invalid("wt_sentence_encoder_encode: batch_size %d is negative", int(batchSize))
	}
	ts, err := goStrings(texts, n, "texts", "n_texts")
	if err != nil {
		return fail(abi.Prefix(err, "wt_sentence_encoder_encode"))
	}
	h, err := abi.SentenceEncoderEncode(int64(enc), ts, int(batchSize))
	return setHandle(h, err, out)
}

//export wt_clip_load
func wt_clip_load(dir, device *C.char, out *C.wt_clip) (status C.int32_t) {
	defer guard(&status)
	return loadNamed("wt_clip_load", dir, device, out, abi.CLIPLoad)
}

//export wt_clip_free
func wt_clip_free(clip C.wt_clip) (status C.int32_t) {
	defer guard(&status)
	return done(abi.CLIPFree(int64(clip)))
}

//export wt_clip_zero_shot
func wt_clip_zero_shot(clip C.wt_clip, pixels C.wt_tensor, texts **C.char, n C.int32_t, out *C.wt_tensor) (status C.int32_t) {
	defer guard(&status)
	return withTexts("wt_clip_zero_shot", texts, n, out, func(ts []string) (int64, error) {
		return abi.CLIPZeroShot(int64(clip), int64(pixels), ts)
	})
}

//export wt_clip_text_features
func wt_clip_text_features(clip C.wt_clip, texts **C.char, n C.int32_t, out *C.wt_tensor) (status C.int32_t) {
	defer guard(&status)
	return withTexts("wt_clip_text_features", texts, n, out, func(ts []string) (int64, error) {
		return abi.CLIPTextFeatures(int64(clip), ts)
	})
}

//export wt_clip_image_features
func wt_clip_image_features(clip C.wt_clip, pixels C.wt_tensor, out *C.wt_tensor) (status C.int32_t) {
	defer guard(&status)
	if out == nil {
		return invalid("wt_clip_image_features: out is NULL")
	}
	h, err := abi.CLIPImageFeatures(int64(clip), int64(pixels))
	return setHandle(h, err, out)
}

//export wt_whisper_load
func wt_whisper_load(dir, device *C.char, out *C.wt_whisper) (status C.int32_t) {
	defer guard(&status)
	return loadNamed("wt_whisper_load", dir, device, out, abi.WhisperLoad)
}

//export wt_whisper_free
func wt_whisper_free(model C.wt_whisper) (status C.int32_t) {
	defer guard(&status)
	return done(abi.WhisperFree(int64(model)))
}

//export wt_whisper_sampling_rate
func wt_whisper_sampling_rate(model C.wt_whisper, rate *C.int32_t) (status C.int32_t) {
	defer guard(&status)
	return getInt32("wt_whisper_sampling_rate", rate, int64(model), abi.WhisperSamplingRate)
}

//export wt_whisper_tokenizer
func wt_whisper_tokenizer(model C.wt_whisper, out *C.wt_tokenizer) (status C.int32_t) {
	defer guard(&status)
	if out == nil {
		return invalid("wt_whisper_tokenizer: out is NULL")
	}
	h, err := abi.WhisperTokenizer(int64(model))
	return setObject(h, err, out)
}

//export wt_whisper_generate
func wt_whisper_generate(model C.wt_whisper, waves *C.wt_tensor, n C.int32_t, maxNewTokens, numBeams C.int32_t, out *C.wt_tensor) (status C.int32_t) {
	defer guard(&status)
	if out == nil {
		return invalid("wt_whisper_generate: out is NULL")
	}
	hs, err := handles(waves, n, "waves", "n_waves")
	if err != nil {
		return fail(abi.Prefix(err, "wt_whisper_generate"))
	}
	h, err := abi.WhisperGenerate(int64(model), hs, int(maxNewTokens), int(numBeams))
	return setHandle(h, err, out)
}
