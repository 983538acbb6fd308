package abi

import (
	"errors"
	"fmt"
	"runtime/debug"
	"strings"

	"github.com/webtensor/webtensor/core"
)

// Version is WT_ABI_VERSION, the version of the function set.
const Version = 1

// Status is a call's outcome: the WT_OK and WT_ERR_* codes of webtensor.h
// (a test reads the header and holds them equal).
type Status int32

const (
	StatusOK             Status = 0
	StatusInvalid        Status = 1 // an argument is wrong
	StatusHandle         Status = 2 // unknown or freed handle
	StatusUnsupported    Status = 3 // a valid request the library cannot serve
	StatusOutOfMemory    Status = 4
	StatusBufferTooSmall Status = 5
	StatusInternal       Status = 6 // a bug, reported instead of crashing
	StatusIO             Status = 7 // the file system refused (a missing folder, permissions, a full disk)
)

var statusNames = [...]string{"ok", "invalid argument", "unknown or freed tensor handle", "unsupported",
	"out of memory", "buffer too small", "internal error", "i/o error"}

// StatusString is wt_status_string: a short English name of a status.
func StatusString(s Status) string {
	if s < 0 || int(s) >= len(statusNames) {
		return "unknown status"
	}
	return statusNames[s]
}

// Error is an error with the status it reports.
type Error struct {
	Status Status
	Msg    string
}

func (e *Error) Error() string { return e.Msg }

// Errorf makes an error with the given status.
func Errorf(s Status, format string, args ...any) error {
	return &Error{Status: s, Msg: fmt.Sprintf(format, args...)}
}

// Invalidf makes a StatusInvalid error.
func Invalidf(format string, args ...any) error { return Errorf(StatusInvalid, format, args...) }

// Prefix adds context to an error's message and keeps its status.
func Prefix(err error, format string, args ...any) error {
	return &Error{Status: StatusOf(err), Msg: fmt.Sprintf(format, args...) + ": " + err.Error()}
}

// StatusOf maps an error to the status a call returns for it. Errors from
// core carry no status, so the allocator's and the device registry's are
// recognised by what they say; everything else is the caller's argument.
func StatusOf(err error) Status {
	var ae *Error
	switch {
	case err == nil:
		return StatusOK
	case errors.As(err, &ae):
		return ae.Status
	case strings.Contains(err.Error(), "cannot allocate"):
		return StatusOutOfMemory
	case errors.Is(err, core.ErrDeviceUnavailable) || strings.Contains(err.Error(), "no backend"):
		return StatusUnsupported
	}
	return StatusInvalid
}

// Recovered is the error a panic r becomes at the boundary: internal, with
// the panic value and the top of the stack, so a report can find it.
func Recovered(r any) error {
	stack := string(debug.Stack())
	if len(stack) > 600 {
		stack = stack[:600]
	}
	return Errorf(StatusInternal, "internal error (please report): %v\n%s", r, stack)
}

// CheckCount bounds a count a caller passes (a list's length, ndim), so a
// garbage count is an error rather than a huge read.
func CheckCount(what string, n int64, limit int) error {
	if n < 0 || n > int64(limit) {
		return Invalidf("%s %d out of range (0..%d)", what, n, limit)
	}
	return nil
}
