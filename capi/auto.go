package main

/*
#cgo CFLAGS: -I${SRCDIR}/include -DWT_NO_PROTOTYPES
#include "webtensor.h"
*/
import "C"

import "github.com/webtensor/webtensor/abi"

// The auto-agents (abi/auto.go): tuning a loader or a traced graph, the
// journal and rollbacks.

// reportRoom refuses, before any work, a buffer below the bound of what a
// call that cannot be repeated writes: a tune or a rollback done once
// cannot be redone to fill a larger buffer.
func reportRoom(fn string, buf *C.char, capacity C.size_t, needed *C.size_t, bound int) C.int32_t {
	if buf == nil && capacity > 0 {
		return invalid("%s: buf is NULL but cap is %d", fn, int(capacity))
	}
	if int(capacity) < bound {
		if needed != nil {
			*needed = C.size_t(bound)
		}
		return fail(abi.Errorf(abi.StatusBufferTooSmall, "%s: needs a buffer of at least %d bytes before it runs (its work cannot be redone to fill a larger one), got %d",
			fn, bound, int(capacity)))
	}
	return statusOK
}

//export wt_auto_tune_loader
func wt_auto_tune_loader(loader C.wt_loader, options *C.char, buf *C.char, capacity C.size_t, needed *C.size_t) (status C.int32_t) {
	defer guard(&status)
	if st := reportRoom("wt_auto_tune_loader", buf, capacity, needed, abi.AutoReportBytes); st != statusOK {
		return st
	}
	o, _ := goString(options)
	s, err := abi.AutoTuneLoader(int64(loader), o)
	return writeResult(s, err, buf, capacity, needed)
}

//export wt_auto_tune_graph
func wt_auto_tune_graph(graph C.wt_graph, inputs *C.wt_tensor, nInputs C.int32_t, options *C.char, buf *C.char, capacity C.size_t,
	needed *C.size_t) (status C.int32_t) {
	defer guard(&status)
	if st := reportRoom("wt_auto_tune_graph", buf, capacity, needed, abi.AutoReportBytes); st != statusOK {
		return st
	}
	hs, err := handles(inputs, nInputs, "inputs", "n_inputs")
	if err != nil {
		return fail(abi.Prefix(err, "wt_auto_tune_graph"))
	}
	o, _ := goString(options)
	s, err := abi.AutoTuneGraph(int64(graph), hs, o)
	return writeResult(s, err, buf, capacity, needed)
}

//export wt_auto_journal_json
func wt_auto_journal_json(options *C.char, buf *C.char, capacity C.size_t, needed *C.size_t) (status C.int32_t) {
	defer guard(&status)
	o, _ := goString(options)
	s, err := abi.AutoJournalJSON(o)
	return writeResult(s, err, buf, capacity, needed)
}

//export wt_auto_rollback
func wt_auto_rollback(options, id *C.char, buf *C.char, capacity C.size_t, needed *C.size_t) (status C.int32_t) {
	defer guard(&status)
	if st := reportRoom("wt_auto_rollback", buf, capacity, needed, abi.AutoRollbackIDBytes); st != statusOK {
		return st
	}
	d, ok := goString(id)
	if !ok || d == "" {
		return invalid("wt_auto_rollback: id is NULL or empty")
	}
	o, _ := goString(options)
	s, err := abi.AutoRollback(o, d)
	return writeResult(s, err, buf, capacity, needed)
}

//export wt_auto_parallel_plan
func wt_auto_parallel_plan(graph C.wt_graph, options *C.char, buf *C.char, capacity C.size_t, needed *C.size_t) (status C.int32_t) {
	defer guard(&status)
	o, _ := goString(options)
	s, err := abi.AutoParallelPlan(int64(graph), o)
	return writeResult(s, err, buf, capacity, needed)
}
