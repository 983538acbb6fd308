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

// Diffusion pipelines (abi/diffuse.go): load a diffusers folder or a zip
// archive of one, sample with a seed.

//export wt_diffusion_load
func wt_diffusion_load(dir, device *C.char, out *C.wt_diffusion) (status C.int32_t) {
	defer guard(&status)
	return loadNamed("wt_diffusion_load", dir, device, out, abi.DiffusionLoad)
}

//export wt_diffusion_load_zip
func wt_diffusion_load_zip(buf unsafe.Pointer, nbytes C.size_t, device *C.char, out *C.wt_diffusion) (status C.int32_t) {
	defer guard(&status)
	return loadFromBuffer("wt_diffusion_load_zip", buf, nbytes, device, out, abi.DiffusionLoadZip)
}

//export wt_diffusion_free
func wt_diffusion_free(pipe C.wt_diffusion) (status C.int32_t) {
	defer guard(&status)
	return done(abi.DiffusionFree(int64(pipe)))
}

//export wt_diffusion_info_json
func wt_diffusion_info_json(pipe C.wt_diffusion, buf *C.char, capacity C.size_t, needed *C.size_t) (status C.int32_t) {
	defer guard(&status)
	s, err := abi.DiffusionInfoJSON(int64(pipe))
	return writeResult(s, err, buf, capacity, needed)
}

//export wt_diffusion_quantize_int8
func wt_diffusion_quantize_int8(pipe C.wt_diffusion) (status C.int32_t) {
	defer guard(&status)
	return done(abi.DiffusionQuantizeInt8(int64(pipe)))
}

//export wt_diffusion_generate
func wt_diffusion_generate(pipe C.wt_diffusion, batch, steps C.int32_t, seed C.uint64_t, scheduler *C.char, out *C.wt_tensor) (status C.int32_t) {
	defer guard(&status)
	if out == nil {
		return invalid("wt_diffusion_generate: out is NULL")
	}
	s, _ := goString(scheduler)
	h, err := abi.DiffusionGenerate(int64(pipe), int(batch), int(steps), uint64(seed), s, nil)
	return setHandle(h, err, out)
}

//export wt_diffusion_generate_classes
func wt_diffusion_generate_classes(pipe C.wt_diffusion, labels *C.int64_t, n C.int32_t, steps C.int32_t, seed C.uint64_t,
	guidance C.double, scheduler *C.char, out *C.wt_tensor) (status C.int32_t) {
	defer guard(&status)
	if out == nil {
		return invalid("wt_diffusion_generate_classes: out is NULL")
	}
	if err := abi.CheckCount("n_labels", int64(n), maxTexts); err != nil {
		return fail(abi.Prefix(err, "wt_diffusion_generate_classes"))
	}
	if n > 0 && labels == nil {
		return invalid("wt_diffusion_generate_classes: labels is NULL but n_labels is %d", int(n))
	}
	var ls []int64
	if n > 0 {
		ls = unsafe.Slice((*int64)(unsafe.Pointer(labels)), int(n))
	}
	s, _ := goString(scheduler)
	h, err := abi.DiffusionGenerateClasses(int64(pipe), ls, int(steps), uint64(seed), float64(guidance), s, nil)
	return setHandle(h, err, out)
}

//export wt_diffusion_generate_text
func wt_diffusion_generate_text(pipe C.wt_diffusion, prompts **C.char, nPrompts C.int32_t, negative **C.char, nNegative C.int32_t,
	imagesPerPrompt, steps C.int32_t, seed C.uint64_t, guidance C.double, height, width C.int32_t, scheduler *C.char,
	latents C.wt_tensor, out *C.wt_tensor) (status C.int32_t) {
	defer guard(&status)
	const fn = "wt_diffusion_generate_text"
	if out == nil {
		return invalid("wt_diffusion_generate_text: out is NULL")
	}
	ps, err := goStrings(prompts, nPrompts, "prompts", "n_prompts")
	if err != nil {
		return fail(abi.Prefix(err, fn))
	}
	ns, err := goStrings(negative, nNegative, "negative_prompts", "n_negative")
	if err != nil {
		return fail(abi.Prefix(err, fn))
	}
	s, _ := goString(scheduler)
	h, err := abi.DiffusionGenerateText(int64(pipe), abi.TextToImage{Prompts: ps, NegativePrompts: ns,
		ImagesPerPrompt: int(imagesPerPrompt), Steps: int(steps), Seed: uint64(seed), GuidanceScale: float64(guidance),
		Height: int(height), Width: int(width), Scheduler: s, Latents: int64(latents)})
	return setHandle(h, err, out)
}

//export wt_diffusion_encode_text
func wt_diffusion_encode_text(pipe C.wt_diffusion, texts **C.char, n C.int32_t, out *C.wt_tensor) (status C.int32_t) {
	defer guard(&status)
	if out == nil {
		return invalid("wt_diffusion_encode_text: out is NULL")
	}
	ts, err := goStrings(texts, n, "texts", "n_texts")
	if err != nil {
		return fail(abi.Prefix(err, "wt_diffusion_encode_text"))
	}
	h, err := abi.DiffusionEncodeText(int64(pipe), ts)
	return setHandle(h, err, out)
}
