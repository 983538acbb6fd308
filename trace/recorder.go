package trace

import (
	"fmt"
	"sync"
	"time"

	"github.com/webtensor/webtensor/core"
)

// Event is one op call of a recording.
type Event struct {
	Op       string
	Category string
	Device   string
	Inputs   []string // "f32[128 784]"
	Outputs  []string
	Bytes    int64 // read from the inputs and written to the outputs
	Start    time.Duration
	Duration time.Duration
	Depth    int    // 0: called by user code; 1+: called inside another op
	Memory   int64  // bytes the device held after the call; -1 when it does not say
	Error    string `json:",omitempty"`
}

// Trace is a finished recording.
type Trace struct {
	Events []Event
	Env    Environment
	Began  time.Time
}

// Recorder records op calls until Stop.
type Recorder struct {
	mu     sync.Mutex
	began  time.Time
	events []Event
	sync   bool
	max    int
	prev   core.CallObserver
	active bool
}

// Option configures a recording.
type Option func(*Recorder)

// WithSync makes the recording wait for an asynchronous device after each
// call, so an op's time is its execution rather than its submission.
func WithSync() Option { return func(r *Recorder) { r.sync = true } }

// WithMaxEvents bounds the events kept (a long run's first n); 0 keeps all.
func WithMaxEvents(n int) Option { return func(r *Recorder) { r.max = n } }

var (
	activeMu sync.Mutex
	active   *Recorder
)

// Start begins recording every op call of the process. One recording runs
// at a time: a second Start fails until the first stops.
func Start(opts ...Option) (*Recorder, error) {
	activeMu.Lock()
	defer activeMu.Unlock()
	if active != nil {
		return nil, fmt.Errorf("trace: a recording is already running (started %s); stop it first", active.began.Format(time.RFC3339))
	}
	r := &Recorder{began: time.Now(), active: true}
	for _, o := range opts {
		o(r)
	}
	r.prev = core.SetCallObserver(r.observe)
	active = r
	return r, nil
}

// Stop ends the recording and returns it with the environment it ran in.
func (r *Recorder) Stop() *Trace {
	activeMu.Lock()
	if active == r {
		core.SetCallObserver(r.prev)
		active = nil
	}
	activeMu.Unlock()
	r.mu.Lock()
	defer r.mu.Unlock()
	r.active = false
	seen := map[string]bool{}
	var devices []string
	for _, e := range r.events {
		if !seen[e.Device] {
			seen[e.Device] = true
			devices = append(devices, e.Device)
		}
	}
	return &Trace{Events: r.events, Env: CurrentEnvironment(devices...), Began: r.began}
}

func (r *Recorder) observe(e *core.CallEvent) {
	if r.sync && e.Device.Kind != "" && e.Device != core.CPU {
		if b, err := core.BackendFor(e.Device); err == nil {
			if s, ok := b.(interface{ Sync() error }); ok && s.Sync() == nil {
				e.Duration = time.Since(e.Start)
			}
		}
	}
	ev := Event{Op: e.Op, Category: e.Category, Device: e.Device.String(), Start: e.Start.Sub(r.began),
		Duration: e.Duration, Depth: e.Depth, Memory: memoryOf(e.Device)}
	for _, m := range e.Inputs {
		ev.Inputs = append(ev.Inputs, metaString(m))
		ev.Bytes += int64(m.Shape.Numel() * m.DType.Size())
	}
	for _, m := range e.Outputs {
		ev.Outputs = append(ev.Outputs, metaString(m))
		ev.Bytes += int64(m.Shape.Numel() * m.DType.Size())
	}
	if e.Err != nil {
		ev.Error = e.Err.Error()
	}
	r.mu.Lock()
	if r.active && (r.max == 0 || len(r.events) < r.max) {
		r.events = append(r.events, ev)
	}
	r.mu.Unlock()
}

func metaString(m core.Meta) string { return fmt.Sprintf("%s%v", m.DType, []int(m.Shape)) }

// memoryOf is the bytes device holds, from its backend's MemoryInUse.
func memoryOf(d core.Device) int64 {
	if d.Kind == "" {
		return -1
	}
	b, err := core.BackendFor(d)
	if err != nil {
		return -1
	}
	if m, ok := b.(interface{ MemoryInUse() int64 }); ok {
		return m.MemoryInUse()
	}
	return -1
}
