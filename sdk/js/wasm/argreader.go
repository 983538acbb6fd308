//go:build js && wasm

package main

// argReader reads one call's arguments in order and keeps the first
// error, so a bridge function lists what it takes and checks once. Reads
// after a failed one do nothing, so the error is the first bad argument's,
// as when each read was checked on its own.
type argReader struct {
	a   args
	err error
}

func (a args) reader() *argReader { return &argReader{a: a} }

// then ends a bridge function that read its arguments with r: the first
// bad argument's error, or else what the call f returns (nil for a call
// that returns nothing but its error).
func (r *argReader) then(f func() (any, error)) (any, error) {
	if r.err != nil {
		return nil, r.err
	}
	return f()
}

// take runs read unless an earlier read failed.
func take[T any](r *argReader, read func() (T, error)) T {
	var zero T
	if r.err != nil {
		return zero
	}
	v, err := read()
	r.err = err
	return v
}

func (r *argReader) int(i int, what string) int64 {
	return take(r, func() (int64, error) { return r.a.int(i, what) })
}

func (r *argReader) handle(i int) int64 {
	return take(r, func() (int64, error) { return r.a.handle(i) })
}

func (r *argReader) str(i int, what string) string {
	return take(r, func() (string, error) { return r.a.str(i, what) })
}

func (r *argReader) optStr(i int, what string) string {
	return take(r, func() (string, error) { return r.a.optStr(i, what) })
}

func (r *argReader) ints(i int, what string) []int64 {
	return take(r, func() ([]int64, error) { return r.a.ints(i, what) })
}

func (r *argReader) float(i int, what string) float64 {
	return take(r, func() (float64, error) { return r.a.float(i, what) })
}

func (r *argReader) uint64(i int, what string) uint64 {
	return take(r, func() (uint64, error) { return r.a.uint64(i, what) })
}
