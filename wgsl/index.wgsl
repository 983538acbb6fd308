// Indexing kernels (backends/webgpu/kernels_index*.go), one per .Kind. The
// thread space is the shape at 10.. (rank at 9); operand k is read through
// its descriptor, where the indexed axis usually has stride 0 and its real
// stride sits at slot 88+k, so the index value moves along it. Slots 0..7
// hold the axis, loop counts and flags of each kind; 64+d bounds the
// coordinates that have a source (sx_inside).
//   take     out0[i] = in0 at its descriptor + w * stride, w = in1[i]
//            (negatives wrapped; the host has checked the range)
//   scatter  out0[i] = in0[i] combined with every in2[j] whose index in1[j]
//            names i: one thread per output element loops over the
//            candidates along the axis, so no atomics and a fixed order
//   extgrad_x, extgrad_src  the two gradients of scatter amax/amin
//   onehot   out0[i] = 1 where in0[i / C] == i % C
//   count, scan, compact, nonzero, unmask  stream compaction for the
//            dynamic ops: blocks count their set flags, one thread turns
//            the counts into offsets, then each block writes its part
{{range $i, $t := .Ins}}@group(0) @binding({{add $i 1}}) var<storage, read> in{{$i}}: array<{{$t}}>;
{{end}}{{range $i, $t := .Outs}}@group(0) @binding({{add (add $i 1) (len $.Ins)}}) var<storage, read_write> out{{$i}}: array<{{$t}}>;
{{end}}
// sx_coord is coordinate d of the row-major index i over the shape at 10...
fn sx_coord(i: u32, d: u32) -> u32 {
	var rem = i;
	var k = pu(9u);
	loop {
		if k == 0u { break; }
		k -= 1u;
		if k == d { return rem % pu(10u + k); }
		rem /= pu(10u + k);
	}
	return 0u;
}

// sx_inside reports whether every coordinate of i is below its bound at
// 64..: scatter sources exist only where the index tensor reaches.
fn sx_inside(i: u32) -> bool {
	var rem = i;
	var k = pu(9u);
	loop {
		if k == 0u { break; }
		k -= 1u;
		if rem % pu(10u + k) >= pu(64u + k) { return false; }
		rem /= pu(10u + k);
	}
	return true;
}

fn sx_eq(a: f32, b: f32) -> f32 { return select(0.0, 1.0, a == b); }
{{if .Checked}}
// ck_add and ck_mul are + and * on the i32 that holds an i64: a result
// past it marks out1, a flag the host reads to fail the op.
fn ck_add(a: i32, b: i32) -> i32 {
	let r = a + b;
	if i_add_ovf(a, b, r) { out1[0] = 1u; }
	return r;
}
fn ck_mul(a: i32, b: i32) -> i32 {
	if i_mul_ovf(a, b) { out1[0] = 1u; }
	return a * b;
}
{{end}}
@compute @workgroup_size({{.WG}})
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
	let i = flat_id(wid, nwg, lid);
	if i >= pu(8u) { return; }
	let rank = pu(9u);
{{if eq .Kind "take"}}	let n = pi(1u);
	var w = i32(in1[loc(i, rank, 10u, {{operand 1}}u)]);
	w = clamp(select(w, w + n, w < 0), 0, n - 1);
	let v = in0[loc(i, rank, 10u, {{operand 0}}u) + w * pi(88u)];
	out0[i] = {{.Store}};
{{else if eq .Kind "scatter"}}	let t = i32(sx_coord(i, pu(0u)));
	var acc = in0[loc(i, rank, 10u, {{operand 0}}u)];
	var cnt = 0u;
	if sx_inside(i) {
		let ib = loc(i, rank, 10u, {{operand 1}}u);
		let sb = loc(i, rank, 10u, {{operand 2}}u);
		for (var j = 0; j < pi(1u); j += 1) {
			if i32(in1[ib + j * pi(89u)]) != t { continue; }
			let b = in2[sb + j * pi(90u)];
			if pu(2u) == 0u && cnt == 0u {
				acc = b;
			} else {
				let a = acc;
				acc = {{.Combine}};
			}
			cnt += 1u;
		}
	}
{{if .Mean}}	if cnt > 0u {
		let c = cnt + pu(2u);
		acc = {{.Mean}};
	}
{{end}}	let v = acc;
	out0[i] = {{.Store}};
{{else if eq .Kind "extgrad_x"}}	let t = i32(sx_coord(i, pu(0u)));
	let o = in4[loc(i, rank, 10u, {{operand 4}}u)];
	let self_eq = sx_eq(in1[loc(i, rank, 10u, {{operand 1}}u)], o);
	var count = self_eq;
	var hit = false;
	if sx_inside(i) {
		let ib = loc(i, rank, 10u, {{operand 2}}u);
		let sb = loc(i, rank, 10u, {{operand 3}}u);
		for (var j = 0; j < pi(1u); j += 1) {
			if i32(in2[ib + j * pi(90u)]) != t { continue; }
			hit = true;
			count += sx_eq(in3[sb + j * pi(91u)], o);
		}
	}
	var v = self_eq * (in0[loc(i, rank, 10u, {{operand 0}}u)] / count);
	if hit && pu(2u) == 0u { v = 0.0; }
	out0[i] = {{.Store}};
{{else if eq .Kind "extgrad_src"}}	var v = 0.0;
	if sx_inside(i) {
		let at = i32(sx_coord(i, pu(0u)));
		let ib = loc(i, rank, 10u, {{operand 2}}u);
		let sb = loc(i, rank, 10u, {{operand 3}}u);
		let w = i32(in2[ib + at * pi(90u)]);
		let o = in4[loc(i, rank, 10u, {{operand 4}}u) + w * pi(92u)];
		var count = sx_eq(in1[loc(i, rank, 10u, {{operand 1}}u) + w * pi(89u)], o);
		for (var j = 0; j < pi(1u); j += 1) {
			if i32(in2[ib + j * pi(90u)]) == w { count += sx_eq(in3[sb + j * pi(91u)], o); }
		}
		v = sx_eq(in3[sb + at * pi(91u)], o) * (in0[loc(i, rank, 10u, {{operand 0}}u) + w * pi(88u)] / count);
	}
	out0[i] = {{.Store}};
{{else if eq .Kind "onehot"}}	let c = pu(0u);
	out0[i] = select(0, 1, i32(in0[loc(i / c, rank, 10u, {{operand 0}}u)]) == i32(i % c));
{{else if eq .Kind "count"}}	let lo = i * pu(1u);
	let hi = min(lo + pu(1u), pu(0u));
	var c = 0u;
	for (var j = lo; j < hi; j += 1u) {
		let f = in0[loc(j, rank, 10u, {{operand 0}}u)];
		if {{.Flag}} { c += 1u; }
	}
	out0[i] = c;
{{else if eq .Kind "scan"}}	var s = 0u;
	for (var k = 0u; k < pu(2u); k += 1u) {
		out0[k] = s;
		s += in0[k];
	}
	out0[pu(2u)] = s;
{{else if eq .Kind "compact"}}	let lo = i * pu(1u);
	let hi = min(lo + pu(1u), pu(0u));
	var pos = in1[i];
	for (var j = lo; j < hi; j += 1u) {
		let f = in0[loc(j, rank, 10u, {{operand 0}}u)];
		if {{.Flag}} {
			let v = in2[loc(j, rank, 10u, {{operand 2}}u)];
			out0[pos] = {{.Store}};
			pos += 1u;
		}
	}
{{else if eq .Kind "nonzero"}}	let lo = i * pu(1u);
	let hi = min(lo + pu(1u), pu(0u));
	var pos = in1[i];
	for (var j = lo; j < hi; j += 1u) {
		let f = in0[loc(j, rank, 10u, {{operand 0}}u)];
		if {{.Flag}} {
			var rem = j;
			var k = rank;
			loop {
				if k == 0u { break; }
				k -= 1u;
				out0[pos * rank + k] = i32(rem % pu(10u + k));
				rem /= pu(10u + k);
			}
			pos += 1u;
		}
	}
{{else if eq .Kind "unmask"}}	let lo = i * pu(1u);
	let hi = min(lo + pu(1u), pu(0u));
	var pos = in1[i];
	for (var j = lo; j < hi; j += 1u) {
		let f = in0[loc(j, rank, 10u, {{operand 0}}u)];
		var v = {{.Zero}};
		if {{.Flag}} {
			v = in2[pi(3u) + i32(pos) * pi(4u)];
			pos += 1u;
		}
		out0[j] = {{.Store}};
	}
{{end}}}
