package main

/*
#cgo CFLAGS: -I${SRCDIR}/include -DWT_NO_PROTOTYPES
#include "webtensor.h"
*/
import "C"

import (
	"github.com/webtensor/webtensor/core"
)

//export wt_tensor_set_requires_grad
func wt_tensor_set_requires_grad(h C.wt_tensor, on C.int32_t) (status C.int32_t) {
	defer guard(&status)
	return withTensor(h, false, "wt_tensor_set_requires_grad", func(t *core.Tensor) C.int32_t {
		return done(t.SetRequiresGrad(on != 0).Err())
	})
}

//export wt_tensor_requires_grad
func wt_tensor_requires_grad(h C.wt_tensor, on *C.int32_t) (status C.int32_t) {
	defer guard(&status)
	return withTensor(h, on == nil, "wt_tensor_requires_grad", func(t *core.Tensor) C.int32_t {
		*on = 0
		if t.RequiresGrad() {
			*on = 1
		}
		return statusOK
	})
}

//export wt_backward
func wt_backward(h C.wt_tensor, grad C.wt_tensor) (status C.int32_t) {
	defer guard(&status)
	return withTensor(h, false, "wt_backward", func(t *core.Tensor) C.int32_t {
		if grad == 0 {
			return done(t.Backward())
		}
		g, err := tensorOf(int64(grad))
		if err != nil {
			return fail(prefix(err, "wt_backward: gradient"))
		}
		return done(t.Backward(g))
	})
}

//export wt_tensor_grad
func wt_tensor_grad(h C.wt_tensor, grad *C.wt_tensor) (status C.int32_t) {
	defer guard(&status)
	return withTensor(h, grad == nil, "wt_tensor_grad", func(t *core.Tensor) C.int32_t {
		g := t.Grad()
		if g == nil {
			*grad = 0
			return statusOK
		}
		return output(g, grad)
	})
}

//export wt_tensor_zero_grad
func wt_tensor_zero_grad(h C.wt_tensor) (status C.int32_t) {
	defer guard(&status)
	return withTensor(h, false, "wt_tensor_zero_grad", func(t *core.Tensor) C.int32_t {
		t.ZeroGrad()
		return statusOK
	})
}

//export wt_tensor_detach
func wt_tensor_detach(h C.wt_tensor, out *C.wt_tensor) (status C.int32_t) {
	defer guard(&status)
	return withTensor(h, out == nil, "wt_tensor_detach", func(t *core.Tensor) C.int32_t {
		e, err := lookup(int64(h))
		if err != nil {
			return fail(err)
		}
		*out = C.wt_tensor(newHandle(t.Detach(), e.readOnly))
		return statusOK
	})
}
