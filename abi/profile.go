package abi

import (
	"bytes"
	"os"
	"sync"

	"github.com/webtensor/webtensor/core/config"
	"github.com/webtensor/webtensor/trace"
)

// Tracing op calls across the ABI (wt_profile_*, apart from wt_trace_*, which
// captures graphs): wt_profile_start records every op call of the
// process (package trace), wt_profile_stop ends the recording and keeps it,
// wt_profile_write and wt_profile_json hand the kept trace out as a Chrome
// trace file or string. WEBTENSOR_TRACE=path starts a recording when the
// library loads; the SDKs write it to that path at exit (TraceAtExitPath).

var (
	traceMu   sync.Mutex
	recording *trace.Recorder
	lastTrace *trace.Trace
)

// TraceSync is wt_profile_start's flag that makes each op wait for its
// device, so GPU ops carry their execution time, not their submission.
const TraceSync = 1

func init() {
	if config.String("WEBTENSOR_TRACE") != "" {
		_ = TraceStart(0) // nothing can be running yet
	}
}

// TraceAtExitPath is where an SDK writes the process's trace when it exits
// (WEBTENSOR_TRACE), or "" when that variable is not set.
func TraceAtExitPath() string { return config.String("WEBTENSOR_TRACE") }

// TraceStart is wt_profile_start.
func TraceStart(flags int64) error {
	if flags&^TraceSync != 0 {
		return Invalidf("wt_profile_start: unknown flags %#x (1: wait for the device after each op)", flags&^TraceSync)
	}
	traceMu.Lock()
	defer traceMu.Unlock()
	if recording != nil {
		return Invalidf("wt_profile_start: a recording is already running; stop it with wt_profile_stop first")
	}
	var opts []trace.Option
	if flags&TraceSync != 0 {
		opts = append(opts, trace.WithSync())
	}
	r, err := trace.Start(opts...)
	if err != nil {
		return Invalidf("wt_profile_start: %v", err)
	}
	recording = r
	return nil
}

// TraceStop is wt_profile_stop: it ends the recording and keeps its trace
// for wt_profile_write and wt_profile_json.
func TraceStop() error {
	traceMu.Lock()
	defer traceMu.Unlock()
	if recording == nil {
		return Invalidf("wt_profile_stop: no recording is running (start one with wt_profile_start)")
	}
	lastTrace, recording = recording.Stop(), nil
	return nil
}

// kept is the trace wt_profile_stop kept, stopping a running recording first
// (so an exit hook that only writes still gets everything).
func kept(fn string) (*trace.Trace, error) {
	traceMu.Lock()
	defer traceMu.Unlock()
	if recording != nil {
		lastTrace, recording = recording.Stop(), nil
	}
	if lastTrace == nil {
		return nil, Invalidf("%s: no trace recorded yet (wt_profile_start, run, wt_profile_stop)", fn)
	}
	return lastTrace, nil
}

// TraceJSON is wt_profile_json: the kept trace as Chrome trace JSON.
func TraceJSON() (string, error) {
	t, err := kept("wt_profile_json")
	if err != nil {
		return "", err
	}
	var buf bytes.Buffer
	if err := t.WriteJSON(&buf); err != nil {
		return "", err
	}
	return buf.String(), nil
}

// TraceWrite is wt_profile_write: the kept trace as a Chrome trace file.
func TraceWrite(path string) error {
	if path == "" {
		return Invalidf("wt_profile_write: empty path")
	}
	s, err := TraceJSON()
	if err != nil {
		return err
	}
	if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
		return Invalidf("wt_profile_write: %v", err)
	}
	return nil
}
