// Segment reductions, CSR products and affine indexing helpers: one thread
// per output element t < n, looping over its inputs in a fixed order, so
// results are deterministic (no atomics). Operand k's descriptor sits at
// slot 18+9k (offset, then strides); slots 9..17 hold a shape (rank, dims,
// the first dim set to 1) that sp_row walks.
{{range $i, $t := .Ins}}@group(0) @binding({{add $i 1}}) var<storage, read> in{{$i}}: array<{{$t}}>;
{{end}}{{range $i, $t := .Outs}}@group(0) @binding({{add $i (add (len $.Ins) 1)}}) var<storage, read_write> out{{$i}}: array<{{$t}}>;
{{end}}
// sp_at1 is element i of the 1-D operand described at slot d.
fn sp_at1(i: u32, d: u32) -> u32 { return u32(pi(d) + i32(i) * pi(d + 1u)); }
// sp_at2 is element (i, j) of the 2-D operand described at slot d.
fn sp_at2(i: u32, j: u32, d: u32) -> u32 { return u32(pi(d) + i32(i) * pi(d + 1u) + i32(j) * pi(d + 2u)); }
// sp_row is element j of row `row` of the operand described at slot d,
// whose dims after the first are those at slots 11.. (loc's first
// coordinate is always 0, so the row stride is added apart).
fn sp_row(row: u32, j: u32, d: u32) -> u32 { return u32(loc(j, pu(9u), 10u, d) + i32(row) * pi(d + 1u)); }

@compute @workgroup_size({{.WG}})
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
	let t = flat_id(wid, nwg, lid);
	if t >= pu(8u) { return; }
{{.Body}}
}
