package diffuse

import (
	"encoding/binary"
	"fmt"
	"io"
	"os"

	"github.com/webtensor/webtensor/core"
	"github.com/webtensor/webtensor/core/safetensors"
	"github.com/webtensor/webtensor/nn"
)

// Weight streaming: a model whose weights stay in the memory-mapped
// checkpoint and are copied in block by block, just before the block
// runs, and dropped after it. A forward then holds the largest block's
// weights rather than the model's (plus the activations), for machines
// or browsers where the whole model does not fit beside them; the price
// is reading (and, on a GPU, uploading) every weight at every call.

// mappedCheckpoint is a safetensors file opened for reading tensors one
// at a time: mapped where the platform maps files, else read with ReadAt.
type mappedCheckpoint struct {
	path   string
	f      *os.File
	data   []byte // the mapping; nil when reading with ReadAt
	unmap  func() error
	header *safetensors.Header
}

func openCheckpoint(path string) (*mappedCheckpoint, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	c := &mappedCheckpoint{path: path, f: f}
	if err := c.open(); err != nil {
		f.Close()
		return nil, err
	}
	return c, nil
}

func (c *mappedCheckpoint) open() error {
	st, err := c.f.Stat()
	if err != nil {
		return err
	}
	size := st.Size()
	prefix := make([]byte, min(size, 8))
	if _, err := c.f.ReadAt(prefix, 0); err != nil {
		return fmt.Errorf("%s: %w", c.path, err)
	}
	// Read the header only when the length fits the file; otherwise
	// ParseHeader names the problem from the 8 bytes alone.
	if len(prefix) == 8 {
		if hl := binary.LittleEndian.Uint64(prefix); hl <= uint64(size-8) && hl <= 100<<20 {
			prefix = make([]byte, 8+hl)
			if _, err := c.f.ReadAt(prefix, 0); err != nil && err != io.EOF {
				return fmt.Errorf("%s: %w", c.path, err)
			}
		}
	}
	if c.header, err = safetensors.ParseHeader(prefix, size); err != nil {
		return fmt.Errorf("%s: %w", c.path, err)
	}
	// A file system that cannot map (or a platform without mmap) still
	// streams, by reads.
	if data, unmap, err := mapFile(c.f, size); err == nil {
		c.data, c.unmap = data, unmap
	}
	return nil
}

// tensor is entry e's bytes: a view of the mapping, or a fresh read.
func (c *mappedCheckpoint) tensor(e safetensors.Entry) (safetensors.Tensor, error) {
	begin, end := c.header.DataStart+e.Begin, c.header.DataStart+e.End
	if c.data != nil {
		return safetensors.Tensor{DType: e.DType, Shape: e.Shape, Data: c.data[begin:end:end]}, nil
	}
	buf := make([]byte, end-begin)
	if _, err := c.f.ReadAt(buf, begin); err != nil {
		return safetensors.Tensor{}, fmt.Errorf("%s: tensor %s: %w", c.path, e.Name, err)
	}
	return safetensors.Tensor{DType: e.DType, Shape: e.Shape, Data: buf}, nil
}

func (c *mappedCheckpoint) close() error {
	var err error
	if c.unmap != nil {
		err = c.unmap()
		c.data, c.unmap = nil, nil
	}
	if cerr := c.f.Close(); err == nil {
		err = cerr
	}
	return err
}

// weightStream binds a model's parameters to the checkpoint's tensors on
// demand. Outside load and release every parameter holds a shared 0-dim
// placeholder.
type weightStream struct {
	ckpt        *mappedCheckpoint
	entries     map[string]safetensors.Entry
	params      map[*nn.Parameter]safetensors.Entry
	placeholder *core.Tensor
	dev         core.Device
	dtype       core.DType
	mem         WeightMemory
}

// WeightMemory is how many bytes of a model's weights are held (in the
// model's dtype on its device; the mapped file is the kernel's page cache
// and not counted).
type WeightMemory struct {
	Total    int64 // every weight of the model
	Resident int64 // loaded now
	Peak     int64 // the most loaded at once since the model was loaded
	Streamed bool  // the weights stay in the checkpoint between uses
}

func newWeightStream(c *mappedCheckpoint, dev core.Device, dtype core.DType) *weightStream {
	s := &weightStream{ckpt: c, entries: map[string]safetensors.Entry{}, params: map[*nn.Parameter]safetensors.Entry{},
		placeholder: core.Scalar(0, dtype, dev).SetRequiresGrad(true), dev: dev, dtype: dtype}
	s.mem.Streamed = true
	for _, e := range c.header.Entries {
		s.entries[e.Name] = e
	}
	return s
}

// streamedParam is param for a streamed model: the tensor is checked
// against the header now and bound later.
func (w *weights) streamedParam(name string, want core.Shape) *nn.Parameter {
	e, ok := w.stream.entries[name]
	if problem := misfit(name, ok, e.Shape, e.DType, want); problem != "" {
		w.problems = append(w.problems, problem)
		return w.dummy
	}
	p, err := nn.ParameterOf(w.stream.placeholder)
	if err != nil {
		w.problems = append(w.problems, fmt.Sprintf("tensor %s: %v", name, err))
		return w.dummy
	}
	w.stream.params[p] = e
	w.stream.mem.Total += int64(e.Shape.Numel() * w.dtype.Size())
	return p
}

// load binds the streamed parameters of mods (an applied LoRA's own
// weights are not streamed and are left alone); on an error it binds
// none.
func (s *weightStream) load(mods ...nn.Module) (err error) {
	if s.ckpt == nil {
		return fmt.Errorf("the model is closed")
	}
	defer func() {
		if err != nil {
			s.release(mods...)
		}
	}()
	for _, m := range mods {
		for _, np := range m.NamedParameters() {
			e, ok := s.params[np.Param]
			if !ok {
				continue
			}
			st, err := s.ckpt.tensor(e)
			if err != nil {
				return err
			}
			t := tensorFor(st, s.dtype, s.dev).Detach().SetRequiresGrad(true)
			if err := np.Param.Bind(t); err != nil {
				return fmt.Errorf("tensor %s: %w", e.Name, err)
			}
			s.mem.Resident += int64(e.Shape.Numel() * s.dtype.Size())
		}
	}
	s.mem.Peak = max(s.mem.Peak, s.mem.Resident)
	return nil
}

// release puts the placeholder back into mods' streamed parameters, so
// the loaded tensors can be freed once the ops that read them are done.
func (s *weightStream) release(mods ...nn.Module) {
	for _, m := range mods {
		for _, np := range m.NamedParameters() {
			e, ok := s.params[np.Param]
			if !ok || np.Param.Tensor() == s.placeholder {
				continue
			}
			// The placeholder is a leaf requiring a gradient: Bind cannot fail.
			_ = np.Param.Bind(s.placeholder)
			s.mem.Resident -= int64(e.Shape.Numel() * s.dtype.Size())
		}
	}
}

// LoadUNet2DConditionStreamed is LoadUNet2DCondition for a model whose
// weights stay in the memory-mapped checkpoint: the file's header is
// checked as strictly at load, but each block's tensors are copied in
// (converted to the dtype, uploaded to the device) only when Forward
// reaches the block, and dropped when it leaves it. Outputs are
// bit-identical to the fully loaded model's; WeightMemory reports the
// bytes held. StateDict then lists placeholders, LoRA.Merge is refused
// (LoRA.Apply works), and Close releases the mapping.
func LoadUNet2DConditionStreamed(dir string, opts ...LoadOption) (*UNet2DConditionModel, error) {
	return loadUNet2DCondition(dir, true, opts)
}

// WeightMemory reports the bytes of weights the model holds; for a model
// loaded whole, all of them all the time (WeightBytes: int8 layers count
// their i8 weights and scales).
func (m *UNet2DConditionModel) WeightMemory() WeightMemory {
	if m.stream != nil {
		return m.stream.mem
	}
	n := WeightBytes(m)
	return WeightMemory{Total: n, Resident: n, Peak: n}
}

// Close releases a streamed model's checkpoint (Forward fails afterwards);
// for a model loaded whole it does nothing.
func (m *UNet2DConditionModel) Close() error {
	if m.stream == nil || m.stream.ckpt == nil {
		return nil
	}
	err := m.stream.ckpt.close()
	m.stream.ckpt = nil
	return err
}

// use loads mods' weights when the model streams them.
func (m *UNet2DConditionModel) use(mods ...nn.Module) error {
	if m.stream == nil {
		return nil
	}
	if err := m.stream.load(mods...); err != nil {
		return fmt.Errorf("diffuse: UNet2DConditionModel.Forward: streaming weights: %w", err)
	}
	return nil
}

// done releases mods' weights when the model streams them.
func (m *UNet2DConditionModel) done(mods ...nn.Module) {
	if m.stream != nil {
		m.stream.release(mods...)
	}
}
