package main

/*
#cgo CFLAGS: -I${SRCDIR}/include -DWT_NO_PROTOTYPES
#include "webtensor.h"
*/
import "C"

import (
	"github.com/webtensor/webtensor/abi"
)

// Graph capture (abi/graphs.go): wt_trace_begin, the ops of one call,
// wt_trace_end, then wt_graph_run replays.

//export wt_trace_begin
func wt_trace_begin(inputs *C.wt_tensor, n C.int32_t) (status C.int32_t) {
	defer guard(&status)
	ins, err := handles(inputs, n, "inputs", "n_inputs")
	if err != nil {
		return fail(abi.Prefix(err, "wt_trace_begin"))
	}
	return done(abi.TraceBegin(ins))
}

//export wt_trace_abort
func wt_trace_abort() (status C.int32_t) {
	defer guard(&status)
	abi.TraceAbort()
	return statusOK
}

//export wt_trace_end
func wt_trace_end(outputs *C.wt_tensor, n C.int32_t, out *C.wt_graph) (status C.int32_t) {
	defer guard(&status)
	outs, err := handles(outputs, n, "outputs", "n_outputs")
	if err == nil && out == nil {
		err = abi.Invalidf("out is NULL")
	}
	if err != nil { // the capture ends either way, as abi.TraceEnd's does
		abi.TraceAbort()
		return fail(abi.Prefix(err, "wt_trace_end"))
	}
	g, err := abi.TraceEnd(outs)
	if err != nil {
		return fail(err)
	}
	*out = C.wt_graph(g)
	return statusOK
}

//export wt_graph_run
func wt_graph_run(h C.wt_graph, inputs *C.wt_tensor, n C.int32_t, outputs *C.wt_tensor, outCap C.int32_t, nOut *C.int32_t) (status C.int32_t) {
	defer guard(&status)
	if nOut == nil || (outputs == nil && outCap > 0) || outCap < 0 {
		return invalid("wt_graph_run: n_outputs is NULL, or outputs is NULL with out_cap %d", int(outCap))
	}
	ins, err := handles(inputs, n, "inputs", "n_inputs")
	if err != nil {
		return fail(abi.Prefix(err, "wt_graph_run"))
	}
	res, err := abi.GraphRun(int64(h), ins, threadNoGrad())
	if err != nil {
		return fail(err)
	}
	return putHandles(res, outputs, outCap, nOut, "wt_graph_run: the graph")
}

//export wt_graph_free
func wt_graph_free(h C.wt_graph) (status C.int32_t) {
	defer guard(&status)
	return done(abi.GraphFree(int64(h)))
}

//export wt_graph_text
func wt_graph_text(h C.wt_graph, buf *C.char, capacity C.size_t, needed *C.size_t) (status C.int32_t) {
	defer guard(&status)
	s, err := abi.GraphText(int64(h))
	return writeResult(s, err, buf, capacity, needed)
}
