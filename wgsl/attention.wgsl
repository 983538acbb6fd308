// Scaled dot-product attention in one launch for short sequences: one
// workgroup per batch entry (batch shape at slots 9..17, q, k and v batch
// descriptors as operands 0..2) holds the entry's keys and values in
// workgroup memory, and each thread owns query rows: its scores, their
// softmax (torch's safe softmax: a row with every key masked gives zeros)
// and the weighted sum of values. Slots: 0 L, 1 S, 2 E, 3 Ev, 4 scale,
// 5 causal, 8 batch entries, 45..50 the row and column strides of q, k, v,
// 54.. out's batch descriptor and 63 its row stride (its columns are
// contiguous).
// S, E and Ev are fixed per pipeline.
@group(0) @binding(1) var<storage, read> in0: array<f32>;
@group(0) @binding(2) var<storage, read> in1: array<f32>;
@group(0) @binding(3) var<storage, read> in2: array<f32>;
@group(0) @binding(4) var<storage, read_write> out0: array<f32>;

var<workgroup> ks: array<f32, 2048>;
var<workgroup> vs: array<f32, 2048>;

@compute @workgroup_size({{.WG}})
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
	let bh = wid.y * nwg.x + wid.x;
	if bh >= pu(8u) { return; }
	let L = pu(0u);
	// S, E and Ev are constants of the pipeline: the loops over them unroll,
	// so the per-thread arrays live in registers (a software driver keeps a
	// dynamically indexed private array in memory, one gather per read).
	let S = {{.S}}u;
	let E = {{.E}}u;
	let Ev = {{.Ev}}u;
	let scale = pf(4u);
	let causal = pu(5u) != 0u;
	let qo = loc(bh, pu(9u), 10u, 18u);
	let ko = loc(bh, pu(9u), 10u, 27u);
	let vo = loc(bh, pu(9u), 10u, 36u);
	let oo = loc(bh, pu(9u), 10u, 54u);
	for (var i = lid; i < S * E; i += WG) {
		ks[i] = in1[u32(ko + i32(i / E) * pi(47u) + i32(i % E) * pi(48u))];
	}
	for (var i = lid; i < S * Ev; i += WG) {
		vs[i] = in2[u32(vo + i32(i / Ev) * pi(49u) + i32(i % Ev) * pi(50u))];
	}
	workgroupBarrier();
	for (var l = lid; l < L; l += WG) {
		var qv: array<f32, {{.E}}>;
		for (var e = 0u; e < E; e++) { qv[e] = in0[u32(qo + i32(l) * pi(45u) + i32(e) * pi(46u))]; }
		var sc: array<f32, {{.S}}>;
		var m = -f_inf();
		for (var j = 0u; j < S; j++) {
			var d = 0.0;
			for (var e = 0u; e < E; e++) { d += qv[e] * ks[j * E + e]; }
			var v = d * scale;
			if causal && j > l { v = -f_inf(); }
			sc[j] = v;
			if v > m || is_nan(v) { m = v; }
		}
		let o = u32(oo + i32(l) * pi(63u));
		if m == -f_inf() {
			for (var e = 0u; e < Ev; e++) { out0[o + e] = 0.0; }
			continue;
		}
		var s = 0.0;
		var s_c = 0.0;
		for (var j = 0u; j < S; j++) {
			let p = m_exp(sc[j] - m);
			sc[j] = p;
			let ky = p - s_c;
			let kt = s + ky;
			s_c = select((kt - s) - ky, 0.0, is_inf(kt));
			s = kt;
		}
		for (var j = 0u; j < S; j++) { sc[j] = sc[j] / s; }
		for (var e = 0u; e < Ev; e++) {
			var acc = 0.0;
			for (var j = 0u; j < S; j++) { acc += sc[j] * vs[j * Ev + e]; }
			out0[o + e] = acc;
		}
	}
}
