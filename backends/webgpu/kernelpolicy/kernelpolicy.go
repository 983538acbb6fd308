// Package kernelpolicy is the JSON the WebGPU backend's kernel tuner and
// its tuning policy exchange (plugins-wasm/ABI.md, "Policies"). It imports
// nothing, so a policy module built for WebAssembly
// (plugins-wasm/policies/kernel-variant) can import it without the backend.
package kernelpolicy

// Request is what the tuner asks a policy about a workload it has not
// decided yet: the device, the op kind and shape class, the workload's
// sizes, the variants on offer and the one in force.
type Request struct {
	Device   string         `json:"device"`
	Software bool           `json:"software"`
	Kind     string         `json:"kind"`
	Class    string         `json:"class"`
	Workload map[string]int `json:"workload"`
	Variants []string       `json:"variants"`
	Current  string         `json:"current"`
}

// Reply is a policy's proposal: a variant and why.
type Reply struct {
	Variant string `json:"variant"`
	Reason  string `json:"reason"`
}
