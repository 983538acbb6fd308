package abi

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"strconv"
	"strings"
	"sync"

	"github.com/webtensor/webtensor/data"
)

// Datasets and loaders (the dataset.* and loader.* targets): package data behind
// handles, so every SDK's readers, shuffling, workers and collation are
// the same Go code. A loader keeps its dataset alive: freeing the dataset
// handle first is allowed.

var (
	datasets = newObjects[data.Dataset]("dataset")
	loaders  = newObjects[*loaderState]("data loader")
)

// loaderState is a loader and the epoch it is running, one at a time.
type loaderState struct {
	mu sync.Mutex
	l  *data.Loader
	it *data.Iter
}

// decodeJSON reads what into v, refusing unknown keys so a misspelt
// option is an error rather than a silent default.
func decodeJSON(fn, what, text string, v any) error {
	if text == "" {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader([]byte(text)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return Invalidf("%s: %s %q: %v", fn, what, clipJSON(text), err)
	}
	return nil
}

func clipJSON(s string) string {
	if len(s) > 200 {
		return s[:200] + "..."
	}
	return s
}

// datasetResult registers a dataset or maps its error: the file system's
// refusals are WT_ERR_IO, a file's contents WT_ERR_INVALID.
func datasetResult(ds data.Dataset, err error) (int64, error) {
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			return 0, Errorf(StatusIO, "dataset.open: %v", err)
		}
		return 0, Invalidf("dataset.open: %v", err)
	}
	return datasets.add(ds), nil
}

// datasetOpen is dataset.open: a built-in reader over files, described
// by spec (data.Spec as JSON).
func datasetOpen(spec string) (int64, error) {
	var s data.Spec
	if err := decodeJSON("dataset.open", "spec", spec, &s); err != nil {
		return 0, err
	}
	return datasetResult(data.Open(s))
}

// datasetOpenBytes is dataset.open: a built-in reader over one
// file's bytes, which are copied.
func datasetOpenBytes(spec string, raw []byte) (int64, error) {
	var s data.Spec
	if err := decodeJSON("dataset.open", "spec", spec, &s); err != nil {
		return 0, err
	}
	return datasetResult(data.OpenBytes(s, bytes.Clone(raw)))
}

// datasetFromTensors is dataset.from_tensors: PyTorch's TensorDataset
// over the tensors behind handles (copied to host memory), fields named
// by names (none: "0", "1", ...).
func datasetFromTensors(handles []int64, names []string) (int64, error) {
	ts, err := tensorList(handles, "dataset.from_tensors: tensors")
	if err != nil {
		return 0, err
	}
	ds, err := data.FromTensors(ts, names...)
	if err != nil {
		return 0, Invalidf("dataset.from_tensors: %v", err)
	}
	return datasets.add(ds), nil
}

// datasetFree is dataset.free.
func datasetFree(h int64) error { return datasets.free(h) }

// datasetLen is dataset.len.
func datasetLen(h int64) (int64, error) {
	ds, err := datasets.get(h)
	if err != nil {
		return 0, err
	}
	return int64(ds.Len()), nil
}

type fieldJSON struct {
	Name  string `json:"name"`
	DType string `json:"dtype"`
	Shape []int  `json:"shape"`
}

// datasetInfoJSON is dataset.info: the length, the fields and,
// for an image folder, the class names.
func datasetInfoJSON(h int64) (string, error) {
	ds, err := datasets.get(h)
	if err != nil {
		return "", err
	}
	fields := make([]fieldJSON, 0, len(ds.Fields()))
	for _, f := range ds.Fields() {
		fields = append(fields, fieldJSON{f.Name, f.DType.String(), append([]int{}, f.Shape...)})
	}
	info := map[string]any{"len": ds.Len(), "fields": fields}
	if c, ok := ds.(interface{ Classes() []string }); ok {
		info["classes"] = c.Classes()
	}
	b, err := json.Marshal(info)
	return string(b), err
}

// datasetGet is dataset.get: record index, one tensor per field, on
// device ("": the default).
func datasetGet(h, index int64, device string) (Outputs, error) {
	ds, err := datasets.get(h)
	if err != nil {
		return Outputs{}, err
	}
	dev, err := parseDevice(device)
	if err != nil {
		return Outputs{}, err
	}
	ts, err := data.Get(ds, int(index), dev...)
	if err != nil {
		return Outputs{}, Invalidf("dataset.get: %v", err)
	}
	return Outputs{ts: ts}, nil
}

// loaderOptions is data.Options as the ABI spells it: the device by name.
type loaderOptions struct {
	data.Options
	Device string `json:"device,omitempty"`
	// Seed shadows Options.Seed: a uint64 past 2^53 does not survive
	// JavaScript's numbers, so its decimal string is taken too, as every
	// other seed of the calls is (seedArg).
	Seed *seedValue `json:"seed,omitempty"`
}

// seedValue is a uint64 in JSON as a number or its decimal string.
type seedValue uint64

func (s *seedValue) UnmarshalJSON(b []byte) error {
	v, err := strconv.ParseUint(strings.Trim(string(b), `"`), 10, 64)
	if err != nil {
		return fmt.Errorf("seed must be an integer in [0, 2^64) or its decimal string, got %.40s", b)
	}
	*s = seedValue(v)
	return nil
}

// loaderNew is loader.new: a loader over a dataset handle with options
// (JSON: batch_size, shuffle, seed, drop_last, workers, prefetch, device).
func loaderNew(ds int64, options string) (int64, error) {
	d, err := datasets.get(ds)
	if err != nil {
		return 0, err
	}
	var o loaderOptions
	if err := decodeJSON("loader.new", "options", options, &o); err != nil {
		return 0, err
	}
	dev, err := parseDevice(o.Device)
	if err != nil {
		return 0, err
	}
	if len(dev) > 0 {
		o.Options.Device = dev[0]
	}
	if o.Seed != nil {
		o.Options.Seed = uint64(*o.Seed)
	}
	l, err := data.NewLoader(d, o.Options)
	if err != nil {
		return 0, Invalidf("loader.new: %v", err)
	}
	return loaders.add(&loaderState{l: l}), nil
}

// loaderFree is loader.free: it stops the running epoch's workers and
// frees the records its cache holds (an auto-agent that tuned the loader
// keeps the loader itself, for its settings, until a loader of the same
// name takes its place).
func loaderFree(h int64) error {
	s, err := loaders.get(h)
	if err != nil {
		return err
	}
	if err := loaders.free(h); err != nil {
		return err
	}
	s.l.DropCache()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.it != nil {
		s.it.Close()
	}
	return nil
}

// loaderLen is loader.len: batches per epoch.
func loaderLen(h int64) (int64, error) {
	s, err := loaders.get(h)
	if err != nil {
		return 0, err
	}
	return int64(s.l.Len()), nil
}

// loaderEpoch is loader.epoch: it starts epoch (its shuffle order and
// workers), ending the one running.
func loaderEpoch(h, epoch int64) error {
	s, err := loaders.get(h)
	if err != nil {
		return err
	}
	if epoch < 0 {
		return Invalidf("loader.epoch: epoch %d is negative", epoch)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.it != nil {
		s.it.Close()
	}
	s.it = s.l.Epoch(int(epoch))
	return nil
}

// loaderNext is loader.next: the running epoch's next batch, no
// tensors at its end. outCap is checked first so that a caller's short
// buffer does not lose a batch.
func loaderNext(h int64, outCap int) (Outputs, error) {
	s, err := loaders.get(h)
	if err != nil {
		return Outputs{}, err
	}
	if n := len(s.l.Dataset().Fields()); outCap < n {
		return Outputs{}, Errorf(StatusBufferTooSmall, "loader.next: a batch has %d tensors, out_cap is %d", n, outCap)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.it == nil {
		return Outputs{}, Invalidf("loader.next: no epoch is running (call loader.epoch first)")
	}
	b, err := s.it.Next()
	if err != nil {
		return Outputs{}, Invalidf("%v", err)
	}
	return Outputs{ts: b}, nil
}

// dataPermutation is data.permutation: the record order of a shuffled
// epoch (data.Permutation), for SDK-side datasets to shuffle as the
// library's loader does.
func dataPermutation(n int64, seed uint64, epoch int64) ([]int64, error) {
	if n < 0 || epoch < 0 {
		return nil, Invalidf("data.permutation: n %d and epoch %d must not be negative", n, epoch)
	}
	p := data.Permutation(int(n), seed, int(epoch))
	out := make([]int64, n)
	for i, v := range p {
		out[i] = int64(v)
	}
	return out, nil
}
