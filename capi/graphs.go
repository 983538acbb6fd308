package main

/*
#cgo CFLAGS: -I${SRCDIR}/include -DWT_NO_PROTOTYPES
#include "webtensor.h"
*/
import "C"

import (
	"sync"
	"unsafe"

	"github.com/webtensor/webtensor/core"
	"github.com/webtensor/webtensor/core/ir"
)

// Graph capture through the ABI (core/ir): an SDK brackets a function call
// with wt_trace_begin and wt_trace_end, and gets a graph handle that
// wt_graph_run replays - after the passes and, on a device that can, with
// elementwise chains fused into single kernels.

var graphs = struct {
	sync.Mutex
	next    int64
	m       map[int64]*ir.Graph
	capture *ir.Capture
}{next: 1, m: map[int64]*ir.Graph{}}

func handleList(p *C.wt_tensor, n C.int32_t, what string) ([]*core.Tensor, error) {
	if n < 0 || n > maxInputs {
		return nil, invalid("%s: count %d out of range (0..%d)", what, int(n), maxInputs)
	}
	if n > 0 && p == nil {
		return nil, invalid("%s is NULL but its count is %d", what, int(n))
	}
	out := make([]*core.Tensor, n)
	if n == 0 {
		return out, nil
	}
	for i, h := range unsafe.Slice((*C.wt_tensor)(p), int(n)) {
		t, err := tensorOf(int64(h))
		if err != nil {
			return nil, prefix(err, "%s %d", what, i)
		}
		out[i] = t
	}
	return out, nil
}

//export wt_trace_begin
func wt_trace_begin(inputs *C.wt_tensor, n C.int32_t) (status C.int32_t) {
	defer guard(&status)
	ins, err := handleList(inputs, n, "wt_trace_begin: input")
	if err != nil {
		return fail(err)
	}
	graphs.Lock()
	defer graphs.Unlock()
	if graphs.capture != nil {
		return fail(invalid("wt_trace_begin: a capture is already in progress (wt_trace_end or wt_trace_abort it)"))
	}
	c, err := ir.Begin(ins...)
	if err != nil {
		return fail(err)
	}
	graphs.capture = c
	return statusOK
}

//export wt_trace_abort
func wt_trace_abort() (status C.int32_t) {
	defer guard(&status)
	graphs.Lock()
	defer graphs.Unlock()
	if graphs.capture != nil {
		graphs.capture.Abort()
		graphs.capture = nil
	}
	return statusOK
}

//export wt_trace_end
func wt_trace_end(outputs *C.wt_tensor, n C.int32_t, out *C.wt_graph) (status C.int32_t) {
	defer guard(&status)
	graphs.Lock()
	c := graphs.capture
	graphs.capture = nil
	graphs.Unlock()
	if c == nil {
		return fail(invalid("wt_trace_end: no capture in progress (call wt_trace_begin first)"))
	}
	outs, err := handleList(outputs, n, "wt_trace_end: output")
	if err != nil {
		c.Abort()
		return fail(err)
	}
	if out == nil {
		c.Abort()
		return fail(invalid("wt_trace_end: out is NULL"))
	}
	g, err := c.End(outs...)
	if err != nil {
		return fail(err)
	}
	if _, _, _, err := g.Optimize(); err != nil {
		return fail(err)
	}
	if len(outs) > 0 {
		if _, err := g.Fuse(outs[0].Device()); err != nil {
			return fail(err)
		}
	}
	graphs.Lock()
	h := graphs.next
	graphs.next++
	graphs.m[h] = g
	graphs.Unlock()
	*out = C.wt_graph(h)
	return statusOK
}

func graphOf(h C.wt_graph) (*ir.Graph, error) {
	graphs.Lock()
	defer graphs.Unlock()
	g, ok := graphs.m[int64(h)]
	if !ok {
		return nil, errf(statusHandle, "unknown or freed graph handle %d", int64(h))
	}
	return g, nil
}

//export wt_graph_run
func wt_graph_run(h C.wt_graph, inputs *C.wt_tensor, n C.int32_t, outputs *C.wt_tensor, outCap C.int32_t, nOut *C.int32_t) (status C.int32_t) {
	defer guard(&status)
	g, err := graphOf(h)
	if err != nil {
		return fail(err)
	}
	if nOut == nil || (outputs == nil && outCap > 0) || outCap < 0 {
		return fail(invalid("wt_graph_run: n_outputs is NULL, or outputs is NULL with out_cap %d", int(outCap)))
	}
	ins, err := handleList(inputs, n, "wt_graph_run: input")
	if err != nil {
		return fail(err)
	}
	var res []*core.Tensor
	underThreadGrad(func() { res, err = g.Run(ins...) })
	if err != nil {
		return fail(err)
	}
	*nOut = C.int32_t(len(res))
	if int(outCap) < len(res) {
		return fail(errf(statusBuffer, "wt_graph_run: the graph returns %d outputs, out_cap is %d", len(res), int(outCap)))
	}
	dst := unsafe.Slice((*C.wt_tensor)(outputs), len(res))
	for i, t := range res {
		dst[i] = C.wt_tensor(newHandle(t, false))
	}
	return statusOK
}

//export wt_graph_free
func wt_graph_free(h C.wt_graph) (status C.int32_t) {
	defer guard(&status)
	graphs.Lock()
	defer graphs.Unlock()
	if _, ok := graphs.m[int64(h)]; !ok {
		return fail(errf(statusHandle, "unknown or freed graph handle %d", int64(h)))
	}
	delete(graphs.m, int64(h))
	return statusOK
}

//export wt_graph_text
func wt_graph_text(h C.wt_graph, buf *C.char, capacity C.size_t, needed *C.size_t) (status C.int32_t) {
	defer guard(&status)
	g, err := graphOf(h)
	if err != nil {
		return fail(err)
	}
	return writeString(g.String(), buf, capacity, needed)
}
