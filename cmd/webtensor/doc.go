// Command webtensor is the runtime's command line: `run` trains a demo (an
// MLP, a GCN or a diffusion model) on the best device found, `ops` prints
// the op manifest, `doctor` reports devices and versions and measures each
// device, `config` lists the settings, `op new` scaffolds an elementwise op
// from its formula, `trace` records a command's op calls as a Chrome trace
// and `flame` draws one, `auto` runs the agents that keep only measured
// wins (`auto parallel` plans data, tensor, pipeline or sequence parallelism), `ir` shows a traced graph and its passes, `plugin new` scaffolds a
// WebAssembly plugin.
package main
