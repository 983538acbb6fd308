// Sorting and selection over a frame (see reduce.wgsl for the slot layout):
// kept dims index the rows, the reduced dims (the axis, or every dim for
// unique) are walked by r. Unlike reduce.wgsl there may be several outputs;
// output k has descriptors as operand len(Ins)+k, read by oatk(o, r).
// Orders are the CPU's: NaN above everything and equal to itself, ties in
// index order (stable). pu(0u) = 1 sorts descending.
{{range $i, $t := .Ins}}@group(0) @binding({{add $i 1}}) var<storage, read> in{{$i}}: array<{{$t}}>;
{{end}}{{range $i, $t := .Outs}}@group(0) @binding({{add $i (add (len $.Ins) 1)}}) var<storage, read_write> out{{$i}}: array<{{$t}}>;
{{end}}
fn sp_at_k(o: u32, k: u32) -> i32 { return loc(o, pu(9u), 10u, 64u + 18u * k); }
fn sp_at_r(r: u32, k: u32) -> i32 { return loc(r, pu(55u), 56u, 73u + 18u * k); }
{{range $i, $t := .Ins}}fn v{{$i}}(o: u32, r: u32) -> {{$t}} { return in{{$i}}[u32(sp_at_k(o, {{$i}}u) + sp_at_r(r, {{$i}}u))]; }
{{end}}{{range $i, $t := .Outs}}fn oat{{$i}}(o: u32, r: u32) -> u32 { return u32(sp_at_k(o, {{add $i (len $.Ins)}}u) + sp_at_r(r, {{add $i (len $.Ins)}}u)); }
{{end}}
// sp_nan is false for integer keys, so one body serves every dtype.
fn sp_nan(a: {{.Key}}) -> bool { {{if eq .Key "f32"}}return is_nan(a);{{else}}return false;{{end}} }
// sp_less is the strict ascending order; NaN is largest.
fn sp_less(a: {{.Key}}, b: {{.Key}}) -> bool {
	if sp_nan(a) { return false; }
	if sp_nan(b) { return true; }
	return a < b;
}
// sp_tie says a and b sort as equal (every NaN ties with every NaN).
fn sp_tie(a: {{.Key}}, b: {{.Key}}) -> bool {
	if sp_nan(a) || sp_nan(b) { return sp_nan(a) && sp_nan(b); }
	return a == b;
}
// sp_before says element i (value a) precedes element j (value b) in the
// stable order: ties keep index order in both directions.
fn sp_before(a: {{.Key}}, i: u32, b: {{.Key}}, j: u32) -> bool {
	if sp_tie(a, b) { return i < j; }
	if pu(0u) != 0u { return sp_less(b, a); }
	return sp_less(a, b);
}
// sp_rank is where member r of row o lands: how many members precede it.
// The ranks of a row are a permutation, so no two threads write one slot.
fn sp_rank(o: u32, r: u32) -> u32 {
	let x = v0(o, r);
	var n = 0u;
	for (var j = 0u; j < pu(54u); j++) {
		if sp_before(v0(o, j), j, x, r) { n++; }
	}
	return n;
}

@compute @workgroup_size({{.WG}})
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
	let t = flat_id(wid, nwg, lid);
	if t >= pu(8u) { return; }
	let R = pu(54u);
{{if .PerElement}}	let o = t / R;
	let r = t % R;
{{else}}	let o = t;
{{end}}{{.Body}}
}
