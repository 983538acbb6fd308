package abi

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"io/fs"
	"maps"
	"os"
	"slices"
	"sync"

	"github.com/webtensor/webtensor/core"
	"github.com/webtensor/webtensor/core/safetensors"
	"github.com/webtensor/webtensor/nn"
)

// State dicts (wt_state_*): named tensors in order, with string metadata -
// what a checkpoint holds. An SDK builds one from a module's parameters and
// buffers (its own traversal: that is its language's idiom) and saves it,
// or loads a file into one and reads it back; checkpoints are written and
// validated here, once, in the format every SDK and torch's safetensors
// read. A state made by wt_state_put remembers the handles it was given,
// so StateAssign can load values into a module's tensors behind them.

var stateDicts = newObjects[*stateDict]("state dict")

type stateDict struct {
	mu       sync.Mutex
	names    []string
	tensors  []*core.Tensor
	handles  []int64 // the handle each tensor was put from (0: read from a file)
	readOnly []bool
	index    map[string]int
	meta     map[string]string
}

// add appends an entry made here (from a file, an optimiser).
func (s *stateDict) add(name string, t *core.Tensor, readOnly bool) {
	s.put(name, t, 0, readOnly)
}

func (s *stateDict) put(name string, t *core.Tensor, h int64, readOnly bool) {
	if s.index == nil {
		s.index = map[string]int{}
	}
	s.index[name] = len(s.names)
	s.names = append(s.names, name)
	s.tensors = append(s.tensors, t)
	s.handles = append(s.handles, h)
	s.readOnly = append(s.readOnly, readOnly)
}

// snapshot is the entries at one moment, for reading without the lock.
func (s *stateDict) snapshot() ([]string, []*core.Tensor, []int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.names), slices.Clone(s.tensors), slices.Clone(s.handles)
}

// StateNew is wt_state_new: an empty state dict.
func StateNew() int64 { return stateDicts.add(&stateDict{}) }

// StateFree is wt_state_free; the tensors stay where else they are held.
func StateFree(h int64) error { return stateDicts.free(h) }

// StatePut is wt_state_put: appends t under name. The state holds the
// tensor itself (freeing the handle later does not empty the entry) and
// remembers the handle for StateAssign.
func StatePut(h int64, name string, th int64) error {
	s, err := stateDicts.get(h)
	if err != nil {
		return err
	}
	t, readOnly, err := Lookup(th)
	if err != nil {
		return Prefix(err, "wt_state_put: %q", name)
	}
	if name == "" || name == "__metadata__" {
		return Invalidf("wt_state_put: invalid tensor name %q", name)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, dup := s.index[name]; dup {
		return Invalidf("wt_state_put: %q is given twice", name)
	}
	s.put(name, t, th, readOnly)
	return nil
}

// StateCount is wt_state_count.
func StateCount(h int64) (int, error) {
	s, err := stateDicts.get(h)
	if err != nil {
		return 0, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.names), nil
}

// entry finds entry i under the lock.
func (s *stateDict) entry(i int) (string, *core.Tensor, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if i < 0 || i >= len(s.names) {
		return "", nil, false, Invalidf("state dict entry %d out of range (0..%d)", i, len(s.names)-1)
	}
	return s.names[i], s.tensors[i], s.readOnly[i], nil
}

// StateName is wt_state_name: entry i's name.
func StateName(h int64, i int) (string, error) {
	s, err := stateDicts.get(h)
	if err != nil {
		return "", err
	}
	name, _, _, err := s.entry(i)
	return name, err
}

// StateGet is wt_state_get: entry i's tensor under a new handle.
func StateGet(h int64, i int) (int64, error) {
	s, err := stateDicts.get(h)
	if err != nil {
		return 0, err
	}
	_, t, readOnly, err := s.entry(i)
	if err != nil {
		return 0, err
	}
	return NewHandle(t, readOnly), nil
}

// StateSetMetadata is wt_state_set_metadata: key's value in the file's
// __metadata__ (set again, it changes).
func StateSetMetadata(h int64, key, value string) error {
	s, err := stateDicts.get(h)
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.meta == nil {
		s.meta = map[string]string{}
	}
	s.meta[key] = value
	return nil
}

// StateMetadata is the metadata as key-sorted pairs: what
// wt_state_metadata_count, _key and _value index.
func StateMetadata(h int64) ([][2]string, error) {
	s, err := stateDicts.get(h)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([][2]string, 0, len(s.meta))
	for _, k := range slices.Sorted(maps.Keys(s.meta)) {
		out = append(out, [2]string{k, s.meta[k]})
	}
	return out, nil
}

// MetadataEntry is metadata pair i, or an error naming the range.
func MetadataEntry(pairs [][2]string, i int) ([2]string, error) {
	if i < 0 || i >= len(pairs) {
		return [2]string{}, Invalidf("metadata entry %d out of range (0..%d)", i, len(pairs)-1)
	}
	return pairs[i], nil
}

// encoding is a state's tensors as safetensors will write them (sorted by
// name, each's bytes read when the file is written) and its metadata.
func (s *stateDict) encoding() (map[string]core.Shape, map[string]*core.Tensor, map[string]string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	shapes := make(map[string]core.Shape, len(s.names))
	ts := make(map[string]*core.Tensor, len(s.names))
	for i, n := range s.names {
		shapes[n], ts[n] = s.tensors[i].Shape(), s.tensors[i]
	}
	return shapes, ts, maps.Clone(s.meta)
}

// values reads every tensor's bytes (waiting for the devices).
func values(ts map[string]*core.Tensor) (map[string]safetensors.Tensor, error) {
	out := make(map[string]safetensors.Tensor, len(ts))
	for name, t := range ts {
		v, err := safetensors.FromTensor(t)
		if err != nil {
			return nil, Prefix(err, "%s", name)
		}
		out[name] = v
	}
	return out, nil
}

// StateEncodedSize is the byte count StateEncode will return, known
// without reading any tensor: what a caller sizes its buffer by.
func StateEncodedSize(h int64) (int, error) {
	s, err := stateDicts.get(h)
	if err != nil {
		return 0, err
	}
	_, ts, meta := s.encoding()
	infos := make(map[string]safetensors.Tensor, len(ts))
	data := 0
	for name, t := range ts {
		infos[name] = safetensors.Tensor{DType: t.DType(), Shape: t.Shape()}
		data += t.Numel() * t.DType().Size()
	}
	head, _, err := safetensors.EncodeHeader(infos, meta)
	if err != nil {
		return 0, Invalidf("%v", err)
	}
	return len(head) + data, nil
}

// StateEncode is wt_state_to_bytes: the safetensors file's bytes.
func StateEncode(h int64) ([]byte, error) {
	s, err := stateDicts.get(h)
	if err != nil {
		return nil, err
	}
	_, ts, meta := s.encoding()
	vals, err := values(ts)
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	if err := safetensors.Encode(&buf, vals, meta); err != nil {
		return nil, Invalidf("%v", err)
	}
	return buf.Bytes(), nil
}

// StateSave is wt_state_save: the file is written beside path, synced and
// renamed over it, so a failed save never leaves a broken file where a good
// one was; the temporaries of earlier saves to path whose writer died are
// removed first (core/safetensors WriteFile).
func StateSave(h int64, path string) error {
	s, err := stateDicts.get(h)
	if err != nil {
		return err
	}
	if path == "" {
		return Invalidf("wt_state_save: path is NULL or empty")
	}
	_, ts, meta := s.encoding()
	vals, err := values(ts)
	if err != nil {
		return err
	}
	if err := safetensors.WriteFile(path, vals, meta); err != nil {
		return ioError(err)
	}
	return nil
}

// ioError gives the file system's errors StatusIO, so an SDK can raise its
// language's I/O error; a malformed state stays StatusInvalid.
func ioError(err error) error {
	var pe *fs.PathError
	var le *os.LinkError
	if errors.As(err, &pe) || errors.As(err, &le) || errors.Is(err, io.ErrUnexpectedEOF) {
		return Errorf(StatusIO, "%v", err)
	}
	return Invalidf("%v", err)
}

// StateLoad is wt_state_load: a safetensors file, checked by the one
// validator, as a state dict in file order on device ("": the default).
// metadataOnly reads only the header: the entries stay empty.
func StateLoad(path, device string, metadataOnly bool) (int64, error) {
	if path == "" {
		return 0, Invalidf("wt_state_load: path is NULL or empty")
	}
	dev, err := parseDevice(device)
	if err != nil {
		return 0, err
	}
	if metadataOnly {
		prefix, size, err := readHeader(path)
		if err != nil {
			return 0, err
		}
		hd, err := safetensors.ParseHeader(prefix, size)
		if err != nil {
			return 0, Invalidf("%s: %v", path, err)
		}
		return stateDicts.add(&stateDict{meta: hd.Metadata}), nil
	}
	buf, err := os.ReadFile(path)
	if err != nil {
		return 0, ioError(err)
	}
	return decodeState(buf, dev, path)
}

// readHeader reads a file's 8-byte header length and at most that many
// bytes more (the validator refuses a header past its limit anyway).
func readHeader(path string) ([]byte, int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, 0, ioError(err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, 0, ioError(err)
	}
	head := make([]byte, 8)
	n, _ := io.ReadFull(f, head)
	head = head[:n]
	if n == 8 {
		if hl := binary.LittleEndian.Uint64(head); hl <= uint64(min(st.Size()-8, 100<<20)) {
			rest := make([]byte, hl)
			m, _ := io.ReadFull(f, rest)
			head = append(head, rest[:m]...)
		}
	}
	return head, st.Size(), nil
}

// StateDecode is wt_state_from_bytes: StateLoad from a file's bytes; name
// labels them in errors.
func StateDecode(buf []byte, device, name string) (int64, error) {
	dev, err := parseDevice(device)
	if err != nil {
		return 0, err
	}
	return decodeState(buf, dev, name)
}

func decodeState(buf []byte, dev []core.Device, name string) (int64, error) {
	f, err := safetensors.Decode(buf)
	if err != nil {
		if name != "" {
			return 0, Invalidf("%s: %v", name, err)
		}
		return 0, Invalidf("%v", err)
	}
	s := &stateDict{meta: f.Metadata}
	for _, n := range f.Names {
		t := f.Tensors[n].ToTensor(dev...)
		if err := t.Err(); err != nil {
			return 0, Prefix(err, "%s", n)
		}
		s.add(n, t, false)
	}
	return stateDicts.add(s), nil
}

// StateAssign is wt_state_assign: the values of src go into the tensors
// behind the handles put into dst (a module's parameters and buffers), on
// their devices, all or none. Every name, shape and dtype must match (with
// strict; without, names on one side only are skipped), else one error
// lists every problem, naming the module as module says ("Sequential").
// A tensor that required a gradient stays a leaf that does and keeps its
// gradient, as torch's load_state_dict keeps p.grad.
func StateAssign(dst, src int64, strict bool, module string) error {
	d, err := stateDicts.get(dst)
	if err != nil {
		return err
	}
	s, err := stateDicts.get(src)
	if err != nil {
		return err
	}
	names, _, handles := d.snapshot()
	srcNames, srcTensors, _ := s.snapshot()
	mine := make([]nn.NamedTensor, len(names))
	olds := make([]*core.Tensor, len(names))
	for i, h := range handles {
		if h == 0 {
			return Invalidf("wt_state_assign: %q of the target was not put from a handle", names[i])
		}
		if olds[i], err = TensorOf(h); err != nil {
			return Prefix(err, "wt_state_assign: %q", names[i])
		}
		mine[i] = nn.NamedTensor{Name: names[i], Tensor: olds[i]}
	}
	given := make([]nn.StateEntry, len(srcNames))
	byName := make(map[string]int, len(srcNames))
	for i, t := range srcTensors {
		given[i] = nn.StateEntry{Name: srcNames[i], Shape: t.Shape(), DType: t.DType()}
		byName[srcNames[i]] = i
	}
	if module == "" {
		module = "module"
	}
	if err := nn.MatchStateDict(mine, given, module, "state dict", strict); err != nil {
		return Invalidf("%v", err)
	}
	var hs []int64
	var from, to []*core.Tensor
	var readOnly []bool
	for i, old := range olds {
		k, ok := byName[names[i]]
		if !ok {
			continue
		}
		v, shared := assignedValue(old, srcTensors[k])
		if err := v.Err(); err != nil {
			return Prefix(err, "%s", names[i])
		}
		_, _, ro, _ := s.entry(k)
		hs, from, to, readOnly = append(hs, handles[i]), append(from, old), append(to, v), append(readOnly, ro && shared)
	}
	replaceTensors(hs, from, to, readOnly)
	return nil
}

// assignedValue is what a target old holds after a load of v: v on old's
// device, a leaf that requires a gradient (keeping old's) when old did;
// shared says it still shares v's memory.
func assignedValue(old, v *core.Tensor) (*core.Tensor, bool) {
	var out *core.Tensor
	core.NoGrad(func() { out = v.Detach().To(old.Device()) })
	shared := out.Storage() == v.Storage()
	if old.RequiresGrad() {
		out = out.Detach().SetRequiresGrad(true)
		out.SetGrad(old.Grad())
	}
	return out, shared
}
