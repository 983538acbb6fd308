// eigh (cyclic two-sided Jacobi) and svd (one-sided Jacobi), one workgroup
// per matrix, in the order of backends/cpu/kernels_linalg_jacobi.go. The
// rotation of a pair is worked out by every thread from the same values
// and applied with threads owning rows; sweeps stop when one rotates
// nothing (thread 0 records the last sweep that rotated, read back with
// workgroupUniformLoad so the loop's exit stays uniform) or after slot 4's
// count. Barriers sit only in control flow that depends on the uniform
// block, the workgroup id and such uniform loads.
//
// Slots: 0 batch, 1 m, 2 n, 3 svd's left-factor columns (lc), 4 the most
// sweeps, 5 eps (f32 bits), 6 U's columns, 7 Vh's rows; 10 and up each
// buffer's element offset. The scratch buffer holds per matrix, eigh: W
// (n x n) and V (n x n); svd: W (rows x cols, the matrix or its transpose,
// tall), V and R (cols x cols: rotations, then sorted), L (rows x lc: the
// left factor) and aux (cols norms, lc "have" flags, rows residuals).
@group(0) @binding(1) var<storage, read> ma: array<f32>;
{{if eq .Mode "eigh"}}
@group(0) @binding(2) var<storage, read_write> mvals: array<f32>;
@group(0) @binding(3) var<storage, read_write> mvecs: array<f32>;
@group(0) @binding(4) var<storage, read_write> mx: array<f32>;
{{else}}
@group(0) @binding(2) var<storage, read_write> mu: array<f32>;
@group(0) @binding(3) var<storage, read_write> ms: array<f32>;
@group(0) @binding(4) var<storage, read_write> mvh: array<f32>;
@group(0) @binding(5) var<storage, read_write> mx: array<f32>;
{{end}}
var<workgroup> jr_a: array<f32, {{.WG}}>;
var<workgroup> jr_b: array<f32, {{.WG}}>;
var<workgroup> jr_g: array<f32, {{.WG}}>;
var<workgroup> jr_sweep: u32;
var<workgroup> jr_flag: u32;

// jr_rotation is t = s/c of the rotation zeroing the off-diagonal x of
// [[a, x], [x, d]]: the smaller root, 0 when theta overflows.
fn jr_rotation(a: f32, d: f32, x: f32) -> f32 {
	let theta = (d - a) / (2.0 * x);
	let t = 1.0 / (abs(theta) + sqrt(theta * theta + 1.0));
	return select(t, -t, theta < 0.0);
}

// jr_before says whether o sorts before x: smaller (larger when desc), or
// a number before NaN, so that ranks are a permutation whatever the values.
fn jr_before(o: f32, x: f32, desc: bool) -> bool {
	return select((o < x), (o > x), desc) || (!is_nan(o) && is_nan(x));
}

// jr_negligible: a NaN is never negligible (it spreads, as on the CPU);
// comparisons with NaN are not to be trusted in WGSL, hence is_nan.
fn jr_negligible(x: f32, a: f32, d: f32) -> bool {
	return !is_nan(x) && (x == 0.0 || abs(x) <= pf(5u) * sqrt(abs(a)) * sqrt(abs(d)));
}
{{if eq .Mode "eigh"}}
@compute @workgroup_size({{.WG}})
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
	let b = wid.y * nwg.x + wid.x;
	if b >= pu(0u) { return; }
	let n = pu(1u);
	let a0 = pu(10u) + b * n * n;
	let w0 = pu(13u) + b * 2u * n * n;
	let v0 = w0 + n * n;
	for (var t = lid; t < n * n; t += WG) {
		let i = t / n;
		let j = t % n;
		mx[w0 + t] = ma[a0 + max(i, j) * n + min(i, j)]; // the lower triangle, mirrored
		mx[v0 + t] = select(0.0, 1.0, i == j);
	}
	if lid == 0u { jr_sweep = 0u; }
	workgroupBarrier();
	storageBarrier();
	for (var sweep = 0u; sweep < pu(4u); sweep++) {
		for (var p = 0u; p + 1u < n; p++) {
			for (var q = p + 1u; q < n; q++) {
				let app = mx[w0 + p * n + p];
				let aqq = mx[w0 + q * n + q];
				let apq = mx[w0 + p * n + q];
				let skip = jr_negligible(apq, app, aqq);
				var t = 0.0;
				if !skip { t = jr_rotation(app, aqq, apq); }
				let c = 1.0 / sqrt(t * t + 1.0);
				let s = t * c;
				storageBarrier(); // the pair is read everywhere before it changes
				if !skip {
					for (var k = lid; k < n; k += WG) {
						if k != p && k != q {
							let akp = mx[w0 + k * n + p];
							let akq = mx[w0 + k * n + q];
							let np = c * akp - s * akq;
							let nq = s * akp + c * akq;
							mx[w0 + k * n + p] = np;
							mx[w0 + k * n + q] = nq;
							mx[w0 + p * n + k] = np;
							mx[w0 + q * n + k] = nq;
						}
						let vkp = mx[v0 + k * n + p];
						let vkq = mx[v0 + k * n + q];
						mx[v0 + k * n + p] = c * vkp - s * vkq;
						mx[v0 + k * n + q] = s * vkp + c * vkq;
					}
					if lid == 0u {
						mx[w0 + p * n + p] = app - t * apq;
						mx[w0 + q * n + q] = aqq + t * apq;
						mx[w0 + p * n + q] = 0.0;
						mx[w0 + q * n + p] = 0.0;
						jr_sweep = sweep + 1u;
					}
				}
				storageBarrier();
			}
		}
		if workgroupUniformLoad(&jr_sweep) != sweep + 1u { break; }
	}
	// Eigenvalue i goes to its rank (ascending, NaN last, ties by index), its vector
	// flipped so that the largest-magnitude element is positive.
	for (var i = lid; i < n; i += WG) {
		let lam = mx[w0 + i * n + i];
		var r = 0u;
		var best = -1.0;
		var sg = 1.0;
		for (var j = 0u; j < n; j++) {
			let o = mx[w0 + j * n + j];
			if jr_before(o, lam, false) || (!jr_before(lam, o, false) && j < i) { r++; }
			let v = mx[v0 + j * n + i];
			if abs(v) > best { best = abs(v); sg = select(1.0, -1.0, v < 0.0); }
		}
		mvals[pu(11u) + b * n + r] = lam;
		for (var j = 0u; j < n; j++) { mvecs[pu(12u) + b * n * n + j * n + r] = sg * mx[v0 + j * n + i]; }
	}
}
{{else}}
@compute @workgroup_size({{.WG}})
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
	let b = wid.y * nwg.x + wid.x;
	if b >= pu(0u) { return; }
	let m = pu(1u);
	let n = pu(2u);
	let lc = pu(3u);
	let uc = pu(6u);
	let vr = pu(7u);
	let tall = m >= n;
	let rows = max(m, n);
	let cols = min(m, n);
	let a0 = pu(10u) + b * m * n;
	let u0 = pu(11u) + b * m * uc;
	let s0 = pu(12u) + b * cols;
	let h0 = pu(13u) + b * vr * n;
	let w0 = pu(14u) + b * (rows * cols + 2u * cols * cols + rows * lc + cols + lc + rows);
	let v0 = w0 + rows * cols;
	let rt0 = v0 + cols * cols;
	let l0 = rt0 + cols * cols;
	let sig0 = l0 + rows * lc;
	let hv0 = sig0 + cols;
	let res0 = hv0 + lc;
	for (var t = lid; t < rows * cols; t += WG) {
		let i = t / cols;
		let j = t % cols;
		mx[w0 + t] = select(ma[a0 + j * n + i], ma[a0 + i * n + j], tall);
	}
	for (var t = lid; t < cols * cols; t += WG) { mx[v0 + t] = select(0.0, 1.0, t / cols == t % cols); }
	for (var t = lid; t < rows * lc; t += WG) { mx[l0 + t] = 0.0; }
	for (var t = lid; t < lc; t += WG) { mx[hv0 + t] = 0.0; }
	if lid == 0u { jr_sweep = 0u; }
	workgroupBarrier();
	storageBarrier();
	// Sweeps: threads own rows of W and V, so only the dot products (tree
	// sums over the workgroup) cross threads.
	for (var sweep = 0u; sweep < pu(4u); sweep++) {
		for (var p = 0u; p + 1u < cols; p++) {
			for (var q = p + 1u; q < cols; q++) {
				var sa = 0.0;
				var sb = 0.0;
				var sgm = 0.0;
				for (var i = lid; i < rows; i += WG) {
					let wp = mx[w0 + i * cols + p];
					let wq = mx[w0 + i * cols + q];
					sa += wp * wp;
					sb += wq * wq;
					sgm += wp * wq;
				}
				jr_a[lid] = sa;
				jr_b[lid] = sb;
				jr_g[lid] = sgm;
				workgroupBarrier();
{{range .Strides}}				if lid < {{.}}u {
					jr_a[lid] += jr_a[lid + {{.}}u];
					jr_b[lid] += jr_b[lid + {{.}}u];
					jr_g[lid] += jr_g[lid + {{.}}u];
				}
				workgroupBarrier();
{{end}}				let alpha = jr_a[0];
				let beta = jr_b[0];
				let gamma = jr_g[0];
				workgroupBarrier(); // read everywhere before the next pair's sums
				if !jr_negligible(gamma, alpha, beta) {
					let t = jr_rotation(alpha, beta, gamma);
					let c = 1.0 / sqrt(t * t + 1.0);
					let s = t * c;
					for (var i = lid; i < rows; i += WG) {
						let wp = mx[w0 + i * cols + p];
						let wq = mx[w0 + i * cols + q];
						mx[w0 + i * cols + p] = c * wp - s * wq;
						mx[w0 + i * cols + q] = s * wp + c * wq;
					}
					for (var i = lid; i < cols; i += WG) {
						let vp = mx[v0 + i * cols + p];
						let vq = mx[v0 + i * cols + q];
						mx[v0 + i * cols + p] = c * vp - s * vq;
						mx[v0 + i * cols + q] = s * vp + c * vq;
					}
					if lid == 0u && (t != 0.0 || is_nan(t)) { jr_sweep = sweep + 1u; }
				}
			}
		}
		if workgroupUniformLoad(&jr_sweep) != sweep + 1u { break; }
	}
	storageBarrier();
	for (var j = lid; j < cols; j += WG) {
		var ss = 0.0;
		for (var i = 0u; i < rows; i++) { let v = mx[w0 + i * cols + j]; ss += v * v; }
		mx[sig0 + j] = sqrt(ss);
	}
	storageBarrier();
	// Column j goes to its rank (descending, NaN last, ties by index): its norm to S,
	// its rotation column to R, and its direction to L unless it has none.
	for (var j = lid; j < cols; j += WG) {
		let sj = mx[sig0 + j];
		var r = 0u;
		for (var i = 0u; i < cols; i++) {
			let o = mx[sig0 + i];
			if jr_before(o, sj, true) || (!jr_before(sj, o, true) && i < j) { r++; }
		}
		ms[s0 + r] = sj;
		for (var i = 0u; i < cols; i++) { mx[rt0 + i * cols + r] = mx[v0 + i * cols + j]; }
		if sj != 0.0 || is_nan(sj) {
			for (var i = 0u; i < rows; i++) { mx[l0 + i * lc + r] = mx[w0 + i * cols + j] / sj; }
			mx[hv0 + r] = 1.0;
		}
	}
	storageBarrier();
	// Missing columns of L (a full factor's extra ones, or zero singular
	// values): pivoted Gram-Schmidt on the unit vectors, largest residual
	// 1 - sum of the squares of the row's entries in the columns so far.
	for (var i = lid; i < rows; i += WG) {
		var r = 1.0;
		for (var j = 0u; j < lc; j++) {
			if mx[hv0 + j] != 0.0 { r -= mx[l0 + i * lc + j] * mx[l0 + i * lc + j]; }
		}
		mx[res0 + i] = r;
	}
	storageBarrier();
	for (var c = 0u; c < lc; c++) {
		if lid == 0u { jr_flag = select(0u, 1u, mx[hv0 + c] == 0.0); }
		let need = workgroupUniformLoad(&jr_flag);
		workgroupBarrier(); // every thread has the flag before thread 0 sets the next
		if need != 0u {
			var p = 0u;
			var best = -1.0;
			for (var i = 0u; i < rows; i++) {
				let v = mx[res0 + i];
				if v > best { p = i; best = v; }
			}
			var part = 0.0;
			for (var i = lid; i < rows; i += WG) {
				var v = select(0.0, 1.0, i == p);
				for (var j = 0u; j < lc; j++) {
					if mx[hv0 + j] != 0.0 { v -= mx[l0 + p * lc + j] * mx[l0 + i * lc + j]; }
				}
				mx[l0 + i * lc + c] = v;
				part += v * v;
			}
			jr_a[lid] = part;
			workgroupBarrier();
{{range .Strides}}			if lid < {{.}}u { jr_a[lid] += jr_a[lid + {{.}}u]; }
			workgroupBarrier();
{{end}}			let nrm = sqrt(jr_a[0]);
			workgroupBarrier();
			for (var i = lid; i < rows; i += WG) {
				let v = mx[l0 + i * lc + c] / nrm;
				mx[l0 + i * lc + c] = v;
				mx[res0 + i] -= v * v;
			}
			storageBarrier();
			if lid == 0u { mx[hv0 + c] = 1.0; }
			storageBarrier();
		}
	}
	// U's columns are L's (tall) or R's (wide); each of the first cols is
	// flipped, with its partner, so that U's largest element is positive.
	for (var r = lid; r < lc; r += WG) {
		var sg = 1.0;
		if r < cols {
			var best = -1.0;
			let len = select(cols, rows, tall);
			for (var i = 0u; i < len; i++) {
				let v = select(mx[rt0 + i * cols + r], mx[l0 + i * lc + r], tall);
				if abs(v) > best { best = abs(v); sg = select(1.0, -1.0, v < 0.0); }
			}
		}
		if tall {
			for (var i = 0u; i < m; i++) { mu[u0 + i * uc + r] = sg * mx[l0 + i * lc + r]; }
			if r < cols {
				for (var j = 0u; j < n; j++) { mvh[h0 + r * n + j] = sg * mx[rt0 + j * cols + r]; }
			}
		} else {
			if r < cols {
				for (var i = 0u; i < m; i++) { mu[u0 + i * uc + r] = sg * mx[rt0 + i * cols + r]; }
			}
			for (var j = 0u; j < n; j++) { mvh[h0 + r * n + j] = sg * mx[l0 + j * lc + r]; }
		}
	}
}
{{end}}
