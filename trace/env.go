package trace

import (
	"os"
	"runtime"
	"runtime/debug"
	"sort"

	"github.com/webtensor/webtensor/core"
	"github.com/webtensor/webtensor/core/config"
)

// Environment is what a trace ran in, so a shared file says where it came
// from: the build, the machine's devices and the effective configuration.
type Environment struct {
	Version   string            `json:"version"` // the module version (devel for a source build) and its VCS revision
	Go        string            `json:"go"`
	OS        string            `json:"os"`
	Arch      string            `json:"arch"`
	CPUs      int               `json:"cpus"`
	Devices   []string          `json:"devices"` // the devices the recorded ops ran on
	Default   string            `json:"default_device"`
	Config    map[string]string `json:"config,omitempty"` // the WEBTENSOR_* variables that are set
	Fallbacks map[string]int64  `json:"fallbacks,omitempty"`
}

// CurrentEnvironment describes this process; devices lists the ones the
// recording saw (listing every device would open each backend, which can
// take longer than the run).
func CurrentEnvironment(devices ...string) Environment {
	env := Environment{Version: "devel", Go: runtime.Version(), OS: runtime.GOOS, Arch: runtime.GOARCH,
		CPUs: runtime.NumCPU(), Default: core.DefaultDevice().String()}
	if bi, ok := debug.ReadBuildInfo(); ok {
		env.Version = bi.Main.Version
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" {
				env.Version += " " + s.Value
			}
		}
	}
	env.Devices = append(env.Devices, devices...)
	sort.Strings(env.Devices)
	for _, v := range config.Vars() {
		if s, set := os.LookupEnv(v.Name); set {
			if env.Config == nil {
				env.Config = map[string]string{}
			}
			env.Config[v.Name] = s
		}
	}
	for _, f := range core.Fallbacks() {
		if env.Fallbacks == nil {
			env.Fallbacks = map[string]int64{}
		}
		env.Fallbacks[f.Device+" "+f.Op+" ("+f.Kind+")"] += f.Count
	}
	return env
}
