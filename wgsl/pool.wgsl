// Pooling and resampling over planes of NCHW (or CHW) input, one thread per
// element of a contiguous result: forward kernels per output element,
// backward kernels per input-gradient element, looping over the windows
// that cover it in the CPU's order, so there are no atomics and a gradient
// is deterministic. Operand k's descriptor holds its offset and the strides
// of N, C, H and W (N's is 0 unbatched). Geometry lives past the operand
// descriptors: 64 C, 65..66 input H W, 67..68 output H W, 69..70 kernel,
// 71..72 stride, 73..74 padding, 75..76 dilation, 77 count_include_pad,
// 78 divisor_override (0: none), 79 align_corners; 80+2d and 81+2d the
// resampling rule (0 scaled, 1 identity, 2 halve) and scale of dim d.
@group(0) @binding(1) var<storage, read> in0: array<{{.T}}>;
{{if eq .Kind "max_bwd"}}@group(0) @binding(2) var<storage, read> in1: array<{{.T}}>;
@group(0) @binding(3) var<storage, read_write> out0: array<{{.Out}}>;
{{else}}@group(0) @binding(2) var<storage, read_write> out0: array<{{.Out}}>;
{{end}}
fn lp_g(i: u32) -> i32 { return pi(64u + i); }

// lp_ix is the element index of (plane, h, w) in the operand at slot d.
fn lp_ix(d: u32, plane: i32, h: i32, w: i32) -> u32 {
	let c = lp_g(0u);
	return u32(pi(d) + (plane / c) * pi(d + 1u) + (plane % c) * pi(d + 2u) + h * pi(d + 3u) + w * pi(d + 4u));
}

// lp_max_at is the first maximum of window (oh, ow) in scan order, NaN
// winning, as (h, w); (-1, -1) when the window only covers padding.
fn lp_max_at(src: u32, plane: i32, oh: i32, ow: i32) -> vec2<i32> {
	let h0 = oh * lp_g(7u) - lp_g(9u);
	let w0 = ow * lp_g(8u) - lp_g(10u);
	var best = {{.Lowest}};
	var at = vec2<i32>(-1, -1);
	for (var ki = 0; ki < lp_g(5u); ki++) {
		let h = h0 + ki * lp_g(11u);
		if h < 0 || h >= lp_g(1u) { continue; }
		for (var kj = 0; kj < lp_g(6u); kj++) {
			let w = w0 + kj * lp_g(12u);
			if w < 0 || w >= lp_g(2u) { continue; }
{{- if eq .Kind "max_bwd"}}
			let v = in1[lp_ix(src, plane, h, w)];
{{- else}}
			let v = in0[lp_ix(src, plane, h, w)];
{{- end}}
			if at.x < 0 || v > best{{if .NaN}} || is_nan(v){{end}} {
				best = v;
				at = vec2<i32>(h, w);
			}
		}
	}
	return at;
}

// lp_avg_window is avg_pool2d's clipped window of (oh, ow) as (h0, h1, w0,
// w1) and its divisor.
fn lp_avg_window(oh: i32, ow: i32, div: ptr<function, f32>) -> vec4<i32> {
	var h0 = oh * lp_g(7u) - lp_g(9u);
	var w0 = ow * lp_g(8u) - lp_g(10u);
	var h1 = min(h0 + lp_g(5u), lp_g(1u) + lp_g(9u));
	var w1 = min(w0 + lp_g(6u), lp_g(2u) + lp_g(10u));
	let padded = (h1 - h0) * (w1 - w0);
	h0 = max(h0, 0);
	w0 = max(w0, 0);
	h1 = min(h1, lp_g(1u));
	w1 = min(w1, lp_g(2u));
	if lp_g(14u) != 0 {
		*div = f32(lp_g(14u));
	} else if lp_g(13u) != 0 {
		*div = f32(padded);
	} else {
		*div = f32((h1 - h0) * (w1 - w0));
	}
	return vec4<i32>(h0, h1, w0, w1);
}

// lp_adaptive is the input range [start, end) averaged into output o.
fn lp_adaptive(o: i32, n_in: i32, n_out: i32) -> vec2<i32> {
	return vec2<i32>(o * n_in / n_out, ((o + 1) * n_in + n_out - 1) / n_out);
}

// lp_taps gives the input indices (x, y) and weights (z, w) that output
// index dst of dim d blends; nearest has one tap of weight 1 (y unused).
fn lp_taps(d: u32, dst: i32) -> vec4<f32> {
	let n_in = lp_g(1u + d);
	let rule = lp_g(16u + 2u * d);
	let scale = pf(81u + 2u * d);
{{- if .Bilinear}}
	var src = 0.0;
	if lp_g(15u) != 0 {
		src = scale * f32(dst);
	} else {
		src = max(scale * (f32(dst) + 0.5) - 0.5, 0.0);
	}
	let i0 = min(i32(floor(src)), n_in - 1);
	let w1 = min(max(src - f32(i0), 0.0), 1.0);
	let i1 = select(i0, i0 + 1, i0 < n_in - 1);
	return vec4<f32>(f32(i0), f32(i1), 1.0 - w1, w1);
{{- else}}
	var i = dst;
	if rule == 2 {
		i = dst >> 1u;
	} else if rule == 0 {
		i = min(i32(floor(f32(dst) * scale)), n_in - 1);
	}
	return vec4<f32>(f32(i), -1.0, 1.0, 0.0);
{{- end}}
}

// lp_tap_weight is the weight output index o of dim d gives input index i.
fn lp_tap_weight(t: vec4<f32>, i: i32) -> f32 {
	return select(0.0, t.z, i32(t.x) == i) + select(0.0, t.w, i32(t.y) == i);
}

// lp_first_cover is the first output index of dim d whose taps reach input
// index i or beyond (the taps grow with the output index).
fn lp_first_cover(d: u32, i: i32) -> i32 {
	var lo = 0;
	var hi = lp_g(3u + d);
	loop {
		if lo >= hi { break; }
		let mid = (lo + hi) / 2;
		let t = lp_taps(d, mid);
		if i32(max(t.x, t.y)) >= i { hi = mid; } else { lo = mid + 1; }
	}
	return lo;
}

@compute @workgroup_size({{.WG}})
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
	let id = flat_id(wid, nwg, lid);
	if id >= pu(8u) { return; }
	let i = i32(id);
{{- if or (eq .Kind "max_bwd") (eq .Kind "avg_bwd") (eq .Kind "adaptive_bwd") (eq .Kind "interp_bwd")}}
	// Per input element: (plane, h, w) of the input shape.
	let n_h = lp_g(1u);
	let n_w = lp_g(2u);
{{- else}}
	let n_h = lp_g(3u);
	let n_w = lp_g(4u);
{{- end}}
	let plane = i / (n_h * n_w);
	let h = (i / n_w) % n_h;
	let w = i % n_w;
	let src = {{operand 0}}u;
{{- if eq .Kind "max"}}
	let at = lp_max_at(src, plane, h, w);
	var v = {{.Lowest}};
	if at.x >= 0 { v = in0[lp_ix(src, plane, at.x, at.y)]; }
{{- else if eq .Kind "avg"}}
	var div = 1.0;
	let win = lp_avg_window(h, w, &div);
	var sum = 0.0;
	for (var y = win.x; y < win.y; y++) {
		for (var x = win.z; x < win.w; x++) {
			sum += in0[lp_ix(src, plane, y, x)];
		}
	}
	let v = select(0.0, sum / div, win.x < win.y && win.z < win.w);
{{- else if eq .Kind "adaptive"}}
	let rh = lp_adaptive(h, lp_g(1u), lp_g(3u));
	let rw = lp_adaptive(w, lp_g(2u), lp_g(4u));
	var sum = 0.0;
	for (var y = rh.x; y < rh.y; y++) {
		for (var x = rw.x; x < rw.y; x++) {
			sum += in0[lp_ix(src, plane, y, x)];
		}
	}
	let v = sum / f32((rh.y - rh.x) * (rw.y - rw.x));
{{- else if eq .Kind "interp"}}
	let tr = lp_taps(0u, h);
	let tc = lp_taps(1u, w);
{{- if .Bilinear}}
	var v = 0.0;
	v += tr.z * tc.z * in0[lp_ix(src, plane, i32(tr.x), i32(tc.x))];
	v += tr.z * tc.w * in0[lp_ix(src, plane, i32(tr.x), i32(tc.y))];
	v += tr.w * tc.z * in0[lp_ix(src, plane, i32(tr.y), i32(tc.x))];
	v += tr.w * tc.w * in0[lp_ix(src, plane, i32(tr.y), i32(tc.y))];
{{- else}}
	// A copy, not a weighted sum, so -0 and NaN payloads pass through.
	let v = in0[lp_ix(src, plane, i32(tr.x), i32(tc.x))];
{{- end}}
{{- else if eq .Kind "max_bwd"}}
	// The windows covering (h, w), in increasing output order (the CPU's):
	// output oh covers h when h + pad - oh * stride is a multiple of the
	// dilation below kernel * dilation. Looping over the covering range
	// rather than the kernel keeps a thread's loops short: a software
	// driver runs a loop, even one no thread of a SIMD group needs, for
	// every thread of the group (see backends/webgpu/looplimit.go).
	var v = 0.0;
	let oh_lo = max(0, (h + lp_g(9u) - (lp_g(5u) - 1) * lp_g(11u) + lp_g(7u) - 1) / lp_g(7u));
	let oh_hi = min(lp_g(3u) - 1, (h + lp_g(9u)) / lp_g(7u));
	let ow_lo = max(0, (w + lp_g(10u) - (lp_g(6u) - 1) * lp_g(12u) + lp_g(8u) - 1) / lp_g(8u));
	let ow_hi = min(lp_g(4u) - 1, (w + lp_g(10u)) / lp_g(8u));
	for (var oh = oh_lo; oh <= oh_hi; oh++) {
		if (h + lp_g(9u) - oh * lp_g(7u)) % lp_g(11u) != 0 { continue; }
		for (var ow = ow_lo; ow <= ow_hi; ow++) {
			if (w + lp_g(10u) - ow * lp_g(8u)) % lp_g(12u) != 0 { continue; }
			let at = lp_max_at({{operand 1}}u, plane, oh, ow);
			if at.x == h && at.y == w {
				v += in0[lp_ix(src, plane, oh, ow)];
			}
		}
	}
{{- else if eq .Kind "avg_bwd"}}
	var v = 0.0;
	let oh_lo = max(0, (h + lp_g(9u) - lp_g(5u) + lp_g(7u)) / lp_g(7u));
	let oh_hi = min(lp_g(3u) - 1, (h + lp_g(9u)) / lp_g(7u));
	let ow_lo = max(0, (w + lp_g(10u) - lp_g(6u) + lp_g(8u)) / lp_g(8u));
	let ow_hi = min(lp_g(4u) - 1, (w + lp_g(10u)) / lp_g(8u));
	for (var oh = oh_lo; oh <= oh_hi; oh++) {
		for (var ow = ow_lo; ow <= ow_hi; ow++) {
			var div = 1.0;
			let win = lp_avg_window(oh, ow, &div);
			if h >= win.x && h < win.y && w >= win.z && w < win.w {
				v += in0[lp_ix(src, plane, oh, ow)] / div;
			}
		}
	}
{{- else if eq .Kind "adaptive_bwd"}}
	var v = 0.0;
	let oh_hi = min(lp_g(3u) - 1, ((h + 1) * lp_g(3u) - 1) / lp_g(1u));
	let ow_hi = min(lp_g(4u) - 1, ((w + 1) * lp_g(4u) - 1) / lp_g(2u));
	for (var oh = h * lp_g(3u) / lp_g(1u); oh <= oh_hi; oh++) {
		let rh = lp_adaptive(oh, lp_g(1u), lp_g(3u));
		if h < rh.x || h >= rh.y { continue; }
		for (var ow = w * lp_g(4u) / lp_g(2u); ow <= ow_hi; ow++) {
			let rw = lp_adaptive(ow, lp_g(2u), lp_g(4u));
			if w < rw.x || w >= rw.y { continue; }
			v += in0[lp_ix(src, plane, oh, ow)] / f32((rh.y - rh.x) * (rw.y - rw.x));
		}
	}
{{- else if eq .Kind "interp_bwd"}}
	var v = 0.0;
	let ow0 = lp_first_cover(1u, w);
	for (var oh = lp_first_cover(0u, h); oh < lp_g(3u); oh++) {
		let tr = lp_taps(0u, oh);
		if i32(min(tr.x, select(tr.y, tr.x, tr.y < 0.0))) > h { break; }
		let wr = lp_tap_weight(tr, h);
		for (var ow = ow0; ow < lp_g(4u); ow++) {
			let tc = lp_taps(1u, ow);
			if i32(min(tc.x, select(tc.y, tc.x, tc.y < 0.0))) > w { break; }
			v += wr * lp_tap_weight(tc, w) * in0[lp_ix(src, plane, oh, ow)];
		}
	}
{{- end}}
	out0[id] = {{.Store}};
}
