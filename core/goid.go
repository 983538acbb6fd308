package core

import (
	"runtime"
	"sync"
	"unsafe"
)

// Grad mode is per goroutine (gradmode.go), so an op inside a NoGrad scope
// asks for the calling goroutine's id, and Go offers none: reading it from
// runtime.Stack's first line costs about 2 us, which was 6% of a UNet
// forward under NoGrad (every op on a parameter asks). On amd64 the id is
// read from the runtime's g instead, at an offset found at start-up by
// comparing against runtime.Stack in several goroutines; where the offset
// is not found (another Go version's layout, another architecture) every
// lookup reads the stack trace as before, so the answer never depends on
// the guess.

// goidOffset is where g holds the goroutine's id, or -1.
var goidOffset = findGoidOffset()

// goroutineID is the calling goroutine's id. Ids are never reused.
func goroutineID() uint64 {
	if goidOffset >= 0 {
		return *(*uint64)(unsafe.Add(getg(), goidOffset))
	}
	return goroutineIDFromStack()
}

// gScanBytes bounds the search: the id sits in g's first few hundred
// bytes in every Go release that has one.
const gScanBytes = 256

// findGoidOffset returns the one offset at which the g of each of several
// goroutines holds that goroutine's id, or -1.
func findGoidOffset() int {
	if getg() == nil {
		return -1
	}
	const probes = 4
	offsets := make([][]int, probes)
	var wg sync.WaitGroup
	for p := range probes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			id, g := goroutineIDFromStack(), getg()
			for off := 0; off+8 <= gScanBytes; off += 8 {
				if *(*uint64)(unsafe.Add(g, off)) == id {
					offsets[p] = append(offsets[p], off)
				}
			}
		}()
		wg.Wait() // one at a time: ids then differ, so a constant field cannot match all
	}
	for _, off := range offsets[0] {
		all := true
		for _, list := range offsets[1:] {
			found := false
			for _, o := range list {
				found = found || o == off
			}
			all = all && found
		}
		if all {
			return off
		}
	}
	return -1
}

// goroutineIDFromStack reads the id from the first line of the calling
// goroutine's stack trace ("goroutine 18 [running]:").
func goroutineIDFromStack() uint64 {
	var buf [64]byte
	b := buf[:runtime.Stack(buf[:], false)]
	const prefix = "goroutine "
	if len(b) <= len(prefix) {
		panic("core: cannot read the goroutine id from the stack trace")
	}
	var id uint64
	for _, c := range b[len(prefix):] {
		if c < '0' || c > '9' {
			break
		}
		id = id*10 + uint64(c-'0')
	}
	return id
}
