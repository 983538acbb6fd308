package webgpu

import (
	"encoding/binary"
	"fmt"
	"math"
	"strings"
	"sync/atomic"
	"time"

	"github.com/cogentcore/webgpu/wgpu"
	"github.com/webtensor/webtensor/backends/lower"
	"github.com/webtensor/webtensor/wgsl"
)

// paramBytes is the uniform block of one dispatch (common.wgsl's Params);
// arenaSlots dispatches share one uniform buffer per batch.
const (
	paramBytes = wgsl.ParamSlots * 4
	arenaSlots = 256
)

// params is the uniform block of one dispatch. WGSL has only 32-bit
// integers, so every count, dim, stride and offset a kernel reads must fit
// in one: setI and setN record the first value that does not, and the
// launch (runGroups) is refused naming it, where the value used to wrap
// (a sum over a 2^32+5-element broadcast view counted 5 members).
type params struct {
	w        [wgsl.ParamSlots]uint32
	overflow *slotOverflow
}

// slotOverflow is a value that did not fit its uniform slot.
type slotOverflow struct {
	slot  int
	value int
}

func (p *params) setU(i int, v uint32)  { p.w[i] = v }
func (p *params) setF(i int, v float64) { p.w[i] = math.Float32bits(float32(v)) }

// setI stores a signed value (read with pi), which must fit in an i32.
func (p *params) setI(i int, v int) {
	if v < math.MinInt32 || v > math.MaxInt32 {
		p.noteOverflow(i, v)
	}
	p.w[i] = uint32(int32(v))
}

// setN stores a count, dim or index (read with pu), which must lie in
// [0, 2^31): kernels mix it with i32 strides and offsets.
func (p *params) setN(i int, v int) {
	if v < 0 || v > math.MaxInt32 {
		p.noteOverflow(i, v)
	}
	p.w[i] = uint32(v)
}

func (p *params) noteOverflow(i, v int) {
	if p.overflow == nil {
		p.overflow = &slotOverflow{slot: i, value: v}
	}
}

// check refuses a launch whose parameters did not fit.
func (p *params) check(kernel string) error {
	if o := p.overflow; o != nil {
		return fmt.Errorf("webgpu: %s: a count, size, stride or offset of %d (uniform slot %d) does not fit the 32-bit integers GPU kernels index with (at most %d); split the work or use device cpu",
			kernelName(kernel), o.value, o.slot, math.MaxInt32)
	}
	return nil
}

// kernelName is the family of a pipeline key ("reduce", "map", ...), which
// is all of it a user can act on.
func kernelName(key string) string {
	if i := strings.IndexByte(key, '|'); i > 0 {
		return key[:i] + " kernel"
	}
	return key
}

// setScalars puts an expression's scalar attributes in slots 0..7.
func (p *params) setScalars(s *lower.Scalars) {
	w := s.Words()
	copy(p.w[:lower.NumScalars], w[:])
}

// pipeline is a compiled kernel with its explicit bind group layout:
// binding 0 is the uniform block, then nIn read-only and nOut read-write
// storage buffers.
type pipeline struct {
	key       string // the cache key, which names the kernel in profiles
	pipe      *wgpu.ComputePipeline
	layout    *wgpu.BindGroupLayout
	nBufs     int
	uniformAt uint32   // binding of the uniform block
	bufAt     []uint32 // binding of each buffer, in order
	src       string   // the WGSL, kept only while verifyKernelKeys is on
}

// verifyKernelKeys makes every cache hit render its kernel again and fail
// when the source differs from the cached one: a key that misses something
// the source depends on (the output's dtype, an attribute written into the
// WGSL) would otherwise hand one call another's kernel, here and from the
// disk cache in later processes.
var verifyKernelKeys atomic.Bool

// VerifyKernelKeys is for test suites (webgputest turns it on): from now
// on every kernel cache hit renders the kernel's source again and fails the
// call, naming the key, when it differs from the cached one. It costs a
// render per lookup, and keeps each new kernel's source.
func VerifyKernelKeys() { verifyKernelKeys.Store(true) }

// batch is the command buffer being recorded.
type batch struct {
	enc     *wgpu.CommandEncoder
	pass    *wgpu.ComputePassEncoder
	uniform *wgpu.Buffer
	arena   []byte
	n       int
	groups  []*wgpu.BindGroup
	retired []*slot
	// retiredBytes is the size of the buffers in retired.
	retiredBytes uint64
}

// pipelineFor returns the cached pipeline for key, compiling render()'s
// source on first use.
func (b *Backend) pipelineFor(key string, nIn, nOut int, render func() (string, error)) (*pipeline, error) {
	return b.pipelineWithLayout(key, nIn, nOut, 0, render)
}

// pipelineWithLayout is pipelineFor with the uniform block at binding
// uniformAt: 0 puts the buffers after it (our kernels), nIn+nOut before it
// (the plugin WGSL layout of core.OpDef.WGSL).
func (b *Backend) pipelineWithLayout(key string, nIn, nOut, uniformAt int, render func() (string, error)) (*pipeline, error) {
	return b.pipeline(key, nIn, nOut, uniformAt, true, render)
}

// pipeline looks key up in memory, then (when persist) its source on disk,
// and renders the source only when neither has it. Every key of ours
// determines its source, so a source from disk is the one render would
// make; a rendered source is stored once it has compiled.
func (b *Backend) pipeline(key string, nIn, nOut, uniformAt int, persist bool, render func() (string, error)) (*pipeline, error) {
	b.mu.Lock()
	p := b.pipes[key]
	b.mu.Unlock()
	b.kernelLookups.Add(1)
	if p != nil {
		b.kernelHits.Add(1)
		if verifyKernelKeys.Load() && p.src != "" { // "": compiled before verifying began
			if err := lower.SameSource("webgpu", key, p.src, render); err != nil {
				return nil, err
			}
		}
		return p, nil
	}
	var src string
	fromDisk := persist && b.disk.load(entryKernel, key, &src)
	if !fromDisk {
		var err error
		if src, err = render(); err != nil {
			return nil, err
		}
	} else if verifyKernelKeys.Load() {
		if err := lower.SameSource("webgpu", key, src, render); err != nil {
			return nil, err
		}
	}
	dumpKernel(key, src)
	p, err := b.compile(key, src, nIn, nOut, uniformAt)
	if err == nil && persist && !fromDisk {
		b.disk.store(entryKernel, key, src)
	}
	return p, err
}

// compile builds the pipeline of src under key, unless another goroutine
// has meanwhile.
func (b *Backend) compile(key, src string, nIn, nOut, uniformAt int) (*pipeline, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if p := b.pipes[key]; p != nil {
		return p, nil
	}
	mod, err := b.device.CreateShaderModule(&wgpu.ShaderModuleDescriptor{Label: key, WGSLDescriptor: &wgpu.ShaderModuleWGSLDescriptor{Code: src}})
	if err != nil {
		return nil, fmt.Errorf("webgpu: compiling kernel %s: %w", key, err)
	}
	defer mod.Release()
	entries := []wgpu.BindGroupLayoutEntry{{Binding: uint32(uniformAt), Visibility: wgpu.ShaderStageCompute,
		Buffer: wgpu.BufferBindingLayout{Type: wgpu.BufferBindingTypeUniform}}}
	bufAt := make([]uint32, nIn+nOut)
	for i := range nIn + nOut {
		t := wgpu.BufferBindingTypeReadOnlyStorage
		if i >= nIn {
			t = wgpu.BufferBindingTypeStorage
		}
		bufAt[i] = uint32(i)
		if uniformAt == 0 {
			bufAt[i] = uint32(i + 1)
		}
		entries = append(entries, wgpu.BindGroupLayoutEntry{Binding: bufAt[i], Visibility: wgpu.ShaderStageCompute,
			Buffer: wgpu.BufferBindingLayout{Type: t}})
	}
	layout, err := b.device.CreateBindGroupLayout(&wgpu.BindGroupLayoutDescriptor{Label: key, Entries: entries})
	if err != nil {
		return nil, fmt.Errorf("webgpu: bind group layout of %s: %w", key, err)
	}
	pl, err := b.device.CreatePipelineLayout(&wgpu.PipelineLayoutDescriptor{Label: key, BindGroupLayouts: []*wgpu.BindGroupLayout{layout}})
	if err != nil {
		return nil, fmt.Errorf("webgpu: pipeline layout of %s: %w", key, err)
	}
	defer pl.Release()
	pipe, err := b.device.CreateComputePipeline(&wgpu.ComputePipelineDescriptor{Layout: pl,
		Compute: wgpu.ProgrammableStageDescriptor{Module: mod, EntryPoint: "main"}})
	if err != nil {
		return nil, fmt.Errorf("webgpu: pipeline of %s: %w", key, err)
	}
	p := &pipeline{key: key, pipe: pipe, layout: layout, nBufs: nIn + nOut, uniformAt: uint32(uniformAt), bufAt: bufAt}
	if verifyKernelKeys.Load() {
		p.src = src
	}
	b.pipes[key] = p
	return p, nil
}

// groupsFor spreads n threads of workgroups of wg over x and y, since a
// dispatch has at most 65535 groups per dimension.
func groupsFor(n, wg int) (x, y uint32) {
	g := (n + wg - 1) / wg
	if g <= 65535 {
		return uint32(g), 1
	}
	return 65535, uint32((g + 65534) / 65535)
}

// run records one dispatch of p over n threads (workgroups of wg) with
// buffers bound in order after the uniform block. Thread ids are u32 and
// compared with an i32-sized count, so n must stay below 2^31.
func (b *Backend) run(p *pipeline, prm *params, n, wg int, bufs ...*wgpu.Buffer) error {
	if n == 0 {
		return nil
	}
	if n > math.MaxInt32 {
		return fmt.Errorf("webgpu: %s: %d threads in one launch; GPU thread ids are 32-bit (at most %d); split the work or use device cpu",
			kernelName(p.key), n, math.MaxInt32)
	}
	x, y := groupsFor(n, wg)
	return b.runGroups(p, prm, [3]uint32{x, y, 1}, bufs...)
}

// runGroups records one dispatch of an explicit grid.
func (b *Backend) runGroups(p *pipeline, prm *params, grid [3]uint32, bufs ...*wgpu.Buffer) error {
	if err := prm.check(p.key); err != nil {
		return err
	}
	for _, g := range grid {
		if g == 0 {
			return nil
		}
		if g > 65535 {
			return fmt.Errorf("webgpu: a grid of %v workgroups exceeds 65535 in one dimension", grid)
		}
	}
	if len(bufs) != p.nBufs {
		return fmt.Errorf("webgpu: kernel wants %d buffers, got %d", p.nBufs, len(bufs))
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	var start time.Time
	if b.profiling() {
		start = time.Now()
	}
	if b.batch.n == arenaSlots {
		if err := b.flushLocked(); err != nil {
			return err
		}
	}
	if err := b.openBatch(); err != nil {
		return err
	}
	bt := &b.batch
	off := bt.n * paramBytes
	for i, v := range prm.w {
		binary.LittleEndian.PutUint32(bt.arena[off+4*i:], v)
	}
	entries := make([]wgpu.BindGroupEntry, 0, len(bufs)+1)
	entries = append(entries, wgpu.BindGroupEntry{Binding: p.uniformAt, Buffer: bt.uniform, Offset: uint64(off), Size: paramBytes})
	for i, buf := range bufs {
		entries = append(entries, wgpu.BindGroupEntry{Binding: p.bufAt[i], Buffer: buf, Size: wgpu.WholeSize})
	}
	bg, err := b.device.CreateBindGroup(&wgpu.BindGroupDescriptor{Layout: p.layout, Entries: entries})
	if err != nil {
		return fmt.Errorf("webgpu: bind group: %w", err)
	}
	bt.groups = append(bt.groups, bg)
	bt.pass.SetPipeline(p.pipe)
	bt.pass.SetBindGroup(0, bg, nil)
	bt.pass.DispatchWorkgroups(grid[0], grid[1], grid[2])
	bt.n++
	if b.profiling() {
		return b.profileDispatch(p, start)
	}
	return nil
}

func (b *Backend) openBatch() error {
	bt := &b.batch
	if bt.enc != nil {
		return nil
	}
	if bt.uniform == nil {
		u, err := b.device.CreateBuffer(&wgpu.BufferDescriptor{Label: "webtensor params",
			Usage: wgpu.BufferUsageUniform | wgpu.BufferUsageCopyDst, Size: paramBytes * arenaSlots})
		if err != nil {
			return fmt.Errorf("webgpu: uniform arena: %w", err)
		}
		bt.uniform, bt.arena = u, make([]byte, paramBytes*arenaSlots)
	}
	enc, err := b.device.CreateCommandEncoder(nil)
	if err != nil {
		return fmt.Errorf("webgpu: command encoder: %w", err)
	}
	bt.enc = enc
	bt.pass = enc.BeginComputePass(nil)
	return nil
}

// flushLocked submits the recorded batch; the caller holds b.mu.
func (b *Backend) flushLocked() error {
	bt := &b.batch
	if bt.enc == nil {
		return nil
	}
	bt.pass.End()
	bt.pass.Release()
	cmd, err := bt.enc.Finish(nil)
	bt.enc.Release()
	bt.enc, bt.pass = nil, nil
	if err != nil {
		return fmt.Errorf("webgpu: finishing commands: %w", err)
	}
	if err := b.writeBuffer(bt.uniform, 0, bt.arena[:bt.n*paramBytes]); err != nil {
		return fmt.Errorf("webgpu: writing kernel parameters: %w", err)
	}
	b.queue.Submit(cmd)
	b.unsubmitted = 0
	cmd.Release()
	for _, g := range bt.groups {
		g.Release()
	}
	for _, sl := range bt.retired {
		b.putLocked(&b.pool, sl.buf, sl.size)
	}
	bt.groups, bt.retired, bt.retiredBytes, bt.n = bt.groups[:0], bt.retired[:0], 0, 0
	return nil
}

// Flush submits queued kernels without waiting for them.
func (b *Backend) Flush() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.flushLocked()
}

// Sync submits queued kernels and waits until the GPU has finished them.
func (b *Backend) Sync() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if err := b.flushLocked(); err != nil {
		return err
	}
	b.waitIdle()
	return nil
}

// readback copies size bytes at off of src to the host through a pooled
// staging buffer; the caller holds b.mu.
func (b *Backend) readback(src *wgpu.Buffer, off, size uint64) ([]byte, error) {
	if err := b.flushLocked(); err != nil {
		return nil, err
	}
	stage, class, err := b.staging.get(size)
	if err != nil {
		return nil, err
	}
	defer b.putLocked(&b.staging, stage, class)
	enc, err := b.device.CreateCommandEncoder(nil)
	if err != nil {
		return nil, fmt.Errorf("webgpu: command encoder: %w", err)
	}
	defer enc.Release()
	if err := enc.CopyBufferToBuffer(src, off, stage, 0, size); err != nil {
		return nil, fmt.Errorf("webgpu: copy for readback: %w", err)
	}
	cmd, err := enc.Finish(nil)
	if err != nil {
		return nil, fmt.Errorf("webgpu: finishing readback: %w", err)
	}
	b.queue.Submit(cmd)
	b.unsubmitted = 0
	cmd.Release()
	if err := b.mapRead(stage, size); err != nil {
		return nil, err
	}
	out := make([]byte, size)
	copy(out, stage.GetMappedRange(0, uint(size)))
	if err := stage.Unmap(); err != nil {
		return nil, fmt.Errorf("webgpu: unmap: %w", err)
	}
	return out, nil
}
