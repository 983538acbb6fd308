// Package auto runs autonomous agents that change how webtensor runs a
// user's workload - kernel settings, a data loader's pipeline, quantised
// layers - and keep a change only when it measured better on that
// workload.
//
// An agent asks a policy (a sandboxed WebAssembly module on the plugin
// host, JSON in and JSON out) for proposals: what to change, why, and the
// gain it expects. The Framework measures each proposal A/B on the user's
// own workload (interleaved runs, medians, a rank test for confidence),
// keeps it only when it wins by the configured margin, rolls it out
// canary-first (one instance, re-measured, then the rest) and rolls it back
// on any regression. Every decision is a JSON line in the journal with the
// proposal, the measurements, the verdict and the hash of the state before
// and after, and Rollback(id) restores the exact earlier state from the
// snapshot taken before it. A policy never changes anything itself, so one
// that lies about its gain only loses its A/B test, and one that loops or
// traps is stopped by the plugin host's deadline and memory cap.
//
//	fw, err := auto.Open(dir, auto.DefaultConfig())
//	agent := auto.NewKernelAgent(fw, policy)
//	decisions, err := agent.Tune(workloads...)
//	_, err = fw.Rollback(decisions[0].ID)
//
// On a WebGPU device the kernel agent (kernel_webgpu.go) takes the hot
// tuning decisions of the device's kernel profile (a matmul's shape class,
// an elementwise launch's workgroup size), synthesises variants from the
// backend's parametrised template (tile, vector width, unrolling,
// workgroup shape), checks each against the default kernel before timing
// it (a wrong one is journaled as rejected), and measures the policy's
// picks A/B; winners go to the backend's disk cache, keyed by device
// signature, op and shape class, which later processes read without
// measuring, and the cache's decisions are a state component, so a
// rollback restores them exactly:
//
//	decisions, err := agent.TuneWebGPU(dev, workload, auto.WebGPUOptions{})
//
// The data agent (data.go) tunes a data.Loader on its samples/s, keeping
// only changes under which the measured batches hash as before:
//
//	w, err := auto.NewLoaderWorkload("train", loader, auto.LoaderOptions{})
//	report, err := auto.NewDataAgent(fw, policy).Tune(w)
//
// SDKs reach the agents through the C ABI's wt_call (auto.* targets, abi/calls_auto.go).
package auto
