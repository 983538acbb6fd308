// Loss kernels. Kind "point": one thread per element of the broadcast shape
// computing V0 (and V1) from x0, x1, ... read through their strides. Kind
// "class": one thread per row of C classes of an [N, C, S] input (slots: 0
// smoothing, 1 1-smoothing, 2 smoothing/C, 4 C, 5 S, 6 ignore_index; the
// operands are described over the input's shape, so row r's class c is at
// flat index (r/S*C + c)*S + r%S). With Reduce, each workgroup writes its
// (loss, divisor) sums to partials, in a fixed order; kind "finish" then
// sums the partials (slot 0: how many) in one workgroup. Reductions run in
// f32 as trees, so a result never depends on timing.
{{range $i, $t := .Ins}}@group(0) @binding({{add $i 1}}) var<storage, read> in{{$i}}: array<{{$t}}>;
{{end}}{{range $i, $t := .Outs}}@group(0) @binding({{add (add $i 1) (len $.Ins)}}) var<storage, read_write> out{{$i}}: array<{{$t}}>;
{{end}}
var<workgroup> lp_sa: array<f32, {{.WG}}>;
var<workgroup> lp_sb: array<f32, {{.WG}}>;

// lp_tree sums (a, b) over the workgroup; every thread must call it.
fn lp_tree(lid: u32, a: f32, b: f32) -> vec2<f32> {
	lp_sa[lid] = a;
	lp_sb[lid] = b;
	for (var w = WG / 2u; w > 0u; w >>= 1u) {
		workgroupBarrier();
		if lid < w {
			lp_sa[lid] += lp_sa[lid + w];
			lp_sb[lid] += lp_sb[lid + w];
		}
	}
	workgroupBarrier();
	return vec2<f32>(lp_sa[0], lp_sb[0]);
}

// lp_softplus_neg is log(1 + exp(-x)) without overflow.
fn lp_softplus_neg(x: f32) -> f32 {
	if is_nan(x) { return x; }
	return m_log1p(m_exp(-abs(x))) + max(-x, 0.0);
}

fn lp_sign(d: f32) -> f32 { return select(select(d, -1.0, d < 0.0), 1.0, d > 0.0); }
{{if or (eq .Kind "class") (eq .Kind "classgrad")}}
fn lp_at(r: u32, c: u32, k: u32) -> u32 {
	let s = pu(5u);
	return u32(loc((r / s * pu(4u) + c) * s + r % s, pu(9u), 10u, k));
}
fn lp_x(r: u32, c: u32) -> f32 { return in0[lp_at(r, c, {{operand 0}}u)]; }
fn lp_w(r: u32, c: u32) -> f32 {
{{- if .HasW}}
	return in{{.WIn}}[lp_at(r, c, {{operand .WIn}}u)];
{{- else}}
	return 1.0;
{{- end}}
}
{{- if .Probs}}
// lp_q is the weight q_c of -log p_c in the row's loss (probability targets).
fn lp_q(r: u32, c: u32) -> f32 { return lp_w(r, c) * (pf(1u) * in1[lp_at(r, c, {{operand 1}}u)] + pf(2u)); }
fn lp_label(r: u32) -> i32 { return -1; }
fn lp_ignored(r: u32) -> bool { return false; }
{{- else}}
fn lp_label(r: u32) -> i32 { return i32(in1[lp_at(r, 0u, {{operand 1}}u)]); }
fn lp_ignored(r: u32) -> bool { return lp_label(r) == pi(6u); }
// lp_q is the weight q_c of -log p_c in the row's loss (class targets).
fn lp_q(r: u32, c: u32) -> f32 {
	let w = lp_w(r, c);
	return pf(2u) * w + select(0.0, pf(1u) * w, i32(c) == lp_label(r));
}
{{- end}}
// lp_lse is the row's log-sum-exp; NaN wins the max, as on the CPU.
fn lp_lse(r: u32) -> f32 {
	let nc = pu(4u);
	var m = lp_x(r, 0u);
	for (var c = 1u; c < nc; c++) {
		let v = lp_x(r, c);
		if v > m || is_nan(v) { m = v; }
	}
	var sum = 0.0;
	for (var c = 0u; c < nc; c++) {
		sum += m_exp(lp_x(r, c) - m);
	}
	return m + m_log(sum);
}
// lp_den is what row r adds to the divisor of the mean.
fn lp_den(r: u32) -> f32 {
{{- if .Probs}}
	return 1.0;
{{- else}}
	if lp_ignored(r) { return 0.0; }
	return lp_w(r, u32(lp_label(r)));
{{- end}}
}
fn lp_row_loss(r: u32) -> f32 {
	if lp_ignored(r) { return 0.0; }
{{- if .NLL}}
	let y = u32(lp_label(r));
	return -lp_w(r, y) * lp_x(r, y);
{{- else}}
	let lse = lp_lse(r);
	if pf(0u) == 0.0 && !{{.Probs}} {
		let y = u32(lp_label(r));
		return -lp_w(r, y) * (lp_x(r, y) - lse);
	}
	// Every class takes part, even at zero weight, so 0*(-inf) is NaN
	// exactly where the CPU's sum over classes is.
	var loss = 0.0;
	for (var c = 0u; c < pu(4u); c++) {
		loss -= lp_q(r, c) * (lp_x(r, c) - lse);
	}
	return loss;
{{- end}}
}
{{- if eq .Kind "classgrad"}}
// lp_row_grad writes row r's gradients: up*(Q*softmax - q) for cross
// entropy (Q the sum of the q_c), and for probability targets also
// -up*w*(1-smoothing)*log_softmax; for nll_loss -up*w[y] at the target.
fn lp_row_grad(r: u32) {
	let nc = pu(4u);
	let s = pu(5u);
	let base = r / s * nc * s + r % s;
	let skip = lp_ignored(r);
	var u = in2[lp_at(r, 0u, {{operand 2}}u)];
{{- if .DIn}}
	u = u / in{{.DIn}}[1];
{{- end}}
{{- if .NLL}}
	let y = u32(lp_label(r));
	for (var c = 0u; c < nc; c++) {
		let v = select(0.0, -lp_w(r, c) * u, c == y && !skip);
		out0[base + c * s] = {{.Store}};
	}
{{- else}}
	var lse = 0.0;
	var total = 0.0;
	if !skip {
		lse = lp_lse(r);
		for (var c = 0u; c < nc; c++) {
			total += lp_q(r, c);
		}
	}
	for (var c = 0u; c < nc; c++) {
		let lp = lp_x(r, c) - lse;
		let v = select(u * (total * m_exp(lp) - lp_q(r, c)), 0.0, skip);
		out0[base + c * s] = {{.Store}};
{{- if .Probs}}
		let v1 = -u * lp_w(r, c) * pf(1u) * lp;
		out1[base + c * s] = {{.Store1}};
{{- end}}
	}
{{- end}}
}
{{- end}}
{{end}}
@compute @workgroup_size({{.WG}})
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
{{- if eq .Kind "finish"}}
	// One workgroup: thread lid sums partials lid, lid+WG, ... in order.
	var a = 0.0;
	var b = 0.0;
	for (var g = lid; g < pu(0u); g += WG) {
		a += in0[2u * g];
		b += in0[2u * g + 1u];
	}
	let s = lp_tree(lid, a, b);
	if lid == 0u {
{{- if eq .Finish "both"}}
		out0[0] = s.x;
		out0[1] = s.y;
{{- else}}
		let v = {{if eq .Finish "mean"}}s.x / s.y{{else}}s.x{{end}};
		out0[0] = {{.Store}};
{{- end}}
	}
{{- else}}
	let i = flat_id(wid, nwg, lid);
	let live = i < pu(8u);
{{- if eq .Kind "classgrad"}}
	if !live { return; }
	lp_row_grad(i);
{{- else}}
{{- if .Reduce}}
	var a = 0.0;
	var b = 0.0;
	if live {
{{- if eq .Kind "point"}}
{{- range $i, $t := .Ins}}
		let x{{$i}} = in{{$i}}[loc(i, pu(9u), 10u, {{operand $i}}u)];
{{- end}}
		a = {{.V0}};
		b = 1.0;
{{- else}}
		a = {{if .DenOnly}}0.0{{else}}lp_row_loss(i){{end}};
		b = lp_den(i);
{{- end}}
	}
	let s = lp_tree(lid, a, b);
	if lid == 0u {
		let g = wid.y * nwg.x + wid.x;
		out0[2u * g] = s.x;
		out0[2u * g + 1u] = s.y;
	}
{{- else}}
	if !live { return; }
{{- if eq .Kind "point"}}
{{- range $i, $t := .Ins}}
	let x{{$i}} = in{{$i}}[loc(i, pu(9u), 10u, {{operand $i}}u)];
{{- end}}
	let v = {{.V0}};
	out0[i] = {{.Store}};
{{- if .V1}}
	let v1 = {{.V1}};
	out1[i] = {{.Store1}};
{{- end}}
{{- else}}
	let v = lp_row_loss(i);
	out0[i] = {{.Store}};
{{- end}}
{{- end}}
{{- end}}
{{- end}}
}
