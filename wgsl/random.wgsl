// Philox4x32-10 random kernels (core/numerics/philox.go): one thread per counter block,
// writing the four elements 4t..4t+3 that the block's lanes give, so every
// element is the same pure function of (seed, offset, i) as on the CPU.
// Slots: 0,1 seed lo/hi; 2,3 offset lo/hi; 4..6 per mode; 7 numel; 8 blocks.
{{if .In}}@group(0) @binding(1) var<storage, read> in0: array<{{.In}}>;
{{end}}@group(0) @binding({{if .In}}2{{else}}1{{end}}) var<storage, read_write> out0: array<{{.Out}}>;

// lp_mulhilo is the 64-bit product of a and b as (hi, lo), from 16-bit
// halves since WGSL has no 64-bit integers.
fn lp_mulhilo(a: u32, b: u32) -> vec2<u32> {
	let a0 = a & 0xffffu;
	let a1 = a >> 16u;
	let b0 = b & 0xffffu;
	let b1 = b >> 16u;
	let p01 = a0 * b1;
	let p10 = a1 * b0;
	let mid = ((a0 * b0) >> 16u) + (p01 & 0xffffu) + (p10 & 0xffffu);
	return vec2<u32>(a1 * b1 + (p01 >> 16u) + (p10 >> 16u) + (mid >> 16u), a * b);
}

fn lp_philox(key: vec2<u32>, ctr: vec4<u32>) -> vec4<u32> {
	var k = key;
	var c = ctr;
	for (var r = 0u; r < 10u; r++) {
		if r > 0u {
			k += vec2<u32>(0x9E3779B9u, 0xBB67AE85u);
		}
		let p0 = lp_mulhilo(0xD2511F53u, c.x);
		let p1 = lp_mulhilo(0xCD9E8D57u, c.z);
		c = vec4<u32>(p1.x ^ c.y ^ k.x, p1.y, p0.x ^ c.w ^ k.y, p0.y);
	}
	return c;
}

// lp_block draws block t (offset + t, with the carry into the high word)
// of one stream.
fn lp_block(t: u32, stream: u32) -> vec4<u32> {
	let lo = pu(2u) + t;
	let hi = pu(3u) + select(0u, 1u, lo < t);
	return lp_philox(vec2<u32>(pu(0u), pu(1u)), vec4<u32>(lo, hi, stream, 0u));
}

// lp_uniform24 is a draw's top 24 bits as a float in [0, 1), exact in f32.
fn lp_uniform24(bits: u32) -> f32 { return f32(bits >> 8u) * (1.0 / 16777216.0); }

// lp_log is an accurate natural log for normal positive x (fdlibm's logf
// reduction): the driver's log may be off by 2^-21 absolutely near 1, which
// Box-Muller's log(1-u) would turn into large relative errors.
fn lp_log(x: f32) -> f32 {
	var bits = bitcast<u32>(x);
	var e = i32(bits >> 23u) - 127;
	var m = bitcast<f32>((bits & 0x007fffffu) | 0x3f800000u);
	if m > 1.41421356 {
		m *= 0.5;
		e += 1;
	}
	let f = m - 1.0;
	let s = f / (2.0 + f);
	let z = s * s;
	let w = z * z;
	let t1 = w * (0.40000972152 + w * 0.24279078841);
	let t2 = z * (0.66666662693 + w * 0.28498786688);
	let hfsq = 0.5 * f * f;
	let r = s * (hfsq + t1 + t2);
	let k = f32(e);
	return k * 6.9313812256e-01 + ((f - (hfsq - r)) + k * 9.0580006145e-06);
}

// lp_cos2pi is cos(2*pi*b) for b in [0, 1): b is reduced to a multiple of a
// quarter turn exactly, then the remaining angle (|r| <= pi/4) goes through
// minimax polynomials.
fn lp_cos2pi(b: f32) -> f32 {
	let q = round(b * 4.0);
	let a = (b - q * 0.25) * 6.28318530718;
	let a2 = a * a;
	let c = 1.0 + a2 * (-0.5 + a2 * (4.16666418e-2 + a2 * (-1.38867637e-3 + a2 * 2.43904487e-5)));
	let s = a * (1.0 + a2 * (-1.66666546e-1 + a2 * (8.33216087e-3 + a2 * -1.95152959e-4)));
	switch u32(q) & 3u {
		case 0u: { return c; }
		case 1u: { return -s; }
		case 2u: { return -c; }
		default: { return s; }
	}
}

// lp_normal is Box-Muller over the draws of streams 0 and 1 (numerics.PhiloxNormal).
fn lp_normal(b0: u32, b1: u32) -> f32 {
	let u = 1.0 - lp_uniform24(b0);
	return sqrt(-2.0 * lp_log(u)) * lp_cos2pi(lp_uniform24(b1));
}

// lp_scaled is x*scale rounded about once, scale being hi + lo (pf(5),
// pf(6)), to match the CPU's float64 product: Dekker's exact product of x
// and hi plus x*lo. The halves are cut by masking the low 12 significand
// bits, not by Veltkamp's c - (c - x), which shader compilers may fold;
// hi's halves come from the host in slots 40 and 41 (past operand 1).
fn lp_scaled(x: f32) -> f32 {
	let p = x * pf(5u);
	if is_inf(p) || is_nan(p) { return p; }
	let xh = bitcast<f32>(bitcast<u32>(x) & 0xfffff000u);
	let xl = x - xh;
	let hh = pf(40u);
	let hl = pf(41u);
	let e = ((xh * hh - p) + xh * hl + xl * hh) + xl * hl;
	let t = x * pf(6u);
	var s = e + t;
	// A tie p + s must break the way the rest r of e + t says: move s one
	// of its own ulps towards r, far below p's ulp.
	let r = (e - s) + t;
	if r != 0.0 && s != 0.0 {
		let away = (r > 0.0) == (s > 0.0);
		s = bitcast<f32>(select(bitcast<u32>(s) - 1u, bitcast<u32>(s) + 1u, away));
	}
	return p + s;
}

fn lp_value(bits: u32, bits1: u32, j: u32) -> {{.Out}} {
{{- if eq .Mode "uniform"}}
	let v = f32(bits >> pu(4u)) * pf(5u);
{{- else if eq .Mode "normal"}}
	let v = lp_normal(bits, bits1);
{{- else if eq .Mode "randint"}}
	let r = select(bits % pu(5u), bits, pu(5u) == 0u);
	let v = {{.IntConv}};
{{- else if eq .Mode "bernoulli"}}
	let v = select(0.0, 1.0, lp_uniform24(bits) < in0[loc(j, pu(9u), 10u, {{operand 0}}u)]);
{{- else if eq .Mode "dropout"}}
	let x = in0[loc(j, pu(9u), 10u, {{operand 0}}u)];
	let v = select(x * 0.0, lp_scaled(x), (bits >> 8u) >= pu(4u));
{{- end}}
	return {{.Store}};
}

@compute @workgroup_size({{.WG}})
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
	let t = flat_id(wid, nwg, lid);
	if t >= pu(8u) { return; }
	let numel = pu(7u);
	let b0 = lp_block(t, 0u);
{{- if eq .Mode "normal"}}
	let b1 = lp_block(t, 1u);
{{- else}}
	let b1 = b0;
{{- end}}
	for (var lane = 0u; lane < 4u; lane++) {
		let j = 4u * t + lane;
		if j >= numel { break; }
		out0[j] = lp_value(b0[lane], b1[lane], j);
	}
}
