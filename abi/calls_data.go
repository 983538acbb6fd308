package abi

import "math"

// The datasets' and loaders' methods as wt_call targets (data.go): a
// record or a batch comes back as a list of new tensor handles, one per
// field (an empty list at the end of an epoch).

func init() { registerCalls(dataCalls) }

var dataCalls = map[string]method{
	// open reads files named by spec, or, with data, one file's bytes
	// (copied; spec's "name" labels them in errors).
	"dataset.open": {"dataset handle", func(c *CallArgs) func() (any, error) {
		spec := c.NeedJSON("spec", `object: "format" and its settings (see below)`)
		if data := c.OptBytes("one file's bytes (optional: without them, spec names the files)"); data != nil {
			return func() (any, error) { return datasetOpenBytes(spec, data) }
		}
		c.needFileSystem("spec's files", "pass one file's bytes as the call's data")
		return func() (any, error) { return datasetOpen(spec) }
	}},
	"dataset.from_tensors": {"dataset handle", func(c *CallArgs) func() (any, error) {
		ts := c.Tensors("tensors")
		var names []string
		if c.Has("names") {
			names = c.Strings("names")
		}
		return func() (any, error) { return datasetFromTensors(ts, names) }
	}},
	"dataset.free": {"null", freeCall(datasetFree)},
	"dataset.len":  {"integer: records", getCall(datasetLen)},
	"dataset.info": {`object: "len", "fields" (each "name", "dtype", "shape" of one record), "classes" for an image folder`, func(c *CallArgs) func() (any, error) {
		return func() (any, error) { return rawJSON(datasetInfoJSON(c.Self)) }
	}},
	"dataset.get": {"list of tensors: the record, one per field, on device", func(c *CallArgs) func() (any, error) {
		index, dev := c.NeedIntIn("index", math.MinInt64, math.MaxInt64), c.Str("device", "")
		return func() (any, error) {
			if index < 0 { // from the end, as a Python sequence counts
				n, err := datasetLen(c.Self)
				if err != nil {
					return nil, err
				}
				index += n
			}
			return outputHandles(datasetGet(c.Self, index, dev))
		}
	}},

	"loader.new": {"loader handle", func(c *CallArgs) func() (any, error) {
		ds, opts := c.Object("dataset", "dataset"), c.JSON("options", "object: batch_size, shuffle, seed, drop_last, workers, prefetch, cache, cache_bytes, device")
		return func() (any, error) { return loaderNew(ds, opts) }
	}},
	"loader.free": {"null", freeCall(loaderFree)},
	"loader.len":  {"integer: batches per epoch", getCall(loaderLen)},
	"loader.epoch": {"null", func(c *CallArgs) func() (any, error) {
		epoch := c.NeedIntIn("epoch", 0, math.MaxInt64)
		return func() (any, error) { return nil, loaderEpoch(c.Self, epoch) }
	}},
	"loader.next": {"list of tensors: the batch, one per field; empty at the end of the epoch", func(c *CallArgs) func() (any, error) {
		return func() (any, error) { return outputHandles(loaderNext(c.Self, math.MaxInt32)) }
	}},

	"data.permutation": {"list of n integers: the epoch's record order", func(c *CallArgs) func() (any, error) {
		n, epoch, seed := c.NeedIntIn("n", 0, math.MaxInt32), c.IntIn("epoch", 0, 0, math.MaxInt32), seedArg(c)
		return func() (any, error) { return dataPermutation(n, seed, epoch) }
	}},
}

// outputHandles registers a call's output tensors: a list of new handles
// (empty, not null, for none).
func outputHandles(o Outputs, err error) (any, error) {
	if err != nil {
		return nil, err
	}
	hs := make([]int64, o.Len())
	o.Handles(hs)
	return hs, nil
}
