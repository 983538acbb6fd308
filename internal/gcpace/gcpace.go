package gcpace

import (
	"runtime/metrics"
	"sync/atomic"
)

const cyclesMetric = "/gc/cycles/total:gc-cycles"

// Cycles is the number of collections completed so far. It costs a
// metrics read (well under a microsecond): call it when a counter reaches
// its trigger, not per allocation.
func Cycles() uint64 {
	s := [1]metrics.Sample{{Name: cyclesMetric}}
	metrics.Read(s[:])
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return s[0].Value.Uint64()
}

// Seen is the collection count a pacer last saw. The zero value has seen
// none, so its first Collected reports the collections before it.
type Seen struct{ n atomic.Uint64 }

// Note records the count now: after the pacer's own collection.
func (s *Seen) Note() { s.n.Store(Cycles()) }

// Collected reports whether a collection completed since the last Note or
// Collected, and records the count: a pacer at its trigger starts its count
// over instead of collecting when another has just collected.
func (s *Seen) Collected() bool {
	n := Cycles()
	return s.n.Swap(n) != n
}
