// Command kernel-variant is webtensor's default tuning policy, a
// WebAssembly module the WebGPU backend asks which kernel variant to try for
// a workload it has not seen (see plugins-wasm/ABI.md, "Policies"). Build it
// with
//
//	GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -o policy-kernel-variant.wasm .
//
// The backend times the proposal against its current choice and keeps the
// faster, so a poor rule costs one measurement, never a slowdown.
package main

import (
	"encoding/json"
	"fmt"
	"slices"

	"github.com/webtensor/webtensor/backends/webgpu/kernelpolicy"
	"github.com/webtensor/webtensor/plugins-wasm/sdk/go/wtplugin"
)

func main() {}

// Request is what the backend sends, Reply the proposal: the backend's own
// types, from its leaf package kernelpolicy.
type (
	Request = kernelpolicy.Request
	Reply   = kernelpolicy.Reply
)

func init() {
	wtplugin.Plugin("tuning", "0.1.0")
	wtplugin.RegisterPolicy(wtplugin.PolicySpec{
		Name: "kernel_variant",
		Doc:  "Proposes a kernel variant per device and workload: barrier-free register blocking on software drivers and small products, shared-memory tiles on GPUs for large ones.",
	}, decide)
}

func decide(raw json.RawMessage) (any, error) {
	var r Request
	if err := json.Unmarshal(raw, &r); err != nil {
		return nil, fmt.Errorf("request: %w", err)
	}
	if len(r.Variants) == 0 {
		return nil, fmt.Errorf("request lists no variants")
	}
	pick := func(v, why string) (any, error) {
		if !slices.Contains(r.Variants, v) {
			return Reply{Variant: r.Current, Reason: v + " is not offered; keep the current choice"}, nil
		}
		return Reply{Variant: v, Reason: why}, nil
	}
	if r.Kind != "matmul" {
		return Reply{Variant: r.Current, Reason: "no rule for " + r.Kind}, nil
	}
	w := r.Workload
	switch {
	case r.Software && slices.Contains(r.Variants, "regblock4"):
		return pick("regblock4", "software drivers run workgroup barriers as thread switches; vec4 register blocking has none and the fewest loads")
	case r.Software:
		return pick("regblock", "software drivers run workgroup barriers as thread switches; register blocking has none")
	case w["m"]*w["n"] >= 128*128 && w["k"] >= 32:
		return pick("tiled", fmt.Sprintf("a %dx%d output with k=%d reuses each tile enough to pay for shared memory", w["m"], w["n"], w["k"]))
	}
	return pick("regblock", "small products are launch-bound; register blocking has less set-up")
}
