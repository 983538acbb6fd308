package abi

import (
	"sync"

	"github.com/webtensor/webtensor/core"
	"github.com/webtensor/webtensor/core/ir"
)

// Graph capture (core/ir): an SDK brackets a function call with TraceBegin
// and TraceEnd and gets a graph handle that GraphRun replays - after the
// passes and, on a device that can, with elementwise chains fused into
// single kernels. Graph handles, like tensor handles, are never reused.

var graphs = struct {
	sync.Mutex
	next    int64
	m       map[int64]*ir.Graph
	capture *ir.Capture
}{next: 1, m: map[int64]*ir.Graph{}}

// TraceBegin is wt_trace_begin.
func TraceBegin(inputHandles []int64) error {
	ins, err := tensorList(inputHandles, "wt_trace_begin: input")
	if err != nil {
		return err
	}
	graphs.Lock()
	defer graphs.Unlock()
	if graphs.capture != nil {
		return Invalidf("wt_trace_begin: a capture is already in progress (wt_trace_end or wt_trace_abort it)")
	}
	c, err := ir.Begin(ins...)
	if err != nil {
		return err
	}
	graphs.capture = c
	return nil
}

// TraceAbort is wt_trace_abort: it drops the capture in progress, if any.
func TraceAbort() {
	graphs.Lock()
	defer graphs.Unlock()
	if graphs.capture != nil {
		graphs.capture.Abort()
		graphs.capture = nil
	}
}

// TraceEnd is wt_trace_end: the capture ends, whatever happens, and the
// optimised graph's handle is returned.
func TraceEnd(outputHandles []int64) (int64, error) {
	graphs.Lock()
	c := graphs.capture
	graphs.capture = nil
	graphs.Unlock()
	if c == nil {
		return 0, Invalidf("wt_trace_end: no capture in progress (call wt_trace_begin first)")
	}
	outs, err := tensorList(outputHandles, "wt_trace_end: output")
	if err != nil {
		c.Abort()
		return 0, err
	}
	g, err := c.End(outs...)
	if err != nil {
		return 0, err
	}
	if _, _, _, err := g.Optimize(); err != nil {
		return 0, err
	}
	if len(outs) > 0 {
		if _, err := g.Fuse(outs[0].Device()); err != nil {
			return 0, err
		}
	}
	graphs.Lock()
	defer graphs.Unlock()
	h := graphs.next
	graphs.next++
	graphs.m[h] = g
	return h, nil
}

func graphOf(h int64) (*ir.Graph, error) {
	graphs.Lock()
	defer graphs.Unlock()
	g, ok := graphs.m[h]
	if !ok {
		return nil, Errorf(StatusHandle, "unknown or freed graph handle %d", h)
	}
	return g, nil
}

// GraphRun is wt_graph_run.
func GraphRun(h int64, inputHandles []int64, noGrad bool) (Outputs, error) {
	g, err := graphOf(h)
	if err != nil {
		return Outputs{}, err
	}
	ins, err := tensorList(inputHandles, "wt_graph_run: input")
	if err != nil {
		return Outputs{}, err
	}
	var res []*core.Tensor
	underGrad(noGrad, func() { res, err = g.Run(ins...) })
	if err != nil {
		return Outputs{}, err
	}
	return Outputs{ts: res}, nil
}

// GraphText is wt_graph_text: one op per line.
func GraphText(h int64) (string, error) {
	g, err := graphOf(h)
	if err != nil {
		return "", err
	}
	return g.String(), nil
}

// GraphFree is wt_graph_free.
func GraphFree(h int64) error {
	graphs.Lock()
	defer graphs.Unlock()
	if _, ok := graphs.m[h]; !ok {
		return Errorf(StatusHandle, "unknown or freed graph handle %d", h)
	}
	delete(graphs.m, h)
	return nil
}
