package trace

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"sort"
	"time"
)

// The Trace Event Format's JSON object form: {"traceEvents": [...],
// "displayTimeUnit": "ms", "otherData": {...}}. Each device is a process
// (pid) named after it; within it, thread 1 holds the calls user code made
// and thread 1+d the calls made d levels inside other ops, so slices nest
// on every row even when ops run on several goroutines. A counter track
// per device follows the memory it holds. otherData carries the
// environment. Times are microseconds from the recording's start.

type chromeFile struct {
	TraceEvents     []chromeEvent  `json:"traceEvents"`
	DisplayTimeUnit string         `json:"displayTimeUnit"`
	OtherData       map[string]any `json:"otherData"`
}

type chromeEvent struct {
	Name string         `json:"name"`
	Cat  string         `json:"cat,omitempty"`
	Ph   string         `json:"ph"`
	Ts   float64        `json:"ts"`
	Dur  *float64       `json:"dur,omitempty"`
	Pid  int            `json:"pid"`
	Tid  int            `json:"tid"`
	Args map[string]any `json:"args,omitempty"`
}

func micros(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }

// WriteJSON writes t as a Chrome trace.
func (t *Trace) WriteJSON(w io.Writer) error {
	pids := map[string]int{}
	var devices []string
	for _, e := range t.Events {
		if _, ok := pids[e.Device]; !ok {
			pids[e.Device] = 0
			devices = append(devices, e.Device)
		}
	}
	sort.Strings(devices)
	f := chromeFile{DisplayTimeUnit: "ms", TraceEvents: []chromeEvent{}}
	threads := map[[2]int]bool{}
	for i, d := range devices {
		pids[d] = i + 1
		f.TraceEvents = append(f.TraceEvents, chromeEvent{Name: "process_name", Ph: "M", Pid: i + 1, Tid: 0,
			Args: map[string]any{"name": "webtensor " + d}})
	}
	for _, e := range t.Events {
		pid, tid := pids[e.Device], e.Depth+1
		if !threads[[2]int{pid, tid}] {
			threads[[2]int{pid, tid}] = true
			name := "ops"
			if e.Depth > 0 {
				name = fmt.Sprintf("ops inside ops (depth %d)", e.Depth)
			}
			f.TraceEvents = append(f.TraceEvents, chromeEvent{Name: "thread_name", Ph: "M", Pid: pid, Tid: tid,
				Args: map[string]any{"name": name}})
		}
		dur := micros(e.Duration)
		args := map[string]any{"inputs": e.Inputs, "outputs": e.Outputs, "bytes": e.Bytes, "depth": e.Depth}
		if e.Error != "" {
			args["error"] = e.Error
		}
		f.TraceEvents = append(f.TraceEvents, chromeEvent{Name: e.Op, Cat: e.Category, Ph: "X", Ts: micros(e.Start),
			Dur: &dur, Pid: pid, Tid: tid, Args: args})
		if e.Memory >= 0 {
			f.TraceEvents = append(f.TraceEvents, chromeEvent{Name: "memory", Ph: "C", Ts: micros(e.Start + e.Duration),
				Pid: pid, Args: map[string]any{"bytes in use": e.Memory}})
		}
	}
	f.OtherData = map[string]any{"webtensor": t.Env, "began": t.Began.Format(time.RFC3339Nano)}
	enc := json.NewEncoder(w)
	return enc.Encode(f)
}

// ReadJSON reads a trace WriteJSON wrote (op slices, their arguments and
// the environment; other events are skipped).
func ReadJSON(r io.Reader) (*Trace, error) {
	var f struct {
		TraceEvents []chromeEvent `json:"traceEvents"`
		OtherData   struct {
			Webtensor Environment `json:"webtensor"`
			Began     string      `json:"began"`
		} `json:"otherData"`
	}
	if err := json.NewDecoder(r).Decode(&f); err != nil {
		return nil, fmt.Errorf("trace: not a Chrome trace JSON object: %w", err)
	}
	if f.TraceEvents == nil {
		return nil, fmt.Errorf("trace: no traceEvents array")
	}
	names := map[int]string{}
	for _, e := range f.TraceEvents {
		if e.Ph == "M" && e.Name == "process_name" {
			if s, ok := e.Args["name"].(string); ok {
				names[e.Pid] = s
			}
		}
	}
	t := &Trace{Env: f.OtherData.Webtensor}
	if f.OtherData.Began != "" {
		t.Began, _ = time.Parse(time.RFC3339Nano, f.OtherData.Began)
	}
	for i, e := range f.TraceEvents {
		if e.Ph != "X" {
			continue
		}
		if e.Dur == nil || *e.Dur < 0 || e.Ts < 0 || math.IsNaN(e.Ts) {
			return nil, fmt.Errorf("trace: event %d (%s) has ts %v and dur %v; want non-negative numbers", i, e.Name, e.Ts, e.Dur)
		}
		ev := Event{Op: e.Name, Category: e.Cat, Device: trimPrefix(names[e.Pid]), Memory: -1,
			Start: time.Duration(e.Ts * float64(time.Microsecond)), Duration: time.Duration(*e.Dur * float64(time.Microsecond))}
		if d, ok := e.Args["depth"].(float64); ok {
			ev.Depth = int(d)
		}
		if b, ok := e.Args["bytes"].(float64); ok {
			ev.Bytes = int64(b)
		}
		ev.Inputs, ev.Outputs = stringList(e.Args["inputs"]), stringList(e.Args["outputs"])
		if s, ok := e.Args["error"].(string); ok {
			ev.Error = s
		}
		t.Events = append(t.Events, ev)
	}
	return t, nil
}

func trimPrefix(s string) string {
	const p = "webtensor "
	if len(s) > len(p) && s[:len(p)] == p {
		return s[len(p):]
	}
	return s
}

func stringList(v any) []string {
	list, _ := v.([]any)
	var out []string
	for _, x := range list {
		if s, ok := x.(string); ok {
			out = append(out, s)
		}
	}
	return out
}

// Validate checks data against the Trace Event Format's JSON object form:
// a traceEvents array whose events each have a known phase, a name, a
// numeric pid, tid and ts, a non-negative dur for complete events, a
// process or thread name for metadata events and numeric series for
// counters. It says which event breaks which rule.
func Validate(data []byte) error {
	var f struct {
		TraceEvents []map[string]any `json:"traceEvents"`
	}
	if err := json.Unmarshal(data, &f); err != nil {
		return fmt.Errorf("not a JSON object with a traceEvents array: %w", err)
	}
	if f.TraceEvents == nil {
		return fmt.Errorf("no traceEvents array")
	}
	for i, e := range f.TraceEvents {
		if err := validateEvent(e); err != nil {
			return fmt.Errorf("traceEvents[%d]: %w", i, err)
		}
	}
	return nil
}

func validateEvent(e map[string]any) error {
	ph, _ := e["ph"].(string)
	name, _ := e["name"].(string)
	if name == "" {
		return fmt.Errorf("no name")
	}
	for _, k := range []string{"pid", "tid", "ts"} {
		if _, ok := e[k].(float64); !ok && !(ph == "C" && k == "tid") && !(ph == "M" && k == "ts") {
			return fmt.Errorf("%s: %s is %v, want a number", name, k, e[k])
		}
	}
	args, _ := e["args"].(map[string]any)
	switch ph {
	case "X":
		if d, ok := e["dur"].(float64); !ok || d < 0 {
			return fmt.Errorf("%s: complete event with dur %v, want a non-negative number", name, e["dur"])
		}
	case "M":
		if name != "process_name" && name != "thread_name" {
			return fmt.Errorf("metadata event %q, want process_name or thread_name", name)
		}
		if s, _ := args["name"].(string); s == "" {
			return fmt.Errorf("%s without args.name", name)
		}
	case "C":
		if len(args) == 0 {
			return fmt.Errorf("counter %s without values", name)
		}
		for k, v := range args {
			if _, ok := v.(float64); !ok {
				return fmt.Errorf("counter %s: %s is %v, want a number", name, k, v)
			}
		}
	default:
		return fmt.Errorf("%s: phase %q is not one this format uses here (X, M, C)", name, ph)
	}
	return nil
}
