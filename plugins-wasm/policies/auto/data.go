package main

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// copyBytesPerSecond is what a cached record costs to serve: one memory
// copy, a few GB/s on any machine the loader runs on.
const copyBytesPerSecond = 4e9

// Batch times that decide the worker rules: a batch that takes over a
// millisecond to make on one goroutine is worth reading on several; one
// under 200 µs costs about what handing it between goroutines does.
const (
	slowBatch = 1e-3
	fastBatch = 2e-4
)

func decideData(raw json.RawMessage) (any, error) {
	r, err := parse(raw)
	if err != nil {
		return nil, err
	}
	if r.Loader == nil {
		return nil, fmt.Errorf("the data policy needs the loader's profile (request.loader)")
	}
	l := *r.Loader
	prefix := "data." + r.Workload + "."
	var out []Proposal
	add := func(p Proposal) {
		if !failed(r, p.Change) {
			out = append(out, p)
		}
	}
	cache, okCache := setting(r, prefix+"cache")
	if okCache && cache.Current == "off" && slices.Contains(cache.Choices, "on") && !l.InMemory && l.ReadSeconds > 0 {
		copySec := float64(l.RecordBytes) / copyBytesPerSecond
		if gain := 1 - copySec/l.ReadSeconds; gain >= 0.3 {
			add(Proposal{What: prefix + "cache=on", ExpectedGain: min(gain, 0.95),
				Why: fmt.Sprintf("reading a record takes %.0f µs, copying its %d bytes from memory about %.1f µs; the %d records fit the cache budget",
					1e6*l.ReadSeconds, l.RecordBytes, 1e6*copySec, l.Records),
				Change: map[string]string{prefix + "cache": "on"}})
			if len(out) > 0 {
				// The workers question depends on what a read costs once
				// cached: ask again after this is decided.
				return Reply{Proposals: capped(out, r.Max)}, nil
			}
		}
	}
	batchSec := l.SampleSeconds * float64(l.BatchSize)
	if w, ok := setting(r, prefix+"workers"); ok {
		cur, _ := strconv.Atoi(w.Current)
		switch {
		case cur == 0 && l.Cores > 1 && batchSec > slowBatch:
			if n := largestAtMost(w.Choices, l.Cores); n > 1 {
				add(Proposal{What: fmt.Sprintf("%sworkers=%d", prefix, n), ExpectedGain: 0.8 * (1 - 1/float64(n)),
					Why:    fmt.Sprintf("a batch takes %.1f ms to read on the loop's goroutine; %d workers read %d batches at once on %d cores", 1e3*batchSec, n, n, l.Cores),
					Change: map[string]string{prefix + "workers": strconv.Itoa(n)}})
			}
		case cur > 0 && batchSec < fastBatch:
			add(Proposal{What: prefix + "workers=0", ExpectedGain: 0.2,
				Why:    fmt.Sprintf("a batch takes %.0f µs to make, about what handing it from a worker to the loop costs", 1e6*batchSec),
				Change: map[string]string{prefix + "workers": "0"}})
		case cur > 0 && l.InMemory && batchSec < slowBatch:
			add(Proposal{What: prefix + "workers=0", ExpectedGain: 0.2,
				Why: fmt.Sprintf("the records are in memory: a batch is %.0f µs of copying, which workers split into hand-offs and contend for memory bandwidth with",
					1e6*batchSec),
				Change: map[string]string{prefix + "workers": "0"}})
		case cur > l.Cores && l.InMemory:
			if n := largestAtMost(w.Choices, l.Cores); n > 0 {
				add(Proposal{What: fmt.Sprintf("%sworkers=%d", prefix, n), ExpectedGain: 0.1,
					Why:    fmt.Sprintf("%d workers copy records already in memory on %d cores: there is no I/O for the extra ones to overlap", cur, l.Cores),
					Change: map[string]string{prefix + "workers": strconv.Itoa(n)}})
			}
		}
		if p, ok := setting(r, prefix+"prefetch"); ok && cur > 0 && p.Current == "1" && slices.Contains(p.Choices, "2") && l.ReadSpread > 0.5 {
			add(Proposal{What: prefix + "prefetch=2", ExpectedGain: 0.1,
				Why:    fmt.Sprintf("record read times spread %.0f%% around their median; with one batch ahead a worker that drew slow records stalls the loop", 100*l.ReadSpread),
				Change: map[string]string{prefix + "prefetch": "2"}})
		}
	}
	return Reply{Proposals: capped(out, r.Max)}, nil
}

// largestAtMost is the largest numeric choice <= limit, or -1.
func largestAtMost(choices []string, limit int) int {
	best := -1
	for _, c := range choices {
		if n, err := strconv.Atoi(strings.TrimSpace(c)); err == nil && n <= limit && n > best {
			best = n
		}
	}
	return best
}
