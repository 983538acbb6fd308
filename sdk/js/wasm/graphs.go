//go:build js && wasm

package main

import (
	"fmt"
	"syscall/js"

	"github.com/webtensor/webtensor/core"
	"github.com/webtensor/webtensor/core/ir"
)

// Graph capture for wt.trace / wt.compile (sdk/js/src/compile.ts), as the C
// ABI's wt_trace_* and wt_graph_* (capi/graphs.go).
var (
	capture   *ir.Capture
	graphTab  = map[int]*ir.Graph{}
	nextGraph = 1
)

func tensorList(v js.Value, what string) ([]*core.Tensor, error) {
	hs, err := intList(v, what, maxInputs)
	if err != nil {
		return nil, err
	}
	out := make([]*core.Tensor, len(hs))
	for i, h := range hs {
		if out[i], err = tensorOf(h); err != nil {
			return nil, &abiError{statusHandle, fmt.Sprintf("%s %d: %v", what, i, err)}
		}
	}
	return out, nil
}

func graphArg(args []js.Value) (*ir.Graph, int, error) {
	h, err := intArg(args, 0, "graph handle")
	if err != nil {
		return nil, 0, err
	}
	g, ok := graphTab[h]
	if !ok {
		return nil, h, &abiError{statusHandle, fmt.Sprintf("unknown or freed graph handle %d", h)}
	}
	return g, h, nil
}

func graphCalls() map[string]call {
	return map[string]call{
		"traceBegin": func(args []js.Value) (any, error) {
			if capture != nil {
				return nil, invalid("a capture is already in progress (end or abort it first)")
			}
			ins, err := tensorList(args[0], "trace input")
			if err != nil {
				return nil, err
			}
			c, err := ir.Begin(ins...)
			if err != nil {
				return nil, invalid("%v", err)
			}
			capture = c
			return nil, nil
		},
		"traceAbort": func([]js.Value) (any, error) {
			if capture != nil {
				capture.Abort()
				capture = nil
			}
			return nil, nil
		},
		"traceEnd": func(args []js.Value) (any, error) {
			c := capture
			capture = nil
			if c == nil {
				return nil, invalid("no capture in progress (call traceBegin first)")
			}
			outs, err := tensorList(args[0], "trace output")
			if err != nil {
				c.Abort()
				return nil, err
			}
			g, err := c.End(outs...)
			if err != nil {
				return nil, invalid("%v", err)
			}
			if _, _, _, err := g.Optimize(); err != nil {
				return nil, err
			}
			if len(outs) > 0 {
				if _, err := g.Fuse(outs[0].Device()); err != nil {
					return nil, err
				}
			}
			h := nextGraph
			nextGraph++
			graphTab[h] = g
			return h, nil
		},
		"graphRun": func(args []js.Value) (any, error) {
			g, _, err := graphArg(args)
			if err != nil {
				return nil, err
			}
			ins, err := tensorList(args[1], "graph input")
			if err != nil {
				return nil, err
			}
			res, err := g.Run(ins...)
			if err != nil {
				return nil, err
			}
			out := make([]any, len(res))
			for i, t := range res {
				if out[i], err = newHandle(t); err != nil {
					return nil, err
				}
			}
			return out, nil
		},
		"graphText": func(args []js.Value) (any, error) {
			g, _, err := graphArg(args)
			if err != nil {
				return nil, err
			}
			return g.String(), nil
		},
		"graphFree": func(args []js.Value) (any, error) {
			_, h, err := graphArg(args)
			if err != nil {
				return nil, err
			}
			delete(graphTab, h)
			return nil, nil
		},
	}
}
