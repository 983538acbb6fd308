// Shared prelude of every kernel. Shapes, strides, offsets and scalar
// attributes live in the uniform block P as 256 u32 slots (read as u32, i32
// or f32 bits), so one pipeline serves all shapes. Slot conventions:
//   0..7   scalar attributes          8      element count n
//   9      rank r                     10..17 shape
//   18+9k  operand k: element offset, then 8 strides (in elements; 0 broadcasts)
struct Params { m: array<vec4<u32>, 64>, }
@group(0) @binding(0) var<uniform> P: Params;

const WG: u32 = {{.WG}}u;

fn pu(i: u32) -> u32 { return P.m[i >> 2u][i & 3u]; }
fn pi(i: u32) -> i32 { return bitcast<i32>(pu(i)); }
fn pf(i: u32) -> f32 { return bitcast<f32>(pu(i)); }

// flat_id linearises a 2-D grid of 1-D workgroups: the x dimension of a
// dispatch is capped at 65535 groups, so big launches spill into y.
fn flat_id(wid: vec3<u32>, nwg: vec3<u32>, lid: u32) -> u32 {
	return (wid.y * nwg.x + wid.x) * WG + lid;
}

// loc maps the row-major index i over the shape at slots [shp, shp+rank) to
// an element index of the operand described at slot d (offset, strides).
// i must lie inside the shape: what remains for the outermost dim is its
// index without a division. Integer division has no SIMD form on CPUs, so
// on a software driver it is most of an indexing's cost, and a merged
// one-dim operand (the common case) needs none.
fn loc(i: u32, rank: u32, shp: u32, d: u32) -> i32 {
	if rank == 0u { return pi(d); }
	var rem = i;
	var o = pi(d);
	var k = rank - 1u;
	loop {
		if k == 0u { break; }
		let s = pu(shp + k);
		o += i32(rem % s) * pi(d + 1u + k);
		rem /= s;
		k -= 1u;
	}
	return o + i32(rem) * pi(d + 1u);
}

// loc1..loc4 are loc for a rank fixed when the kernel is built: straight
// code, no loop. A loop whose trip count lives in the uniform block costs a
// software driver more than the arithmetic (layer norm's reads took twice
// as long through loc as through loc1).
fn loc1(i: u32, d: u32) -> i32 { return pi(d) + i32(i) * pi(d + 1u); }
fn loc2(i: u32, shp: u32, d: u32) -> i32 {
	let s1 = pu(shp + 1u);
	return pi(d) + i32(i % s1) * pi(d + 2u) + i32(i / s1) * pi(d + 1u);
}
fn loc3(i: u32, shp: u32, d: u32) -> i32 {
	let s2 = pu(shp + 2u);
	let s1 = pu(shp + 1u);
	let q = i / s2;
	return pi(d) + i32(i % s2) * pi(d + 3u) + i32(q % s1) * pi(d + 2u) + i32(q / s1) * pi(d + 1u);
}
fn loc4(i: u32, shp: u32, d: u32) -> i32 {
	let s3 = pu(shp + 3u);
	let s2 = pu(shp + 2u);
	let s1 = pu(shp + 1u);
	let q = i / s3;
	let q2 = q / s2;
	return pi(d) + i32(i % s3) * pi(d + 4u) + i32(q % s2) * pi(d + 3u) + i32(q2 % s1) * pi(d + 2u) + i32(q2 / s1) * pi(d + 1u);
}

fn is_nan(x: f32) -> bool {
	let b = bitcast<u32>(x);
	return (b & 0x7f800000u) == 0x7f800000u && (b & 0x007fffffu) != 0u;
}

fn is_inf(x: f32) -> bool {
	return (bitcast<u32>(x) & 0x7fffffffu) == 0x7f800000u;
}

// Through a var: Tint (the browser's WGSL compiler) rejects a constant
// expression whose value is NaN or infinite.
fn f_nan() -> f32 { var b = 0x7fc00000u; return bitcast<f32>(b); }
fn f_inf() -> f32 { var b = 0x7f800000u; return bitcast<f32>(b); }

// Math with the edge cases drivers leave undefined (log of 0, sqrt of a
// negative, exp overflow) pinned to IEEE results, and accurate forms of the
// functions WGSL lacks.
// m_log reads zero, sign and subnormality from the bits: drivers may flush
// subnormals to zero in arithmetic and in their builtin log (lavapipe's gave
// -inf for 1e-40), and a subnormal's bits are its mantissa m, x = m 2^-149.
fn m_log(x: f32) -> f32 {
	let b = bitcast<u32>(x);
	if is_nan(x) { return x; }
	if (b & 0x7fffffffu) == 0u { return -f_inf(); }
	if (b & 0x80000000u) != 0u { return f_nan(); }
	if is_inf(x) { return x; }
	if b < 0x00800000u { return log(f32(b)) - 103.27892990343185; }
	if x > 0.5 && x < 2.0 {
		// Near 1 the builtin is only absolutely accurate (WGSL allows
		// 2^-21): log(1 + 1e-4) came out 1e-3 relative off on lavapipe.
		// 2 atanh(t), t = (x - 1)/(x + 1), |t| < 1/3, by m_log1p's series;
		// x - 1 is exact here.
		return m_atanh_series2((x - 1.0) / (x + 1.0));
	}
	return log(x);
}
// m_atanh_series2 is 2 atanh(t) for |t| < 1/3 by its series (to t^17:
// below an ulp there), log((1 + t)/(1 - t)): the logs near 1 without the
// builtin. Odd in t, so -0 stays -0.
fn m_atanh_series2(t: f32) -> f32 {
	let z = t * t;
	return 2.0 * t * (1.0 + z * (0.33333333 + z * (0.2 + z * (0.14285714 + z * (0.11111111 +
		z * (0.09090909 + z * (0.07692308 + z * 0.06666667)))))));
}
fn m_sqrt(x: f32) -> f32 {
	if is_nan(x) || x < 0.0 { return f_nan(); }
	if is_inf(x) { return x; }
	return sqrt(x);
}
fn m_exp(x: f32) -> f32 {
	if is_nan(x) { return x; }
	if x > 88.72283 { return f_inf(); }
	if x < -103.972 { return 0.0; }
	return exp(x);
}
fn m_expm1(x: f32) -> f32 {
	if is_nan(x) { return x; }
	// x(1 + x/2), not x + x²/2, so that expm1(-0) is -0.
	if abs(x) < 1e-5 { return x * (1.0 + 0.5 * x); }
	let u = m_exp(x);
	if is_inf(u) { return u; }
	if u == 1.0 { return x; }
	let um1 = u - 1.0;
	if um1 == -1.0 { return -1.0; }
	// Kahan's (u - 1) x / log u, the log by m_log1p(u - 1) (u - 1 is exact):
	// the builtin log near 1 is only absolutely accurate (lavapipe: expm1
	// of -3e-5 was 21910 ulp off, and sinh, made of expm1, with it).
	return um1 * x / m_log1p(um1);
}
fn m_log1p(x: f32) -> f32 {
	if is_nan(x) || x < -1.0 { return f_nan(); }
	if x == -1.0 { return -f_inf(); }
	if is_inf(x) { return x; }
	if abs(x) < 0.5 {
		// 2 atanh(s), s = x / (2 + x), |s| < 1/3, by its series: the
		// builtin log near 1 is only absolutely accurate (WGSL allows
		// 2^-21), a relative error of 7e-4 at log1p(1e-3) on lavapipe,
		// which logaddexp inherits. Odd in s, so log1p(-0) is -0.
		return m_atanh_series2(x / (2.0 + x));
	}
	let u = 1.0 + x;
	// x / (u - 1) first: log(u) * x overflows past 3.8e36. m_log, not the
	// builtin: u up to 2 is still near 1.
	return m_log(u) * (x / (u - 1.0));
}
fn m_tanh(x: f32) -> f32 {
	if is_nan(x) { return x; }
	if abs(x) > 9.0 { return sign(x); }
	let e = m_expm1(2.0 * x);
	return e / (e + 2.0);
}
fn m_sigmoid(x: f32) -> f32 {
	if x >= 0.0 { return 1.0 / (1.0 + m_exp(-x)); }
	let e = m_exp(x);
	return e / (1.0 + e);
}
fn m_trig_arg(x: f32) -> bool { return is_nan(x) || is_inf(x); }
// m_sincos is sin(x) (want_cos false) or cos(x): Cephes sinf/cosf, the
// argument reduced by pi/4 to an even octant j and r in [-pi/4, pi/4], then
// minimax polynomials. Up to |x| = 8192 a three-part Cody-Waite reduction is
// exact enough (about one ulp); beyond it m_reduce_big reduces exactly. The
// builtins' accuracy is the driver's: WGSL allows 2^-11 absolute, and
// SwiftShader (the browser's software WebGPU) is that coarse, 10x the op
// tolerance, and lavapipe's has no exact reduction past |x| = 51000.
fn m_sincos(x: f32, want_cos: bool) -> f32 {
	// sin(±0) = ±0 (the polynomial of |x| would give +0), cos(±0) = 1.
	if x == 0.0 { return select(x, 1.0, want_cos); }
	let ax = abs(x);
	var j: u32;
	var r: f32;
	if ax <= 8192.0 {
		j = u32(ax * 1.27323954473516);
		var y = f32(j);
		if (j & 1u) == 1u { j += 1u; y += 1.0; }
		j = j & 7u;
		r = ((ax - y * 0.78515625) - y * 2.4187564849853515625e-4) - y * 3.77489497744594108e-8;
	} else {
		let jr = m_reduce_big(ax);
		j = bitcast<u32>(jr.x);
		r = jr.y;
	}
	let z = r * r;
	let ps = ((-1.9515295891e-4 * z + 8.3321608736e-3) * z - 1.6666654611e-1) * z * r + r;
	let pc = ((2.443315711809948e-5 * z - 1.388731625493765e-3) * z + 4.166664568298827e-2) * z * z - 0.5 * z + 1.0;
	var neg = false;
	if j > 3u { j -= 4u; neg = true; }
	let mid = j == 1u || j == 2u;
	if want_cos {
		if j > 1u { neg = !neg; }
		return select(select(pc, ps, mid), -select(pc, ps, mid), neg);
	}
	if x < 0.0 { neg = !neg; }
	return select(select(ps, pc, mid), -select(ps, pc, mid), neg);
}
// The binary digits of 4/pi, 4/pi = sum W4PI[i] 2^(-32 i).
var<private> W4PI: array<u32, 9> = array<u32, 9>(0x1u, 0x45f306dcu, 0x9c882a53u, 0xf84eafa3u, 0xea69bb81u, 0xb6c52b32u, 0x78872083u,
	0xfca2c757u, 0xbd778ac3u);
// m_reduce_big is Payne-Hanek reduction (as Go's math.trigReduce, in 32-bit
// words) of a finite ax >= 8192: ax = m 2^e with a 24-bit m, times the 96
// bits of 4/pi that matter at that exponent, leaves the octant in the top 3
// bits of the product's high word and 61 bits of fraction below it. Returns
// the even octant j (as bits) and r in [-pi/4, pi/4].
fn m_reduce_big(ax: f32) -> vec2<f32> {
	let bits = bitcast<u32>(ax);
	let m = (bits & 0x007fffffu) | 0x00800000u;
	let s = (bits >> 23u) - 121u; // x = m 2^e, e = biased - 150; s = e + 29 >= 19 here
	let d = s / 32u;
	let sh = s % 32u;
	var z: array<u32, 3>;
	for (var k = 0u; k < 3u; k++) {
		let lo_part = select(W4PI[d + k + 1u] >> (32u - sh), 0u, sh == 0u);
		z[k] = (W4PI[d + k] << sh) | lo_part;
	}
	let p2 = u_mul_wide(m, z[2]);
	let p1 = u_mul_wide(m, z[1]);
	let lo = p1.x + p2.y;
	let hi = m * z[0] + p1.y + select(0u, 1u, lo < p1.x);
	var j = hi >> 29u;
	var f_hi = (hi << 3u) | (lo >> 29u);
	var f_lo = lo << 3u;
	var sign = 1.0;
	if (j & 1u) == 1u {
		// r = (fraction - 1) pi/4: 1 - fraction negated in the integers,
		// as f32(fraction) - 1 would cancel the bits a small r needs.
		j = (j + 1u) & 7u;
		f_lo = ~f_lo + 1u;
		f_hi = ~f_hi + select(0u, 1u, f_lo == 0u);
		sign = -1.0;
	}
	var f = f32(f_hi) * 2.3283064365386963e-10 + f32(f_lo) * 5.421010862427522e-20;
	if sign < 0.0 && f_hi == 0u && f_lo == 0u { f = 1.0; } // 1 - 0 wrapped to 0
	return vec2<f32>(bitcast<f32>(j), sign * f * 0.7853981633974483);
}
// u_mul_wide is the exact 64-bit product of two u32s as (low, high) words.
fn u_mul_wide(a: u32, b: u32) -> vec2<u32> {
	let a0 = a & 0xffffu;
	let a1 = a >> 16u;
	let b0 = b & 0xffffu;
	let b1 = b >> 16u;
	let p00 = a0 * b0;
	let p01 = a0 * b1;
	let p10 = a1 * b0;
	let mid = p01 + p10;
	let lo = p00 + (mid << 16u);
	let hi = a1 * b1 + (mid >> 16u) + select(0u, 0x10000u, mid < p01) + select(0u, 1u, lo < p00);
	return vec2<u32>(lo, hi);
}
fn m_sin(x: f32) -> f32 { return m_sincos(x, false); }
fn m_cos(x: f32) -> f32 { return m_sincos(x, true); }
fn m_tan(x: f32) -> f32 { return m_sincos(x, false) / m_sincos(x, true); }
// m_erfc for x >= 0: Numerical Recipes' erfcc, relative error < 1.2e-7.
fn m_erfc_pos(z: f32) -> f32 {
	let t = 1.0 / (1.0 + 0.5 * z);
	let r = t * m_exp(-z * z - 1.26551223 + t * (1.00002368 + t * (0.37409196 + t * (0.09678418 + t * (-0.18628806 +
		t * (0.27886807 + t * (-1.13520398 + t * (1.48851587 + t * (-0.82215223 + t * 0.17087277)))))))));
	return r;
}
fn m_erf(x: f32) -> f32 {
	if is_nan(x) { return x; }
	let z = abs(x);
	if z < 0.5 {
		let x2 = x * x;
		return 1.1283791671 * x * (1.0 + x2 * (-1.0 / 3.0 + x2 * (0.1 + x2 * (-1.0 / 42.0 + x2 * (1.0 / 216.0 + x2 * (-1.0 / 1320.0))))));
	}
	if z > 4.0 { return sign(x); }
	return sign(x) * (1.0 - m_erfc_pos(z));
}
fn m_erfc(x: f32) -> f32 {
	if is_nan(x) { return x; }
	if x < 0.5 { return 1.0 - m_erf(x); }
	if x > 10.0 { return 0.0; }
	return m_erfc_pos(x);
}
// Python-style integer floor division and remainder (divisor checked nonzero by the host).
fn i_floordiv(a: i32, b: i32) -> i32 {
	let q = a / b;
	if (a % b != 0) && ((a < 0) != (b < 0)) { return q - 1; }
	return q;
}
fn i_rem(a: i32, b: i32) -> i32 {
	let r = a % b;
	if r != 0 && ((r < 0) != (b < 0)) { return r + b; }
	return r;
}
// f_fmod is C's fmod for finite a and a finite nonzero b, exact (musl's
// fmodf: the mantissas' long division in integers, one bit a step, at most
// 254 steps): a - b·trunc(a/b) in floats loses the remainder once a/b
// passes 2^24 (1 % 1e-40 came out 0). Subnormals are read from the bits.
fn f_fmod(a: f32, b: f32) -> f32 {
	let xb = bitcast<u32>(a);
	let yb = bitcast<u32>(b);
	let sx = xb & 0x80000000u;
	var ux = xb & 0x7fffffffu;
	var uy = yb & 0x7fffffffu;
	if ux <= uy {
		if ux == uy { return bitcast<f32>(sx); }
		return a;
	}
	var ex = i32(ux >> 23u);
	var ey = i32(uy >> 23u);
	// normalise to a mantissa with its leading bit at 23
	if ex == 0 {
		let lz = i32(countLeadingZeros(ux)) - 8;
		ux = ux << u32(lz);
		ex = 1 - lz;
	} else {
		ux = (ux & 0x007fffffu) | 0x00800000u;
	}
	if ey == 0 {
		let lz = i32(countLeadingZeros(uy)) - 8;
		uy = uy << u32(lz);
		ey = 1 - lz;
	} else {
		uy = (uy & 0x007fffffu) | 0x00800000u;
	}
	loop {
		if ex <= ey { break; }
		if ux >= uy {
			ux = ux - uy;
			if ux == 0u { return bitcast<f32>(sx); }
		}
		ux = ux << 1u;
		ex = ex - 1;
	}
	if ux >= uy {
		ux = ux - uy;
		if ux == 0u { return bitcast<f32>(sx); }
	}
	let lz = i32(countLeadingZeros(ux)) - 8;
	ux = ux << u32(lz);
	ex = ex - lz;
	if ex > 0 {
		ux = (ux & 0x007fffffu) | (u32(ex) << 23u);
	} else {
		ux = ux >> u32(1 - ex); // subnormal
	}
	return bitcast<f32>(ux | sx);
}
// f_rem is Python's (NumPy's) remainder: the sign of b, from the exact
// fmod; a zero takes b's sign.
fn f_rem(a: f32, b: f32) -> f32 {
	if b == 0.0 || is_inf(a) || is_nan(a) || is_nan(b) { return f_nan(); }
	var m = a;
	if !is_inf(b) { m = f_fmod(a, b); } // an infinite b leaves a as fmod's remainder
	if (bitcast<u32>(m) & 0x7fffffffu) == 0u { return bitcast<f32>(bitcast<u32>(b) & 0x80000000u); }
	if (b < 0.0) != (m < 0.0) { m = m + b; }
	return m;
}
// f_floordiv is NumPy's npy_divmod quotient, as the CPU computes it: from
// the exact truncated remainder m, (a - m)/b, less 1 where m's sign is not
// b's, so 1 // -inf is -1 (floor(1 / -inf) would be -0), and a zero
// quotient takes the sign of a/b (-0 // -1 is +0).
fn f_floordiv(a: f32, b: f32) -> f32 {
	if b == 0.0 || is_nan(a) || is_nan(b) { return floor(a / b); }
	if is_inf(a) { return f_nan(); }
	var m = a;
	if !is_inf(b) { m = f_fmod(a, b); }
	var div = (a - m) / b;
	if m != 0.0 && ((b < 0.0) != (m < 0.0)) { div = div - 1.0; }
	if div != 0.0 {
		var fd = floor(div);
		if div - fd > 0.5 { fd = fd + 1.0; }
		return fd;
	}
	return bitcast<f32>((bitcast<u32>(a) ^ bitcast<u32>(b)) & 0x80000000u);
}
fn i_pow(a0: i32, b0: i32) -> i32 {
	if b0 < 0 {
		if a0 == 1 { return 1; }
		if a0 == -1 { return select(-1, 1, b0 % 2 == 0); }
		return 0;
	}
	var r = 1;
	var a = a0;
	var b = b0;
	loop {
		if b <= 0 { break; }
		if (b & 1) == 1 { r = r * a; }
		a = a * a;
		b = b >> 1u;
	}
	return r;
}
// f_pow follows C's pow special cases. Every float past 2^24 is an even
// integer, so a negative base to a huge power is finite or infinite, not
// NaN; zeros are read from the bits (drivers may flush subnormals).
fn f_pow(a: f32, b: f32) -> f32 {
	if b == 0.0 { return 1.0; }
	if a == 1.0 { return 1.0; }
	if is_nan(a) || is_nan(b) { return f_nan(); }
	if b == 1.0 { return a; }
	if b == 2.0 { return a * a; }
	let is_int = round(b) == b;
	let odd = is_int && abs(b) < 16777216.0 && (abs(b) % 2.0) == 1.0;
	let neg_a = (bitcast<u32>(a) & 0x80000000u) != 0u;
	if (bitcast<u32>(a) & 0x7fffffffu) == 0u {
		// ±0: odd powers keep the sign, a negative power is ±inf.
		let r = select(0.0, f_inf(), b < 0.0);
		return select(r, -r, odd && neg_a);
	}
	if is_inf(b) {
		if abs(a) == 1.0 { return 1.0; }
		return select(0.0, f_inf(), (abs(a) > 1.0) == (b > 0.0));
	}
	if neg_a {
		if is_inf(a) { return select(select(0.0, -0.0, odd), select(f_inf(), -f_inf(), odd), b > 0.0); }
		if !is_int { return f_nan(); }
		let r = m_pow_pos(-a, b);
		return select(r, -r, odd);
	}
	if is_inf(a) { return select(0.0, f_inf(), b > 0.0); }
	return m_pow_pos(a, b);
}
// m_pow_pos is a^b for a finite a > 0 and a finite b: 2^y, y = b log2(a)
// carried as an f32 pair. exp(b log(a)) in f32 loses the bits of y that
// pass 2^-24 |y|, 2e-6 relative at 10^10; with the pair it is about one ulp.
fn m_pow_pos(a: f32, b: f32) -> f32 {
	let l = df_log2(a);
	let y0 = b * l.x;
	if y0 > 300.0 { return f_inf(); }
	if y0 < -300.0 { return 0.0; }
	let p = df_two_prod(b, l.x);
	let y = df_two_sum(p.x, p.y + b * l.y);
	if y.x >= 128.0 { return f_inf(); }
	if y.x < -152.0 { return 0.0; }
	let n = round(y.x);
	// 2^(y - n) = e^g, |g| <= ln2/2: Cephes expf's polynomial.
	let g = ((y.x - n) + y.y) * 0.6931471805599453;
	let q = (((((1.9875691500e-4 * g + 1.3981999507e-3) * g + 8.3334519073e-3) * g + 4.1665795894e-2) * g +
		1.6666665459e-1) * g + 5.0000001201e-1) * g * g + g + 1.0;
	let k = i32(n);
	return ldexp(ldexp(q, k / 2), k - k / 2); // in two steps: 2^k alone may not be an f32
}
// df_log2 is log2(a), a finite and > 0, as an f32 pair (hi, lo), about
// 2^-40 relative: a = 2^e m, m in [0.707, 1.414), log m = 2 atanh(s),
// s = (m - 1)/(m + 1), with s itself carried as a pair.
fn df_log2(a: f32) -> vec2<f32> {
	var bits = bitcast<u32>(a);
	var e = 0;
	if bits < 0x00800000u {
		bits = bitcast<u32>(f32(bits)); // a subnormal is its mantissa times 2^-149
		e = -149;
	}
	e += i32(bits >> 23u) - 127;
	var m = bitcast<f32>((bits & 0x007fffffu) | 0x3f800000u);
	if m > 1.4142135 {
		m = m * 0.5;
		e += 1;
	}
	let num = m - 1.0; // exact
	let den = df_two_sum(m, 1.0);
	let sh = num / den.x;
	let pr = df_two_prod(sh, den.x);
	let sl = (((num - pr.x) - pr.y) - sh * den.y) / den.x;
	let z = sh * sh;
	let t = 2.0 * sh * z * (0.33333334 + z * (0.2 + z * (0.14285715 + z * (0.11111111 + z * (0.09090909 + z * 0.07692308)))));
	// log2 m = (2 sh + 2 sl + t) log2(e), log2(e) = 1.4426950216 + 1.9259630e-8.
	let hp = df_two_prod(2.0 * sh, 1.4426950216293335);
	let lm = df_two_sum(hp.x, hp.y + (2.0 * sh) * 1.9259629911266175e-8 + (2.0 * sl + t) * 1.4426950216293335);
	let r = df_two_sum(f32(e), lm.x);
	return df_two_sum(r.x, r.y + lm.y);
}
// Error-free transforms on f32 pairs. Every product inside is exact (of
// 12-bit halves split by masking, not by Veltkamp's multiply), so a driver
// that fuses a * b + c into an fma cannot change the results.
fn df_two_sum(a: f32, b: f32) -> vec2<f32> {
	// s through an integer round trip the compiler does not see through:
	// lavapipe's NIR otherwise rewrites (a + b) - a as b, which it may for
	// floats not marked exact (and WGSL cannot mark them), zeroing the error.
	let s = bitcast<f32>(reverseBits(reverseBits(bitcast<u32>(a + b))));
	let bb = s - a;
	return vec2<f32>(s, (a - (s - bb)) + (b - bb));
}
fn df_split(a: f32) -> vec2<f32> {
	let hi = bitcast<f32>(bitcast<u32>(a) & 0xfffff000u);
	return vec2<f32>(hi, a - hi);
}
fn df_two_prod(a: f32, b: f32) -> vec2<f32> {
	let p = a * b;
	let x = df_split(a);
	let y = df_split(b);
	return vec2<f32>(p, ((x.x * y.x - p) + x.x * y.y + x.y * y.x) + x.y * y.y);
}
// Rounding to the precision of the narrow float dtypes held in f32 slots.
fn r_f16(x: f32) -> f32 { return unpack2x16float(pack2x16float(vec2<f32>(x, 0.0))).x; }
fn r_bf16(x: f32) -> f32 {
	if is_nan(x) { return x; }
	let b = bitcast<u32>(x);
	return bitcast<f32>((b + 0x7fffu + ((b >> 16u) & 1u)) & 0xffff0000u);
}
// m_atan2 is atan2 with IEEE's special cases (zeros' signs, infinities)
// and Cephes' atanf polynomial (about one ulp): drivers' builtin atan2 is
// only as accurate as WGSL asks (2^-21 absolute; lavapipe is 2e-6 relative
// off at atan2(0.66, 0.75)) and SwiftShader gets atan2(-0, 1) wrong. Zeros
// and subnormals are read from the bits, as drivers may flush subnormals.
fn m_atan2(a: f32, b: f32) -> f32 {
	if is_nan(a) || is_nan(b) { return f_nan(); }
	let ua = bitcast<u32>(a) & 0x7fffffffu;
	let ub = bitcast<u32>(b) & 0x7fffffffu;
	let neg_b = (bitcast<u32>(b) & 0x80000000u) != 0u;
	var r: f32;
	if ua == 0u {
		r = select(0.0, 3.14159265358979, neg_b);
	} else if ub == 0u {
		r = 1.5707963267948966;
	} else if is_inf(a) {
		r = select(1.5707963267948966, select(0.7853981633974483, 2.356194490192345, neg_b), is_inf(b));
	} else if is_inf(b) {
		r = select(0.0, 3.14159265358979, neg_b);
	} else {
		r = m_atan_pos(m_abs_up64(ua, ub) / m_abs_up64(ub, ua));
		if neg_b { r = 3.14159265358979 - r; }
	}
	return bitcast<f32>(bitcast<u32>(r) | (bitcast<u32>(a) & 0x80000000u));
}
// m_abs_up64 is the magnitude whose bits are u, scaled by 2^64 when it or
// the other operand's magnitude (bits v) is subnormal, so that a quotient of
// the two is right on drivers that flush subnormals in division.
fn m_abs_up64(u: u32, v: u32) -> f32 {
	if u >= 0x00800000u && v >= 0x00800000u { return bitcast<f32>(u); }
	if u < 0x00800000u { return f32(u) * 2.5849394142282115e-26; } // m 2^-149 2^64 = m 2^-85
	return bitcast<f32>(u) * 1.8446744073709552e19;
}
// m_atan_pos is Cephes' atanf for t >= 0 (inf included): reduced by
// tan(3pi/8) and tan(pi/8) to |t| <= 0.4142, then a degree-9 odd polynomial.
fn m_atan_pos(t: f32) -> f32 {
	var y0 = 0.0;
	var x = t;
	if t > 2.414213562373095 {
		y0 = 1.5707963267948966;
		x = -1.0 / t;
	} else if t > 0.41421356237309503 {
		y0 = 0.7853981633974483;
		x = (t - 1.0) / (t + 1.0);
	}
	let z = x * x;
	return y0 + ((((8.05374449538e-2 * z - 1.38776856032e-1) * z + 1.99777106478e-1) * z - 3.33329491539e-1) * z * x + x);
}
// m_sgn is torch.sgn on reals (NaN stays NaN); m_is_top says whether |x|
// is the max-norm n (NaN matches a NaN norm).
// From the bits: the builtin sign (and a select chain that the driver
// turns into it) gave sign(+0) = -0 on lavapipe.
fn m_sgn(x: f32) -> f32 {
	let b = bitcast<u32>(x);
	if is_nan(x) { return x; }
	if (b & 0x7fffffffu) == 0u { return 0.0; }
	return bitcast<f32>((b & 0x80000000u) | 0x3f800000u);
}
fn m_is_top(x: f32, n: f32) -> bool { return abs(x) == n || (is_nan(x) && is_nan(n)); }
// m_gelu_tanh_grad is d/dx of x*sigmoid(2u), u = sqrt(2/pi)(x + 0.044715x^3):
// s + 2x s(1-s) sqrt(2/pi)(1 + 3*0.044715x^2), with s = sigmoid(2u).
fn m_gelu_tanh_grad(x: f32) -> f32 {
	let s = m_sigmoid(1.5957691216 * (x + 0.044715 * x * x * x));
	return s + 2.0 * x * s * (1.0 - s) * 0.7978845608 * (1.0 + 0.134145 * x * x);
}
// Checked i32 arithmetic, for results the GPU holds in i32 for a wider
// dtype (i64): whether the exact result leaves the i32 range.
fn i_add_ovf(a: i32, b: i32, r: i32) -> bool { return ((a ^ r) & (b ^ r)) < 0; }
fn i_sub_ovf(a: i32, b: i32, r: i32) -> bool { return ((a ^ b) & (a ^ r)) < 0; }
fn i_mul_ovf(a: i32, b: i32) -> bool {
	if a == 0 || b == 0 { return false; }
	if (a == -1 && b == -2147483648) || (b == -1 && a == -2147483648) { return true; }
	return (a * b) / b != a;
}
// i_pow_ovf: whether a^n (n >= 0) leaves i32.
fn i_pow_ovf(a: i32, n: i32) -> bool {
	if n <= 0 || a == 0 || a == 1 || a == -1 { return false; }
	if n >= 32 { return true; }
	var r = 1;
	for (var k = 0; k < n; k++) {
		if i_mul_ovf(r, a) { return true; }
		r = r * a;
	}
	return false;
}
// f_pow_repeat is a^m by squaring: the product of m copies of a, for a
// reduced dim a view broadcasts m times.
fn f_pow_repeat(a: f32, m: u32) -> f32 {
	var r = 1.0;
	var b = a;
	var n = m;
	loop {
		if n == 0u { break; }
		if (n & 1u) == 1u { r = r * b; }
		n = n >> 1u;
		if n != 0u { b = b * b; }
	}
	return r;
}
// u_pow is a^n wrapping in u32, by squaring.
fn u_pow(a: u32, n: u32) -> u32 {
	var r = 1u;
	var b = a;
	var e = n;
	loop {
		if e == 0u { break; }
		if (e & 1u) == 1u { r = r * b; }
		e = e >> 1u;
		b = b * b;
	}
	return r;
}
// i_mul_wide is the exact 64-bit product of two i32s as (low, high) words.
fn i_mul_wide(a: i32, b: i32) -> vec2<u32> {
	// abs(-2^31) stays -2^31, whose bits are its magnitude
	let p = u_mul_wide(bitcast<u32>(abs(a)), bitcast<u32>(abs(b)));
	let lo = p.x;
	let hi = p.y;
	if (a < 0) != (b < 0) {
		let nlo = ~lo + 1u;
		return vec2<u32>(nlo, ~hi + select(0u, 1u, nlo == 0u));
	}
	return vec2<u32>(lo, hi);
}
