package main

/*
#cgo CFLAGS: -I${SRCDIR}/include -DWT_NO_PROTOTYPES
#include "webtensor.h"
*/
import "C"

import (
	"github.com/webtensor/webtensor/abi"
)

//export wt_tensor_set_requires_grad
func wt_tensor_set_requires_grad(h C.wt_tensor, on C.int32_t) (status C.int32_t) {
	defer guard(&status)
	return done(abi.TensorSetRequiresGrad(int64(h), on != 0))
}

//export wt_tensor_requires_grad
func wt_tensor_requires_grad(h C.wt_tensor, on *C.int32_t) (status C.int32_t) {
	defer guard(&status)
	return get("wt_tensor_requires_grad", on, tensorHandle(abi.TensorRequiresGrad, h), bool32)
}

//export wt_backward
func wt_backward(h C.wt_tensor, grad C.wt_tensor) (status C.int32_t) {
	defer guard(&status)
	return done(abi.Backward(int64(h), int64(grad)))
}

//export wt_tensor_grad
func wt_tensor_grad(h C.wt_tensor, grad *C.wt_tensor) (status C.int32_t) {
	defer guard(&status)
	return get("wt_tensor_grad", grad, tensorHandle(abi.TensorGrad, h), func(g int64) C.wt_tensor { return C.wt_tensor(g) })
}

//export wt_tensor_zero_grad
func wt_tensor_zero_grad(h C.wt_tensor) (status C.int32_t) {
	defer guard(&status)
	return done(abi.TensorZeroGrad(int64(h)))
}

//export wt_tensor_detach
func wt_tensor_detach(h C.wt_tensor, out *C.wt_tensor) (status C.int32_t) {
	defer guard(&status)
	return get("wt_tensor_detach", out, tensorHandle(abi.TensorDetach, h), func(d int64) C.wt_tensor { return C.wt_tensor(d) })
}
