//go:build js && wasm

package main

import (
	"fmt"

	"github.com/webtensor/webtensor/core"
)

// Handles are never reused, so a freed one stays an error forever; JavaScript
// runs the module on one thread, so the table needs no lock.
var (
	table      = map[int]*entry{}
	nextHandle = 1
)

type entry struct {
	t    *core.Tensor
	refs int
}

func newHandle(t *core.Tensor) (int, error) {
	if err := t.Err(); err != nil {
		return 0, err
	}
	h := nextHandle
	nextHandle++
	table[h] = &entry{t: t, refs: 1}
	return h, nil
}

func handleError(h int) error {
	if h > 0 && h < nextHandle {
		return &abiError{statusHandle, fmt.Sprintf("tensor handle %d was already freed", h)}
	}
	return &abiError{statusHandle, fmt.Sprintf("unknown tensor handle %d", h)}
}

func tensorOf(h int) (*core.Tensor, error) {
	e, ok := table[h]
	if !ok {
		return nil, handleError(h)
	}
	return e.t, nil
}

func retain(h int) error {
	e, ok := table[h]
	if !ok {
		return handleError(h)
	}
	e.refs++
	return nil
}

func release(h int) error {
	e, ok := table[h]
	if !ok {
		if h > 0 && h < nextHandle {
			return &abiError{statusHandle, fmt.Sprintf("tensor handle %d was already freed (double free)", h)}
		}
		return handleError(h)
	}
	if e.refs--; e.refs == 0 {
		delete(table, h)
	}
	return nil
}
