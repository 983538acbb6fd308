package core

import (
	"errors"
	"fmt"
	"runtime/debug"

	"github.com/webtensor/webtensor/core/config"
)

// OpError is an error raised while calling an op: it names the op.
type OpError struct {
	Op  string
	Err error
}

func (e *OpError) Error() string { return e.Op + ": " + e.Err.Error() }
func (e *OpError) Unwrap() error { return e.Err }

func opErr(op string, format string, args ...any) error {
	return &OpError{Op: op, Err: fmt.Errorf(format, args...)}
}

// wrapOp attaches the op name unless the error already carries one.
func wrapOp(op string, err error) error {
	if err == nil {
		return nil
	}
	var oe *OpError
	if errors.As(err, &oe) {
		return err
	}
	return &OpError{Op: op, Err: err}
}

// ErrReleased is returned when a released tensor is used.
var ErrReleased = errors.New("tensor was released")

// errTensor returns a tensor that carries err.
func errTensor(err error) *Tensor { return &Tensor{err: err} }

// catch turns a panic inside a kernel or rule into an error, so that nothing
// panics through the public API even when a kernel has a bug.
// WEBTENSOR_DEBUG_PANIC=1 also prints the stack, to find the bug.
func catch(op string, err *error) {
	if r := recover(); r != nil {
		*err = opErr(op, "internal error: %v", r)
		if config.Bool("WEBTENSOR_DEBUG_PANIC") {
			debug.PrintStack()
		}
	}
}

// ErrTensor returns a tensor that carries err, so that functions built on
// ops (modules, SDK glue) can report their own validation errors the same
// sticky way ops do.
func ErrTensor(err error) *Tensor { return errTensor(err) }
