// The loop-limit probe (backends/webgpu, gpu_looplimit.go): one thread counts
// the iterations a loop of pu(0u) trips runs, adding pu(1u) each time, with
// both from the uniform block so the compiler cannot fold the loop.
@group(0) @binding(1) var<storage, read_write> out0: array<u32>;

@compute @workgroup_size(1)
fn main() {
	var n = 0u;
	for (var i = 0u; i < pu(0u); i++) { n += pu(1u); }
	out0[0] = n;
}
