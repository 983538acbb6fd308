// Shape copies (backends/webgpu/kernels_shape.go), one kernel per .Kind:
//   remap   out0[i] = in0 at a source coordinate found dim by dim, or the
//           fill value: flip, roll, tile, repeat_interleave, pad and the
//           slice gradient. Slots: 0 fill bits; 64+d map kind of output dim
//           d, 72+d and 80+d its parameters, 88+d the source size along it,
//           96+d the source's row-major stride for it; the source is then
//           found through its own layout: 104 rank, 105..112 shape, and the
//           descriptor of operand 0, so any view is read in place.
//   copy    out0 at descriptor 1 = in0 at descriptor 0 over the shape at
//           10..: one input's slab of a concat or stack. .Rank, the merged
//           iteration's, is built in (indexing in straight code).
//   padgrad out0[i] = the sum of the elements of g (in0, descriptor 0) that
//           a reflect, replicate or constant pad read from input element i.
//           Slots: 64+d pad before dim d, 72+d padded size, 80+d mode.
{{range $i, $t := .Ins}}@group(0) @binding({{add $i 1}}) var<storage, read> in{{$i}}: array<{{$t}}>;
{{end}}{{range $i, $t := .Outs}}@group(0) @binding({{add (add $i 1) (len $.Ins)}}) var<storage, read_write> out{{$i}}: array<{{$t}}>;
{{end}}
{{if eq .Kind "remap"}}
// sx_map is the source coordinate of output coordinate o along dim d, or
// -1 where the output takes the fill value. Kinds match sxMap* in Go.
fn sx_map(o: i32, d: u32) -> i32 {
	let a = pi(72u + d);
	let b = pi(80u + d);
	let n = pi(88u + d);
	switch pu(64u + d) {
		case 1u: { return n - 1 - o; }
		case 2u: { return (o + a) % n; }
		case 3u: { return o % n; }
		case 4u: { return o / a; }
		case 5u: {
			let t = o - a;
			return select(-1, t, t >= 0 && t < n);
		}
		case 6u: {
			let t = o - a;
			if t < 0 { return -t; }
			if t >= n { return 2 * (n - 1) - t; }
			return t;
		}
		case 7u: { return clamp(o - a, 0, n - 1); }
		case 8u: {
			let t = o - a;
			if t < 0 || t % b != 0 || t / b >= n { return -1; }
			return t / b;
		}
		default: { return o; }
	}
}
{{end}}{{if eq .Kind "padgrad"}}
// sx_pad_pick is the k-th padded coordinate (along dim d) that read input
// coordinate c, or -1 past the last: reflect has the coordinate itself and
// up to two mirror images, replicate a run at each edge.
fn sx_pad_pick(d: u32, c: i32, k: u32) -> i32 {
	let b = pi(64u + d);
	let g = pi(72u + d);
	let n = pi(10u + d);
	switch pu(80u + d) {
		case 2u: {
			var m = array<i32, 3>(c + b, -1, -1);
			var j = 1u;
			if c >= 1 && c <= b {
				m[j] = b - c;
				j += 1u;
			}
			let far = b + 2 * (n - 1) - c;
			if c <= n - 2 && far < g {
				m[j] = far;
				j += 1u;
			}
			if k >= j { return -1; }
			return m[k];
		}
		case 3u: {
			let lo = select(c + b, 0, c == 0);
			let hi = select(c + b, g - 1, c == n - 1);
			if i32(k) > hi - lo { return -1; }
			return lo + i32(k);
		}
		default: {
			let o = c + b;
			return select(-1, o, k == 0u && o >= 0 && o < g);
		}
	}
}

fn sx_pad_count(d: u32, c: i32) -> u32 {
	var k = 0u;
	loop {
		if sx_pad_pick(d, c, k) < 0 { break; }
		k += 1u;
	}
	return k;
}
{{end}}
@compute @workgroup_size({{.WG}})
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
	let i = flat_id(wid, nwg, lid);
	if i >= pu(8u) { return; }
{{if eq .Kind "remap"}}	var rem = i;
	var flat = 0u;
	var fill = false;
	var k = pu(9u);
	loop {
		if k == 0u { break; }
		k -= 1u;
		let s = pu(10u + k);
		let src = sx_map(i32(rem % s), k);
		rem /= s;
		if src < 0 {
			fill = true;
			break;
		}
		flat += u32(src) * pu(96u + k);
	}
	var v = bitcast<{{index .Outs 0}}>(pu(0u));
	if !fill { v = in0[loc(flat, pu(104u), 105u, {{operand 0}}u)]; }
	out0[i] = {{.Store}};
{{else if eq .Kind "copy"}}	let v = in0[{{loc .Rank "i" "10u" (printf "%du" (operand 0)) "9u"}}];
	out0[{{loc .Rank "i" "10u" (printf "%du" (operand 1)) "9u"}}] = {{.Store}};
{{else if eq .Kind "padgrad"}}	let rank = pu(9u);
	var co: array<i32, 8>;
	var cnt: array<u32, 8>;
	var rem = i;
	var total = 1u;
	var k = rank;
	loop {
		if k == 0u { break; }
		k -= 1u;
		let s = pu(10u + k);
		co[k] = i32(rem % s);
		rem /= s;
		cnt[k] = sx_pad_count(k, co[k]);
		total *= cnt[k];
	}
	var v = 0.0;
	for (var m = 0u; m < total; m += 1u) {
		var r = m;
		var pos = pi({{operand 0}}u);
		var d = rank;
		loop {
			if d == 0u { break; }
			d -= 1u;
			pos += sx_pad_pick(d, co[d], r % cnt[d]) * pi({{operand 0}}u + 1u + d);
			r /= cnt[d];
		}
		v += in0[pos];
	}
	out0[i] = {{.Store}};
{{end}}}
