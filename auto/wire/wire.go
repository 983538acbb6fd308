// Package wire is the JSON an auto agent and its policy exchange: the
// request (the workload's profile, the settings, earlier outcomes) and the
// reply (proposals). Package auto sends and reads it; a policy module
// built for WebAssembly (plugins-wasm/policies/auto) decodes and answers
// it. It imports nothing, so such a module can import it.
package wire

// Request is what an agent sends its policy (JSON on the wire).
type Request struct {
	Agent    string        `json:"agent"`
	Workload string        `json:"workload"`
	Device   string        `json:"device,omitempty"`
	HotOps   []HotOp       `json:"hot_ops,omitempty"`
	Layers   []LayerInfo   `json:"layers,omitempty"`
	Loader   *LoaderInfo   `json:"loader,omitempty"`
	Settings []SettingInfo `json:"settings"`
	History  []Outcome     `json:"history,omitempty"`
	Max      int           `json:"max_proposals"`
	// Kernels, from the kernel agent on a WebGPU device: each hot tuning
	// decision, the variants synthesised for it that passed their check,
	// and what each took on the decision's own launch.
	Kernels []KernelInfo `json:"kernels,omitempty"`
}

// KernelInfo is one hot kernel decision on a device ("matmul|<class>",
// "map-wg|<class>") and its screened variants, fastest first.
type KernelInfo struct {
	Setting        string          `json:"setting"` // the setting a proposal changes: "webgpu.<key>"
	Key            string          `json:"key"`
	Ops            []string        `json:"ops,omitempty"` // the ops whose launches consult it
	Share          float64         `json:"share"`         // of the profiled kernel time
	Current        string          `json:"current"`
	CurrentSeconds float64         `json:"current_seconds"`
	Candidates     []VariantTiming `json:"candidates"`
}

// VariantTiming is a variant's best time on the decision's launch.
type VariantTiming struct {
	Variant string  `json:"variant"`
	Seconds float64 `json:"seconds"`
}

// HotOp is one op's share of a profiled run.
type HotOp struct {
	Op      string  `json:"op"`
	Calls   int     `json:"calls"`
	Seconds float64 `json:"seconds"`
	Share   float64 `json:"share"`
	Bytes   int64   `json:"bytes"`
}

// LayerInfo describes a layer auto-quant may quantise.
type LayerInfo struct {
	Name   string `json:"name"`
	Params int    `json:"params"`
	Mode   string `json:"mode"`
}

// Outcome is an earlier decision the policy may learn from.
type Outcome struct {
	Change  map[string]string `json:"change"`
	Verdict string            `json:"verdict"`
	Gain    float64           `json:"gain"`
}

// Reply is a policy's answer.
type Reply struct {
	Proposals []Proposal `json:"proposals"`
}

// Proposal is one change an agent suggests, as data: the settings to set,
// in words what and why, and the relative gain the policy expects (0.2:
// 20% lower KPI). The expected gain is recorded, never trusted.
type Proposal struct {
	What         string            `json:"what"`
	Why          string            `json:"why"`
	ExpectedGain float64           `json:"expected_gain"`
	Change       map[string]string `json:"change"`
}

// LoaderInfo is what the data agent tells its policy about a loader.
type LoaderInfo struct {
	Records     int   `json:"records"`
	BatchSize   int   `json:"batch_size"`
	Batches     int   `json:"batches"` // batches a measured run reads
	RecordBytes int64 `json:"record_bytes"`
	// InMemory: the dataset holds its records decoded in memory already
	// (npy, safetensors, Parquet, tensors), so a cache would only copy.
	InMemory   bool  `json:"in_memory"`
	CacheNeed  int64 `json:"cache_need"` // bytes a cache of every record takes
	CacheFits  bool  `json:"cache_fits"` // within the loader's budget
	CacheBytes int64 `json:"cache_bytes"`
	// ReadSeconds is the median time to read one record from the dataset
	// itself (no cache, this goroutine); ReadSpread is (p90 - p10) of
	// those reads over their median: uneven records.
	ReadSeconds float64 `json:"read_seconds"`
	ReadSpread  float64 `json:"read_spread"`
	// SampleSeconds is the median seconds per sample of runs as the
	// pipeline is now (Step included).
	SampleSeconds float64 `json:"sample_seconds"`
	Step          bool    `json:"step"` // the runs include the user's step
	Cores         int     `json:"cores"`
}

// SettingInfo is what a policy is told about a setting.
type SettingInfo struct {
	Name    string   `json:"name"`
	Doc     string   `json:"doc,omitempty"`
	Current string   `json:"current"`
	Choices []string `json:"choices"`
}
