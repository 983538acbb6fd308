package data

import (
	"fmt"
	"sync/atomic"
)

// DefaultCacheBytes is the memory a loader's record cache may take when
// Options.CacheBytes is unset: 1 GiB, enough for ImageNet-sized subsets at
// low resolution and small enough not to crowd a training process out.
const DefaultCacheBytes int64 = 1 << 30

// recordCache keeps each record as its first read returned it, so from
// the second epoch on a record costs a copy instead of a file read and a
// decode. The readers are deterministic (no random transforms), so the
// cached bytes are the bytes a fresh read would give, and the order and
// content of every batch are unchanged; a file edited on disk after its
// first read is not seen again while the cache holds it.
//
// Each record is one allocation holding its fields back to back, stored
// once through an atomic pointer: workers fill distinct records without a
// lock, and two epochs reading the same record at once both read the
// file and store equal bytes.
type recordCache struct {
	ds     Dataset
	fields []Field
	recs   []atomic.Pointer[[]byte]
	bytes  atomic.Int64 // record bytes held
	hits   atomic.Int64
	misses atomic.Int64
}

// cacheNeed is the bytes a cache of every record of ds takes.
func cacheNeed(ds Dataset) int64 {
	var per int64
	for _, f := range ds.Fields() {
		per += int64(f.Bytes())
	}
	return per * int64(ds.Len())
}

func newRecordCache(ds Dataset) *recordCache {
	return &recordCache{ds: ds, fields: ds.Fields(), recs: make([]atomic.Pointer[[]byte], ds.Len())}
}

func (c *recordCache) Len() int        { return c.ds.Len() }
func (c *recordCache) Fields() []Field { return c.fields }

func (c *recordCache) Read(i int, dst [][]byte) error {
	if i < 0 || i >= len(c.recs) {
		return c.ds.Read(i, dst) // the dataset's own out-of-range error
	}
	if p := c.recs[i].Load(); p != nil {
		c.hits.Add(1)
		off := 0
		for f := range dst {
			off += copy(dst[f], (*p)[off:])
		}
		return nil
	}
	c.misses.Add(1)
	if err := c.ds.Read(i, dst); err != nil {
		return err
	}
	var n int
	for _, d := range dst {
		n += len(d)
	}
	rec := make([]byte, 0, n)
	for _, d := range dst {
		rec = append(rec, d...)
	}
	if c.recs[i].CompareAndSwap(nil, &rec) {
		c.bytes.Add(int64(n))
	}
	return nil
}

// CacheStats is what a loader's record cache holds and how it served.
type CacheStats struct {
	Records int64 `json:"records"` // records held
	Bytes   int64 `json:"bytes"`   // their bytes
	Hits    int64 `json:"hits"`    // reads served from memory
	Misses  int64 `json:"misses"`  // reads that went to the dataset
}

func (c *recordCache) stats() CacheStats {
	if c == nil {
		return CacheStats{}
	}
	s := CacheStats{Bytes: c.bytes.Load(), Hits: c.hits.Load(), Misses: c.misses.Load()}
	if per := cacheNeed(c.ds) / max(int64(len(c.recs)), 1); per > 0 {
		s.Records = s.Bytes / per
	}
	return s
}

// checkCache says whether caching every record of ds fits budget bytes.
func checkCache(ds Dataset, budget int64) error {
	if need := cacheNeed(ds); need > budget {
		return fmt.Errorf("data: caching %d records of %d bytes takes %d bytes, over the cache budget of %d (raise cache_bytes or leave the cache off)",
			ds.Len(), need/max(int64(ds.Len()), 1), need, budget)
	}
	return nil
}

// InMemory reports whether ds already holds its records decoded in memory
// (tensors, NumPy, safetensors and Parquet files are read whole when
// opened): caching it would only copy what is there.
func InMemory(ds Dataset) bool {
	_, ok := ds.(*arrays)
	return ok
}
