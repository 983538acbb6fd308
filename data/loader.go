package data

import (
	"errors"
	"fmt"
	"iter"
	"sync"

	"github.com/webtensor/webtensor/core"
)

// Options configure a Loader; the zero value is PyTorch's DataLoader
// defaults (batch 1, in order, no workers) on the default device.
type Options struct {
	BatchSize int    `json:"batch_size,omitempty"` // records per batch; 0 means 1
	Shuffle   bool   `json:"shuffle,omitempty"`    // each epoch in Permutation(len, Seed, epoch) order
	Seed      uint64 `json:"seed,omitempty"`
	DropLast  bool   `json:"drop_last,omitempty"` // drop the last batch when it is short
	// Workers read batches on that many goroutines; 0 reads each batch in
	// Next, on the caller's goroutine (PyTorch's num_workers=0).
	Workers int `json:"workers,omitempty"`
	// Prefetch is how many batches each worker reads ahead of the consumer
	// (PyTorch's prefetch_factor); 0 means 2.
	Prefetch int `json:"prefetch,omitempty"`
	// Cache keeps every record in memory as its first read gave it, so
	// epochs after the first copy instead of reading and decoding; the
	// whole dataset must fit CacheBytes (0 means DefaultCacheBytes).
	Cache      bool  `json:"cache,omitempty"`
	CacheBytes int64 `json:"cache_bytes,omitempty"`
	// Device receives the batches; the zero Device is the default device.
	Device core.Device `json:"-"`
}

// Loader batches a Dataset. It is safe to run several epochs' iterators
// at once; each reads the dataset independently.
type Loader struct {
	ds Dataset
	// mu guards opts and cache, which SetPipeline changes between epochs;
	// an epoch takes its copy when it starts.
	mu      sync.Mutex
	opts    Options
	cache   *recordCache
	fields  []Field
	backend core.Backend
	// host says the device's storage is host memory the loader can write
	// (the CPU backend): records are read straight into the batch tensor.
	// Otherwise each worker reads into its own staging buffer, reused
	// batch after batch, and uploads from there, on the worker's goroutine,
	// so the copy to the device overlaps the consumer's step.
	host bool
}

// NewLoader checks the options against the dataset and opens the device.
func NewLoader(ds Dataset, opts Options) (*Loader, error) {
	switch {
	case opts.BatchSize < 0:
		return nil, fmt.Errorf("data: batch size %d is negative", opts.BatchSize)
	case opts.Workers < 0:
		return nil, fmt.Errorf("data: worker count %d is negative", opts.Workers)
	case opts.Prefetch < 0:
		return nil, fmt.Errorf("data: prefetch %d is negative", opts.Prefetch)
	case opts.CacheBytes < 0:
		return nil, fmt.Errorf("data: cache budget %d bytes is negative", opts.CacheBytes)
	}
	if opts.BatchSize == 0 {
		opts.BatchSize = 1
	}
	if opts.Prefetch == 0 {
		opts.Prefetch = 2
	}
	if opts.CacheBytes == 0 {
		opts.CacheBytes = DefaultCacheBytes
	}
	if opts.Cache {
		if err := checkCache(ds, opts.CacheBytes); err != nil {
			return nil, err
		}
	}
	if opts.Device.Kind == "" {
		opts.Device = core.DefaultDevice()
	}
	b, err := core.BackendFor(opts.Device)
	if err != nil {
		return nil, fmt.Errorf("data: device %s: %w", opts.Device, err)
	}
	l := &Loader{ds: ds, opts: opts, fields: ds.Fields(), backend: b}
	probe, err := b.Alloc(core.U8, 1)
	if err != nil {
		return nil, fmt.Errorf("data: device %s: %w", opts.Device, err)
	}
	_, l.host = probe.(core.HostStorage)
	probe.Release()
	return l, nil
}

// Dataset is the loader's dataset.
func (l *Loader) Dataset() Dataset { return l.ds }

// Options are the loader's options with the defaults filled in.
func (l *Loader) Options() Options {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.opts
}

// Pipeline is the part of a loader's options that says how batches are
// read, never which records they hold or in what order: the settings a
// tuner may change on a live loader (package auto's data agent does).
type Pipeline struct {
	Workers  int  `json:"workers"`
	Prefetch int  `json:"prefetch"`
	Cache    bool `json:"cache"`
}

// Pipeline is the loader's pipeline now.
func (l *Loader) Pipeline() Pipeline {
	l.mu.Lock()
	defer l.mu.Unlock()
	return Pipeline{Workers: l.opts.Workers, Prefetch: l.opts.Prefetch, Cache: l.opts.Cache}
}

// SetPipeline changes the pipeline of the epochs started after it; a
// running epoch keeps the one it started with. Turning the cache off
// stops epochs using it but keeps what it holds, so turning it back on
// (as an A/B test does, run after run) finds it warm: DropCache frees it.
func (l *Loader) SetPipeline(p Pipeline) error {
	switch {
	case p.Workers < 0:
		return fmt.Errorf("data: worker count %d is negative", p.Workers)
	case p.Prefetch < 1:
		return fmt.Errorf("data: prefetch %d must be at least 1", p.Prefetch)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if p.Cache && !l.opts.Cache {
		if err := checkCache(l.ds, l.opts.CacheBytes); err != nil {
			return err
		}
	}
	// Field by field: Len and Order read BatchSize, Shuffle and Seed
	// without the lock, and those never change.
	l.opts.Workers, l.opts.Prefetch, l.opts.Cache = p.Workers, p.Prefetch, p.Cache
	return nil
}

// CacheFits reports the bytes a cache of every record takes and the
// loader's budget for it.
func (l *Loader) CacheFits() (need, budget int64, ok bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	need = cacheNeed(l.ds)
	return need, l.opts.CacheBytes, need <= l.opts.CacheBytes
}

// CacheStats is what the record cache holds and how it served.
func (l *Loader) CacheStats() CacheStats {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.cache.stats()
}

// DropCache frees the records the cache holds. Epochs running keep
// reading the cache they started with; with the cache on, the next epoch
// starts a new, empty one.
func (l *Loader) DropCache() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.cache = nil
}

// Len is the number of batches in an epoch.
func (l *Loader) Len() int {
	n, b := l.ds.Len(), l.opts.BatchSize // neither changes after NewLoader
	if l.opts.DropLast {
		return n / b
	}
	return (n + b - 1) / b
}

// Order is the record order of an epoch.
func (l *Loader) Order(epoch int) []int {
	if l.opts.Shuffle { // Shuffle and Seed never change after NewLoader
		return Permutation(l.ds.Len(), l.opts.Seed, epoch)
	}
	order := make([]int, l.ds.Len())
	for i := range order {
		order[i] = i
	}
	return order
}

// Batches ranges over an epoch's batches, one tensor per field each,
// stopping at the first error.
func (l *Loader) Batches(epoch int) iter.Seq2[[]*core.Tensor, error] {
	return func(yield func([]*core.Tensor, error) bool) {
		it := l.Epoch(epoch)
		defer it.Close()
		for {
			b, err := it.Next()
			if b == nil && err == nil {
				return
			}
			if !yield(b, err) || err != nil {
				return
			}
		}
	}
}

// ErrClosed is Next's error after Close.
var ErrClosed = errors.New("data: the epoch's iterator was closed")

// Iter is one epoch's pass over a Loader.
type Iter struct {
	l       *Loader
	opts    Options // the loader's options when the epoch started
	ds      Dataset // what the epoch reads: the dataset or its cache
	order   []int
	batches int
	next    int
	staging [][]byte // the consumer's own, when there are no workers

	pending chan chan result // the batches in flight, in order
	stop    chan struct{}
	once    sync.Once
}

type result struct {
	batch []*core.Tensor
	err   error
}

// Epoch starts an epoch: with workers, they begin reading at once, up to
// Workers*Prefetch batches ahead of Next.
func (l *Loader) Epoch(epoch int) *Iter {
	it := &Iter{l: l, order: l.Order(epoch), batches: l.Len(), stop: make(chan struct{}), ds: l.ds}
	l.mu.Lock()
	it.opts = l.opts
	if l.opts.Cache {
		if l.cache == nil {
			l.cache = newRecordCache(l.ds)
		}
		it.ds = l.cache
	}
	l.mu.Unlock()
	if it.opts.Workers == 0 {
		return it
	}
	window := it.opts.Workers * it.opts.Prefetch
	it.pending = make(chan chan result, window)
	type job struct {
		b    int
		slot chan result
	}
	jobs := make(chan job)
	// The producer hands a batch to a worker before queueing its slot,
	// so every queued slot gets a result: Close drains the queue without
	// waiting on a batch nobody reads.
	go func() {
		defer close(it.pending)
		defer close(jobs)
		for b := 0; b < it.batches; b++ {
			slot := make(chan result, 1)
			select {
			case jobs <- job{b, slot}:
			case <-it.stop:
				return
			}
			select {
			case it.pending <- slot:
			case <-it.stop:
				return
			}
		}
	}()
	for range it.opts.Workers {
		go func() {
			var staging [][]byte
			for j := range jobs {
				batch, err := l.build(it.ds, it.records(j.b), &staging)
				j.slot <- result{batch, err}
			}
		}()
	}
	return it
}

// records are batch b's record indices.
func (it *Iter) records(b int) []int {
	lo := b * it.l.opts.BatchSize
	return it.order[lo:min(lo+it.l.opts.BatchSize, len(it.order))]
}

// Len is the number of batches in the epoch.
func (it *Iter) Len() int { return it.batches }

// Next is the next batch, one tensor per field of shape [batch, field
// shape...], or nil and nil at the end of the epoch. A batch that could
// not be read is its error (naming the file and the record); the batches
// after it still come.
func (it *Iter) Next() ([]*core.Tensor, error) {
	if it.next >= it.batches {
		return nil, nil
	}
	if it.pending == nil {
		select {
		case <-it.stop:
			return nil, ErrClosed
		default:
		}
		b := it.next
		it.next++
		return it.l.build(it.ds, it.records(b), &it.staging)
	}
	slot, ok := <-it.pending
	if !ok {
		return nil, ErrClosed
	}
	r := <-slot
	it.next++
	return r.batch, r.err
}

// Close stops the workers and frees the batches read ahead; Next then
// fails with ErrClosed. Closing twice is harmless.
func (it *Iter) Close() {
	it.once.Do(func() {
		close(it.stop)
		if it.pending == nil {
			return
		}
		for slot := range it.pending {
			release((<-slot).batch)
		}
	})
}

func release(ts []*core.Tensor) {
	for _, t := range ts {
		if t != nil {
			t.Release()
		}
	}
}

// build reads the records idx of ds (the loader's dataset or its cache)
// into one tensor per field. staging is the calling goroutine's buffer
// set, grown as needed and reused.
func (l *Loader) build(ds Dataset, idx []int, staging *[][]byte) ([]*core.Tensor, error) {
	n := len(idx)
	out := make([]*core.Tensor, len(l.fields))
	bufs := make([][]byte, len(l.fields))
	if !l.host && len(*staging) != len(l.fields) {
		*staging = make([][]byte, len(l.fields))
	}
	for f, fd := range l.fields {
		size := n * fd.Bytes()
		if l.host {
			t, err := core.Empty(l.backend, batchShape(n, fd), fd.DType)
			if err != nil {
				release(out)
				return nil, fmt.Errorf("data: batch of %d records, field %s: %w", n, fd, err)
			}
			out[f] = t
			bufs[f] = t.Storage().(core.HostStorage).Host()[:size]
			continue
		}
		if cap((*staging)[f]) < size {
			(*staging)[f] = make([]byte, size)
		}
		bufs[f] = (*staging)[f][:size]
	}
	dst := make([][]byte, len(l.fields))
	for k, i := range idx {
		for f, fd := range l.fields {
			sz := fd.Bytes()
			dst[f] = bufs[f][k*sz : (k+1)*sz]
		}
		if err := ds.Read(i, dst); err != nil {
			release(out)
			return nil, err
		}
	}
	if l.host {
		return out, nil
	}
	for f, fd := range l.fields {
		// FromBytes copies (every backend's Upload does), so the staging
		// buffer is free again when it returns.
		out[f] = core.FromBytes(fd.DType, batchShape(n, fd), bufs[f], l.opts.Device)
		if err := out[f].Err(); err != nil {
			release(out)
			return nil, fmt.Errorf("data: uploading field %s of a batch of %d to %s: %w", fd, n, l.opts.Device, err)
		}
	}
	return out, nil
}

func batchShape(n int, fd Field) core.Shape {
	return append(core.Shape{n}, fd.Shape...)
}
