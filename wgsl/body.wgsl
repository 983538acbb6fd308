// Per-element body (core.ElementBody): out0[i] = body(i), one thread per
// output element. The op writes body once; the helpers below are how it
// reads its inputs (dense, at their element offset) and the shapes, which
// live in the uniform block so one pipeline serves every shape of these
// ranks. A body that can fail binds a flag word after the output. Slots:
// 0..7 the scalar attributes, 8 the element count, 9 the output's element
// offset, 10..17 its dims; 18+9k input k's element offset, then its dims.
{{range $i, $t := .Ins}}@group(0) @binding({{add $i 1}}) var<storage, read> in{{$i}}: array<{{$t}}>;
{{end}}@group(0) @binding({{add (len .Ins) 1}}) var<storage, read_write> out0: array<{{.Out}}>;
{{if .Fails}}@group(0) @binding({{add (len .Ins) 2}}) var<storage, read_write> flag: array<atomic<u32>>;

// return fail(k); in a body: check k failed for this element (the op then
// fails with the CPU kernel's error for its inputs).
fn fail(k: u32) -> {{.OutCT}} {
	atomicOr(&flag[0], 1u << k);
	return {{.OutCT}}();
}
{{end}}
const orank: u32 = {{.Rank}}u;
fn odim(d: u32) -> u32 { return pu(10u + d); }
fn onumel() -> u32 { return pu(8u); }
{{range $i, $t := .Ins}}{{$d := operand $i}}
const rank{{$i}}: u32 = {{index $.Ranks $i}}u;
fn x{{$i}}(j: u32) -> f32 { return f32(in{{$i}}[pu({{$d}}u) + j]); }
fn x{{$i}}i(j: u32) -> i32 { return i32(in{{$i}}[pu({{$d}}u) + j]); }
fn x{{$i}}u(j: u32) -> u32 { return u32(in{{$i}}[pu({{$d}}u) + j]); }
fn x{{$i}}v(j: u32) -> {{$t}} { return in{{$i}}[pu({{$d}}u) + j]; }
fn dim{{$i}}(d: u32) -> u32 { return pu({{add $d 1}}u + d); }
fn numel{{$i}}() -> u32 {
	var n = 1u;
	for (var d = 0u; d < rank{{$i}}; d++) { n *= dim{{$i}}(d); }
	return n;
}
{{end}}
fn body(i: u32) -> {{.OutCT}} {
{{.Body}}
}

@compute @workgroup_size({{.WG}})
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
	let i = flat_id(wid, nwg, lid);
	if i >= pu(8u) { return; }
	out0[pu(9u) + i] = {{.Store}};
}
