package plugins

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/tetratelabs/wazero"
)

// The instances of one plugin. An instance runs one call at a time, so
// concurrent calls each take an idle instance, or instantiate the compiled
// module afresh while the plugin has fewer than its cap; beyond the cap they
// wait for one to come back. An instance that a call broke (a trap, a
// timeout, a lie about its memory) is closed instead of coming back.

// errPluginClosed is what a call on a closed plugin, or one still waiting
// for an instance when the plugin closes, gets; callers prefix the plugin's
// or the policy's name.
var errPluginClosed = errors.New("was closed; load it again")

type instancePool struct {
	host     *Host
	compiled wazero.CompiledModule
	max      int

	mu      sync.Mutex
	changed sync.Cond   // an instance came back or was dropped, or the pool closed
	idle    []*instance // last in, first out: the warmest instance serves next
	live    int         // idle, busy, or being instantiated; at most max
	closed  bool

	// For tests: instances made, the most ever busy at once, and the calls
	// waiting for an instance now.
	made, peakBusy, waiting int
}

// newInstancePool starts a pool with first, the instance that read the
// manifest, idle in it.
func newInstancePool(h *Host, c wazero.CompiledModule, first *instance) *instancePool {
	pl := &instancePool{host: h, compiled: c, max: h.cfg.maxInstances, idle: []*instance{first}, live: 1, made: 1}
	pl.changed.L = &pl.mu
	return pl
}

// get returns an instance for one call: an idle one, a new one while the
// pool is under its cap, or, at the cap, the next one to come back.
func (pl *instancePool) get() (*instance, error) {
	pl.mu.Lock()
	for !pl.closed && len(pl.idle) == 0 && pl.live >= pl.max {
		pl.waiting++
		pl.changed.Wait()
		pl.waiting--
	}
	if pl.closed {
		pl.mu.Unlock()
		return nil, errPluginClosed
	}
	if n := len(pl.idle); n > 0 {
		inst := pl.idle[n-1]
		pl.idle = pl.idle[:n-1]
		pl.noteBusy()
		pl.mu.Unlock()
		return inst, nil
	}
	pl.live++ // reserve the slot; instantiate outside the lock
	pl.made++
	pl.noteBusy()
	pl.mu.Unlock()
	inst, err := pl.host.instantiate(context.Background(), pl.compiled)
	if err != nil {
		pl.drop(nil)
		return nil, err
	}
	return inst, nil
}

// noteBusy records the number of instances in calls, with pl.mu held.
func (pl *instancePool) noteBusy() { pl.peakBusy = max(pl.peakBusy, pl.live-len(pl.idle)) }

// put returns an instance after a call that left it sound.
func (pl *instancePool) put(inst *instance) {
	pl.mu.Lock()
	if pl.closed {
		pl.mu.Unlock()
		pl.drop(inst)
		return
	}
	pl.idle = append(pl.idle, inst)
	pl.changed.Signal()
	pl.mu.Unlock()
}

// drop closes an instance (nil: one that failed to instantiate) and frees
// its slot for a fresh one.
func (pl *instancePool) drop(inst *instance) {
	inst.close()
	pl.mu.Lock()
	pl.live--
	pl.changed.Broadcast() // a waiter may instantiate; Close may be waiting for zero
	pl.mu.Unlock()
}

// close makes every later get fail, wakes the calls waiting for an instance
// (they fail too) and closes the idle instances. It reports whether this was
// the first close.
func (pl *instancePool) close() bool {
	pl.mu.Lock()
	if pl.closed {
		pl.mu.Unlock()
		return false
	}
	pl.closed = true
	idle := pl.idle
	pl.idle = nil
	pl.changed.Broadcast()
	pl.mu.Unlock()
	for _, inst := range idle {
		pl.drop(inst)
	}
	return true
}

// drain waits for the calls in flight at close to finish; each closes its
// instance on the way out. They end within the deadline, unless the host
// has none.
func (pl *instancePool) drain() {
	pl.mu.Lock()
	for pl.live > 0 {
		pl.changed.Wait()
	}
	pl.mu.Unlock()
}

// withInstance runs fn on an instance of the plugin and returns the
// instance to the pool, or drops it when fn broke it.
func (p *Plugin) withInstance(fn func(*instance) error) (err error) {
	inst, err := p.pool.get()
	if err != nil {
		return err
	}
	defer func() {
		if r := recover(); r != nil {
			err = broken(fmt.Errorf("host error: %v", r))
		}
		if isBroken(err) || inst.expired {
			p.pool.drop(inst)
		} else {
			p.pool.put(inst)
		}
	}()
	return fn(inst)
}
