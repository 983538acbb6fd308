// Package trace records what a run does - every op call with its device,
// input and output shapes and dtypes, bytes moved, time and the memory its
// device holds - as a Chrome trace (the Trace Event Format, which Perfetto
// and chrome://tracing open), and draws a flame graph of where the time
// went (SVG, and pprof's profile format for `go tool pprof`).
//
// A recording starts with Start (Go), wt_profile_start (the C ABI, so every
// SDK), `wt.profile(path)` (Python) or the WEBTENSOR_TRACE variable, which
// traces a whole process from its first op to its exit. Each trace carries
// the environment it ran in (versions, devices, the effective
// configuration), so one shared file says where it came from. The CLI's
// `webtensor trace` records any `webtensor` command and `webtensor flame`
// draws a trace.
//
// Times are host times. On an asynchronous device (WebGPU, CUDA) an op's
// time is its submission unless the recording syncs after each call
// (WithSync), which serialises the device so each op carries its own
// execution; kernels launched inside one op are charged to it.
package trace
