package core

import (
	"math"
	"runtime/debug"
)

// Version is the webtensor version reported by the CLI, the C ABI and the
// manifest.
const Version = "0.1.0"

// ManifestInput describes one tensor input in the manifest.
type ManifestInput struct {
	Name     string   `json:"name"`
	DTypes   []string `json:"dtypes,omitempty"`
	Optional bool     `json:"optional,omitempty"`
	Variadic bool     `json:"variadic,omitempty"`
	NoGrad   bool     `json:"no_grad,omitempty"`
}

// ManifestAttr describes one attribute in the manifest.
type ManifestAttr struct {
	Name     string   `json:"name"`
	Kind     string   `json:"kind"`
	Default  any      `json:"default"`
	Required bool     `json:"required,omitempty"`
	Enum     []string `json:"enum,omitempty"`
	Doc      string   `json:"doc,omitempty"`
}

// ManifestOp describes one op: what SDK generators and docs are made from.
type ManifestOp struct {
	Name           string          `json:"name"`
	Category       string          `json:"category"`
	Doc            string          `json:"doc"`
	Inputs         []ManifestInput `json:"inputs"`
	Outputs        []string        `json:"outputs,omitempty"`
	Attrs          []ManifestAttr  `json:"attrs"`
	Differentiable bool            `json:"differentiable"`
	Random         bool            `json:"random,omitempty"`
	Dynamic        bool            `json:"dynamic,omitempty"`
	Internal       bool            `json:"internal,omitempty"`
	View           bool            `json:"view,omitempty"`
	Backends       []string        `json:"backends"`
	Samples        int             `json:"samples"`
	// HostWork maps a backend kind to what its kernel for the op does on
	// the host (DeclareHostWork); absent where every kernel stays on its
	// device.
	HostWork map[string]string `json:"host_work,omitempty"`
}

// Manifest is the machine-readable op list (`webtensor ops --json`).
type Manifest struct {
	Version string       `json:"version"`
	Commit  string       `json:"commit,omitempty"`
	Ops     []ManifestOp `json:"ops"`
	// HostWork is every declaration of host-side work, of ops and of
	// library functions outside the registry alike.
	HostWork []HostWork `json:"host_work,omitempty"`
}

// BuildManifest describes every registered op and which of the backends
// that open on this machine implement it. View ops run in core and count as
// implemented everywhere.
func BuildManifest() Manifest {
	m := Manifest{Version: Version, Commit: buildCommit(), HostWork: DeclaredHostWork()}
	hostWork := map[string]map[string]string{}
	for _, h := range m.HostWork {
		if hostWork[h.Op] == nil {
			hostWork[h.Op] = map[string]string{}
		}
		hostWork[h.Op][h.Backend] = h.Reason
	}
	devs, _ := Devices()
	for _, d := range Ops() {
		op := ManifestOp{Name: d.Name, Category: d.Category, Doc: d.Doc, Outputs: d.Outputs,
			Differentiable: d.Differentiable(), Random: d.Random, Dynamic: d.Dynamic,
			Internal: d.Internal, View: d.View != nil, Samples: len(d.Samples),
			Inputs: []ManifestInput{}, Attrs: []ManifestAttr{}, Backends: []string{}, HostWork: hostWork[d.Name]}
		for _, in := range d.Inputs {
			mi := ManifestInput{Name: in.Name, Optional: in.Optional, Variadic: in.Variadic, NoGrad: in.NoGrad}
			for _, dt := range in.DTypes {
				mi.DTypes = append(mi.DTypes, dt.String())
			}
			op.Inputs = append(op.Inputs, mi)
		}
		for _, a := range d.Attrs {
			op.Attrs = append(op.Attrs, ManifestAttr{Name: a.Name, Kind: a.Kind.String(), Default: jsonDefault(a.Default),
				Required: a.Required, Enum: a.Enum, Doc: a.Doc})
		}
		for _, dev := range devs {
			b, err := BackendFor(dev)
			if err == nil && (d.View != nil || d.Compose != nil || b.Kernel(d.Name) != nil) {
				op.Backends = append(op.Backends, dev.Kind)
			}
		}
		m.Ops = append(m.Ops, op)
	}
	return m
}

func jsonDefault(v any) any {
	switch x := v.(type) {
	case DType:
		return x.String()
	case float64:
		if math.IsInf(x, 1) {
			return "inf"
		} else if math.IsInf(x, -1) {
			return "-inf"
		} else if math.IsNaN(x) {
			return "nan"
		}
	}
	return v
}

func buildCommit() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return ""
	}
	for _, s := range info.Settings {
		if s.Key == "vcs.revision" {
			return s.Value
		}
	}
	return ""
}
