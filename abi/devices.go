package abi

import (
	"encoding/json"
	"runtime"

	"github.com/webtensor/webtensor/backends/cpu"
	"github.com/webtensor/webtensor/core"
)

// Devices: naming them, the default, waiting for their queued work, what
// they are and how they use memory, their options, the stream DLPack
// exchange needs, and the count of ops that ran on the CPU instead of
// them. CUDA's extras come from cuda.go.

// DeviceCount is wt_device_count: devices whose backend opens here.
func DeviceCount() int {
	devs, _ := core.Devices()
	return len(devs)
}

// DeviceName is wt_device_name: device i, best first.
func DeviceName(i int64) (string, error) {
	devs, _ := core.Devices()
	if i < 0 || i >= int64(len(devs)) {
		return "", Invalidf("wt_device_name: device index %d out of range (%d devices)", i, len(devs))
	}
	return devs[i].String(), nil
}

// DefaultDevice is wt_default_device.
func DefaultDevice() string { return core.DefaultDevice().String() }

// SetDefaultDevice is wt_set_default_device.
func SetDefaultDevice(name string) error {
	d, err := core.ParseDevice(name)
	if err != nil {
		return Invalidf("%v", err)
	}
	if err := core.SetDefaultDevice(d); err != nil {
		return Errorf(StatusUnsupported, "device %q: %v", name, err)
	}
	return nil
}

// syncer is a backend whose work is queued (WebGPU, CUDA).
type syncer interface{ Sync() error }

// SyncDevice waits for d's queued work (DLPack exports share memory only
// after it).
func SyncDevice(d core.Device) error {
	b, err := core.BackendFor(d)
	if err != nil {
		return err
	}
	if s, ok := b.(syncer); ok {
		return s.Sync()
	}
	return nil
}

// deviceArg parses the device a device function names; fn prefixes errors.
func deviceArg(fn, name string) (core.Device, core.Backend, error) {
	d, err := core.ParseDevice(name)
	if err != nil {
		return core.Device{}, nil, Invalidf("%s: %v", fn, err)
	}
	b, err := core.BackendFor(d)
	if err != nil {
		return core.Device{}, nil, Errorf(StatusUnsupported, "%s: device %q: %v", fn, name, err)
	}
	return d, b, nil
}

// DeviceSync is wt_device_sync: a check a kernel failed since the last
// wait (an index out of range) is returned here.
func DeviceSync(device string) error {
	_, b, err := deviceArg("wt_device_sync", device)
	if err != nil {
		return err
	}
	if s, ok := b.(syncer); ok {
		return s.Sync()
	}
	return nil
}

// DeviceInfoJSON is wt_device_info_json.
func DeviceInfoJSON(device string) (string, error) {
	d, b, err := deviceArg("wt_device_info_json", device)
	if err != nil {
		return "", err
	}
	caps := b.Capabilities()
	info := map[string]any{"device": d.String(), "description": caps.Description, "software": caps.Software,
		"fallbacks": core.FallbackCount(d)}
	if cb, ok := b.(*cpu.Backend); ok {
		info["memory"] = cb.MemoryStats()
	}
	cudaInfo(b, info)
	out, err := json.Marshal(info)
	return string(out), err
}

// DeviceEmptyCache is wt_device_empty_cache.
func DeviceEmptyCache(device string) error {
	_, b, err := deviceArg("wt_device_empty_cache", device)
	if err != nil {
		return err
	}
	// Closed tensors free their storage in cleanups after a collection
	// (closed.go); collect first so memory the caller closed is returned too.
	runtime.GC()
	if c, ok := b.(cacher); ok {
		return c.EmptyCache()
	}
	return nil
}

// cacher is a backend that keeps freed memory for reuse (the CPU's and
// CUDA's caching allocators).
type cacher interface{ EmptyCache() error }

// DeviceSetOption is wt_device_set_option.
func DeviceSetOption(device, name string, value int64) error {
	const fn = "wt_device_set_option"
	d, b, err := deviceArg(fn, device)
	if err != nil {
		return err
	}
	if name == "allow_tf32" {
		if cudaSetTF32(b, value != 0) {
			return nil
		}
		return Errorf(StatusUnsupported, "%s: allow_tf32 is a CUDA option; %s has no TF32 mode", fn, d)
	}
	return Invalidf("%s: unknown option %q (known: allow_tf32)", fn, name)
}

// DeviceStream is wt_device_stream: the CUDA stream of the device's work,
// 0 on devices without one.
func DeviceStream(device string) (uint64, error) {
	_, b, err := deviceArg("wt_device_stream", device)
	if err != nil {
		return 0, err
	}
	if s, ok := b.(interface{ StreamHandle() uintptr }); ok {
		return uint64(s.StreamHandle()), nil
	}
	return 0, nil
}

// FallbacksJSON is wt_fallbacks_json without its reset, which the caller
// makes (ResetFallbacks) only once the counts reached it.
func FallbacksJSON() (string, error) {
	fb := core.Fallbacks()
	if fb == nil {
		fb = []core.Fallback{}
	}
	out, err := json.Marshal(fb)
	return string(out), err
}

// ResetFallbacks clears the fallback counts.
func ResetFallbacks() { core.ResetFallbacks() }

// BuildInfo is wt_build_info.
func BuildInfo() string {
	m := core.BuildManifest()
	info, _ := json.Marshal(map[string]any{
		"version": core.Version, "abi": Version, "go": runtime.Version(),
		"commit": m.Commit, "os": runtime.GOOS, "arch": runtime.GOARCH,
	})
	return string(info)
}

// ManualSeed is wt_manual_seed: the same seed gives the same random tensors
// in every SDK and on every backend.
func ManualSeed(seed uint64) { core.ManualSeed(seed) }

// RNGState is wt_rng_state.
func RNGState() (seed, offset uint64) { return core.RNGState() }

// SetRNGState is wt_set_rng_state.
func SetRNGState(seed, offset uint64) { core.SetRNGState(seed, offset) }

// Collect is wt_collect. A collection queues the cleanups of unreachable
// storages (their releases); they run on their own goroutine soon after,
// not within this call, so a caller waiting for a released flag polls.
func Collect() { runtime.GC() }

// SetNumThreads is wt_set_num_threads: how many threads the CPU backend's
// kernels use (torch.set_num_threads); n <= 0 restores the default
// (GOMAXPROCS; WEBTENSOR_NUM_THREADS when set).
func SetNumThreads(n int64) error {
	if n > 1<<16 {
		return Invalidf("wt_set_num_threads: %d threads is more than any machine has (at most 65536; 0 restores the default)", n)
	}
	cpu.SetNumThreads(int(n))
	return nil
}

// NumThreads is wt_get_num_threads: the threads a CPU op may use now.
func NumThreads() int64 { return int64(cpu.NumThreads()) }

// tuned is a backend that chooses kernel variants by measuring them (WebGPU).
type tuned interface{ TuningJSON() ([]byte, error) }

// DeviceTuningJSON is wt_device_tuning_json: the device's kernel-variant decisions
// as a JSON object ("op|class" to the variant kept, its timings and any
// policy's proposal); {} for a device that tunes nothing.
func DeviceTuningJSON(device string) (string, error) {
	_, b, err := deviceArg("wt_device_tuning_json", device)
	if err != nil {
		return "", err
	}
	t, ok := b.(tuned)
	if !ok {
		return "{}", nil
	}
	js, err := t.TuningJSON()
	return string(js), err
}
