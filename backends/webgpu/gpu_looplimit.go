package webgpu

import (
	"encoding/binary"
	"fmt"
	"regexp"
	"strings"

	"github.com/webtensor/webtensor/core"
	"github.com/webtensor/webtensor/wgsl"
)

// Mesa's software Vulkan driver (lavapipe, llvmpipe) ends shader loops
// early without an error: each invocation may run 65,535 loop iterations
// in all, counted over every loop it executes (LP_MAX_TGSI_LOOP_ITERATIONS
// in gallivm, which guards against hung shaders). A sum over a group of
// 70,000 members returned 65,535, and a broadcast view of 2^28 ones summed
// to 134,217,472. Kernels that loop per thread must stay under the limit:
// the reductions split their groups into parts short enough (launch_reduce.go);
// frame kernels whose loops would pass it are refused (checkLoops). The
// limit is measured once per device, not assumed from the driver's name.

// loopProbeTrips is how far the probe asks a loop to run.
const loopProbeTrips = 1 << 20

// loopLimit is the most loop iterations this device lets one invocation
// run, or 0 when the probe found no limit (or could not run it).
func (b *Backend) loopLimit() int {
	b.loopOnce.Do(func() {
		n, err := b.probeLoopLimit()
		if err == nil && n < loopProbeTrips {
			b.loops = n
		}
	})
	return b.loops
}

// loopBudget is the loop length a split reduction gives one thread: a
// sixteenth of the limit leaves room for a body's second loop and for the
// loops of generic indexing (loc runs one per dim of a rank above 4), or no
// bound where the device has no limit.
func (b *Backend) loopBudget() int {
	if l := b.loopLimit(); l > 0 {
		return max(l/16, 1)
	}
	return 0
}

// probeLoopLimit counts the iterations a loop of loopProbeTrips runs
// (wgsl/probe.wgsl).
func (b *Backend) probeLoopLimit() (int, error) {
	if canBlock() != nil {
		return loopProbeTrips, nil // the browser's drivers have no such limit
	}
	p, err := b.pipelineFor("loop-probe", 0, 1, func() (string, error) {
		return wgsl.Render("probe", map[string]any{"WG": 1})
	})
	if err != nil {
		return 0, err
	}
	b.mu.Lock()
	s, err := b.newStorage(core.U32, 1)
	b.mu.Unlock()
	if err != nil {
		return 0, err
	}
	defer s.Release()
	var prm params
	prm.setN(0, loopProbeTrips)
	prm.setN(1, 1)
	if err := b.run(p, &prm, 1, 1, s.slot.buf); err != nil {
		return 0, err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	words, err := b.readback(s.slot.buf, 0, 4)
	if err != nil {
		return 0, err
	}
	return int(binary.LittleEndian.Uint32(words)), nil
}

// rLoop matches the header of a loop over a frame's members (r < R, j < R,
// j = R down to 0, or a split part's range).
var rLoop = regexp.MustCompile(`for \(var \w+ = [^;]*\bR\b|for \(var \w+ = [^;]*;[^;]*\bR\b`)

// checkLoops refuses a frame launch whose threads would each loop more
// than the device allows: trips members per loop over them in body, the
// loops of generic indexing included (rank is the reduced rank).
func (b *Backend) checkLoops(body string, trips, rank int) error {
	limit := b.loopLimit()
	if limit == 0 {
		return nil
	}
	loops := max(len(rLoop.FindAllStringIndex(body, -1)), 1)
	perRead := 1
	if rank > 4 {
		perRead = rank // loc loops once per dim past the first
	}
	if total := loops * trips * perRead; total > limit {
		return b.loopError(fmt.Sprintf("a kernel (%d passes over %d members)", loops, trips), total)
	}
	return nil
}

// locTrips is how many loop iterations one read through common.wgsl's
// loc costs at a run-time rank: one per dim past the first.
func locTrips(rank int) int { return max(rank-1, 0) }

// loopsFit says whether threads that each loop trips times in all stay
// within the device's loop limit (always, on a device without one).
func (b *Backend) loopsFit(trips int) bool {
	limit := b.loopLimit()
	return limit == 0 || trips <= limit
}

// checkTrips refuses a launch whose threads would each loop about trips
// times when that passes the device's loop limit; what names the work
// ("a sort over rows of 70000") for the message.
func (b *Backend) checkTrips(what string, trips int) error {
	if b.loopsFit(trips) {
		return nil
	}
	return b.loopError(what, trips)
}

// loopError is the error of a launch refused for the loop limit.
func (b *Backend) loopError(what string, trips int) error {
	return fmt.Errorf("webgpu: %s would loop about %d times in one GPU thread, but this driver (%s) silently stops every shader loop after %d iterations in all, which would give a wrong result; use device cpu for this size",
		what, trips, strings.TrimSpace(b.info.DriverDescription), b.loopLimit())
}
