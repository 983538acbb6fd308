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

// Training (abi/optim.go, abi/train.go): optimisers, learning-rate
// schedules and gradient clipping. Settings are wt_attr arrays, read in
// place as wt_op's attributes are.

// params views a C array of parameter handles (more may come than an op
// takes inputs).
func params(p *C.wt_tensor, n C.int32_t, fn string) ([]int64, error) {
	if err := abi.CheckCount(fn+": n_params", int64(n), abi.MaxParams); err != nil {
		return nil, err
	}
	if n > 0 && p == nil {
		return nil, abi.Invalidf("%s: params is NULL but n_params is %d", fn, int(n))
	}
	if n == 0 {
		return nil, nil
	}
	return unsafe.Slice((*int64)(unsafe.Pointer(p)), int(n)), nil
}

// settingsOf is a wt_attr array as abi reads it (nil: none).
func settingsOf(p *C.wt_attr, n C.int32_t) abi.AttrList {
	if n == 0 {
		return nil
	}
	return cAttrs{p, n}
}

//export wt_optimizer_new
func wt_optimizer_new(kind *C.char, ps *C.wt_tensor, nParams C.int32_t, settings *C.wt_attr, nSettings C.int32_t, out *C.wt_optimizer) (status C.int32_t) {
	defer guard(&status)
	k, ok := goString(kind)
	if !ok || out == nil {
		return invalid("wt_optimizer_new: kind or out is NULL")
	}
	hs, err := params(ps, nParams, "wt_optimizer_new")
	if err != nil {
		return fail(err)
	}
	h, err := abi.OptimizerNew(k, hs, settingsOf(settings, nSettings))
	if err != nil {
		return fail(err)
	}
	*out = C.wt_optimizer(h)
	return statusOK
}

//export wt_optimizer_set
func wt_optimizer_set(opt C.wt_optimizer, settings *C.wt_attr, nSettings C.int32_t) (status C.int32_t) {
	defer guard(&status)
	return done(abi.OptimizerSet(int64(opt), settingsOf(settings, nSettings)))
}

//export wt_optimizer_step
func wt_optimizer_step(opt C.wt_optimizer) (status C.int32_t) {
	defer guard(&status)
	return done(abi.OptimizerStep(int64(opt)))
}

//export wt_optimizer_zero_grad
func wt_optimizer_zero_grad(opt C.wt_optimizer) (status C.int32_t) {
	defer guard(&status)
	return done(abi.OptimizerZeroGrad(int64(opt)))
}

//export wt_optimizer_state
func wt_optimizer_state(opt C.wt_optimizer, out *C.wt_state) (status C.int32_t) {
	defer guard(&status)
	if out == nil {
		return invalid("wt_optimizer_state: out is NULL")
	}
	h, err := abi.OptimizerState(int64(opt))
	if err != nil {
		return fail(err)
	}
	*out = C.wt_state(h)
	return statusOK
}

//export wt_optimizer_load_state
func wt_optimizer_load_state(opt C.wt_optimizer, state C.wt_state) (status C.int32_t) {
	defer guard(&status)
	return done(abi.OptimizerLoadState(int64(opt), int64(state)))
}

//export wt_optimizer_free
func wt_optimizer_free(opt C.wt_optimizer) (status C.int32_t) {
	defer guard(&status)
	return done(abi.OptimizerFree(int64(opt)))
}

//export wt_lr_schedule
func wt_lr_schedule(kind *C.char, settings *C.wt_attr, nSettings C.int32_t, base C.double, step C.int64_t, lr *C.double) (status C.int32_t) {
	defer guard(&status)
	k, ok := goString(kind)
	if !ok || lr == nil {
		return invalid("wt_lr_schedule: kind or lr is NULL")
	}
	v, err := abi.LRSchedule(k, settingsOf(settings, nSettings), float64(base), int64(step))
	if err != nil {
		return fail(err)
	}
	*lr = C.double(v)
	return statusOK
}

//export wt_clip_grad_norm
func wt_clip_grad_norm(ps *C.wt_tensor, nParams C.int32_t, maxNorm, normType C.double, total *C.wt_tensor) (status C.int32_t) {
	defer guard(&status)
	if total == nil {
		return invalid("wt_clip_grad_norm: total_norm is NULL")
	}
	hs, err := params(ps, nParams, "wt_clip_grad_norm")
	if err != nil {
		return fail(err)
	}
	h, err := abi.ClipGradNorm(hs, float64(maxNorm), float64(normType))
	return setHandle(h, err, total)
}

//export wt_clip_grad_value
func wt_clip_grad_value(ps *C.wt_tensor, nParams C.int32_t, clip C.double) (status C.int32_t) {
	defer guard(&status)
	hs, err := params(ps, nParams, "wt_clip_grad_value")
	if err != nil {
		return fail(err)
	}
	return done(abi.ClipGradValue(hs, float64(clip)))
}

//export wt_nn_init
func wt_nn_init(t C.wt_tensor, method *C.char, settings *C.wt_attr, nSettings C.int32_t) (status C.int32_t) {
	defer guard(&status)
	m, ok := goString(method)
	if !ok {
		return invalid("wt_nn_init: method is NULL")
	}
	return done(abi.NNInit(int64(t), m, settingsOf(settings, nSettings)))
}

//export wt_nn_calculate_gain
func wt_nn_calculate_gain(nonlinearity *C.char, param C.double, gain *C.double) (status C.int32_t) {
	defer guard(&status)
	n, ok := goString(nonlinearity)
	if !ok || gain == nil {
		return invalid("wt_nn_calculate_gain: nonlinearity or gain is NULL")
	}
	g, err := abi.NNCalculateGain(n, float64(param))
	if err != nil {
		return fail(err)
	}
	*gain = C.double(g)
	return statusOK
}
