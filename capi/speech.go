package main

/*
#cgo CFLAGS: -I${SRCDIR}/include -DWT_NO_PROTOTYPES
#include "webtensor.h"
*/
import "C"

import (
	"github.com/webtensor/webtensor/abi"
)

// Speech synthesis and streaming recognition (abi/speech.go):
// wt_speecht5_* and wt_whisper_stream_*.

//export wt_speecht5_load
func wt_speecht5_load(dir, vocoderDir, device *C.char, out *C.wt_speecht5) (status C.int32_t) {
	defer guard(&status)
	if out == nil {
		return invalid("wt_speecht5_load: out is NULL")
	}
	p, _ := goString(dir)
	v, _ := goString(vocoderDir)
	d, _ := goString(device)
	h, err := abi.SpeechT5Load(p, v, d)
	return setObject(h, err, out)
}

//export wt_speecht5_free
func wt_speecht5_free(model C.wt_speecht5) (status C.int32_t) {
	defer guard(&status)
	return done(abi.SpeechT5Free(int64(model)))
}

//export wt_speecht5_sampling_rate
func wt_speecht5_sampling_rate(model C.wt_speecht5, rate *C.int32_t) (status C.int32_t) {
	defer guard(&status)
	return getInt32("wt_speecht5_sampling_rate", rate, int64(model), abi.SpeechT5SamplingRate)
}

//export wt_speecht5_tokenize
func wt_speecht5_tokenize(model C.wt_speecht5, texts **C.char, n C.int32_t, ids, mask *C.wt_tensor) (status C.int32_t) {
	defer guard(&status)
	if ids == nil {
		return invalid("wt_speecht5_tokenize: ids is NULL")
	}
	ts, err := goStrings(texts, n, "texts", "n_texts")
	if err != nil {
		return fail(abi.Prefix(err, "wt_speecht5_tokenize"))
	}
	i, m, err := abi.SpeechT5Tokenize(int64(model), ts, mask != nil)
	return setWithOptional(i, m, err, ids, mask)
}

//export wt_speecht5_generate
func wt_speecht5_generate(model C.wt_speecht5, ids, mask, speakers C.wt_tensor, threshold, minLenRatio, maxLenRatio C.double,
	prenetDropout C.int32_t, seed C.uint64_t, prefix C.wt_tensor, prefillChunk C.int32_t,
	spectrogram, lengths, waveform *C.wt_tensor) (status C.int32_t) {
	defer guard(&status)
	if spectrogram == nil || lengths == nil {
		return invalid("wt_speecht5_generate: spectrogram or lengths is NULL")
	}
	o := abi.SpeechOptions{Threshold: float64(threshold), MinLenRatio: float64(minLenRatio), MaxLenRatio: float64(maxLenRatio),
		PrenetDropout: prenetDropout != 0, Seed: uint64(seed), Prefix: int64(prefix), PrefillChunk: int(prefillChunk)}
	s, l, w, err := abi.SpeechT5Generate(int64(model), int64(ids), int64(mask), int64(speakers), o, waveform != nil)
	if err != nil {
		return fail(err)
	}
	*spectrogram, *lengths = C.wt_tensor(s), C.wt_tensor(l)
	if waveform != nil {
		*waveform = C.wt_tensor(w)
	}
	return statusOK
}

//export wt_speecht5_vocode
func wt_speecht5_vocode(model C.wt_speecht5, spectrogram C.wt_tensor, out *C.wt_tensor) (status C.int32_t) {
	defer guard(&status)
	if out == nil {
		return invalid("wt_speecht5_vocode: out is NULL")
	}
	h, err := abi.SpeechT5Vocode(int64(model), int64(spectrogram))
	return setHandle(h, err, out)
}

//export wt_whisper_stream_new
func wt_whisper_stream_new(model C.wt_whisper, chunkSamples, maxNewTokens, windowSamples, trimEncoder C.int32_t,
	tokensPerSecond C.double, out *C.wt_whisper_stream) (status C.int32_t) {
	defer guard(&status)
	if out == nil {
		return invalid("wt_whisper_stream_new: out is NULL")
	}
	h, err := abi.WhisperStreamNew(int64(model), int(chunkSamples), int(maxNewTokens), int(windowSamples), trimEncoder != 0,
		float64(tokensPerSecond))
	return setObject(h, err, out)
}

//export wt_whisper_stream_free
func wt_whisper_stream_free(stream C.wt_whisper_stream) (status C.int32_t) {
	defer guard(&status)
	return done(abi.WhisperStreamFree(int64(stream)))
}

//export wt_whisper_stream_push
func wt_whisper_stream_push(stream C.wt_whisper_stream, samples C.wt_tensor, final C.int32_t, updates *C.int32_t) (status C.int32_t) {
	defer guard(&status)
	n, err := abi.WhisperStreamPush(int64(stream), int64(samples), final != 0)
	if err != nil {
		return fail(err)
	}
	if updates != nil {
		*updates = C.int32_t(n)
	}
	return statusOK
}

//export wt_whisper_stream_read
func wt_whisper_stream_read(stream C.wt_whisper_stream, buf *C.char, capacity C.size_t, needed *C.size_t) (status C.int32_t) {
	defer guard(&status)
	s, err := abi.WhisperStreamRead(int64(stream))
	return writeResult(s, err, buf, capacity, needed)
}
