// Matrix factorisations, one workgroup per matrix of a batch (the batch
// index is the workgroup's): the algorithm runs in the order of
// backends/cpu/kernels_linalg_decomp.go, its vector steps split over the
// workgroup's threads and separated by barriers. Matrices are dense
// row-major f32 at element offsets (slots 10 and up, one per buffer in
// binding order). Every barrier sits in control flow that depends only on
// the uniform block and the workgroup id: a decision taken on matrix values
// (a pivot, a zero column) only selects what threads write, so the
// barriers stay uniform as WGSL requires.
//
// Slots: 0 batch, 1 n (rows m for qr), 2 columns (right-hand sides k for
// lu_solve; n for qr), 3 a flag (cholesky: upper), 4 qr's Q columns, 5
// qr's R rows.
{{if eq .Mode "lu_solve"}}
@group(0) @binding(1) var<storage, read> ma: array<f32>;
@group(0) @binding(2) var<storage, read> mb: array<f32>;
@group(0) @binding(3) var<storage, read_write> mx: array<f32>;
@group(0) @binding(4) var<storage, read_write> mw: array<f32>;
{{else if eq .Mode "lu_det"}}
@group(0) @binding(1) var<storage, read> ma: array<f32>;
@group(0) @binding(2) var<storage, read_write> msign: array<f32>;
@group(0) @binding(3) var<storage, read_write> mlog: array<f32>;
@group(0) @binding(4) var<storage, read_write> mw: array<f32>;
{{else if eq .Mode "chol"}}
@group(0) @binding(1) var<storage, read> ma: array<f32>;
@group(0) @binding(2) var<storage, read_write> ml: array<f32>;
{{else}}
@group(0) @binding(1) var<storage, read> ma: array<f32>;
@group(0) @binding(2) var<storage, read_write> mq: array<f32>;
@group(0) @binding(3) var<storage, read_write> mr: array<f32>;
@group(0) @binding(4) var<storage, read_write> mw: array<f32>;
@group(0) @binding(5) var<storage, read_write> mt: array<f32>;
{{end}}
{{if or (eq .Mode "lu_solve") (eq .Mode "lu_det")}}
// LU with partial pivoting of the copy w of a (the first largest pivot; a
// column that is zero from the diagonal down is skipped, as LAPACK's getf2
// does), the right-hand sides x (k columns) swapped and eliminated along.
// Each thread owns rows of the elimination, then (lu_solve) columns of x
// for the back substitution, which needs no barrier.
@compute @workgroup_size({{.WG}})
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
	let b = wid.y * nwg.x + wid.x;
	if b >= pu(0u) { return; }
	let n = pu(1u);
	let a0 = pu(10u) + b * n * n;
{{if eq .Mode "lu_solve"}}
	let k = pu(2u);
	let b0 = pu(11u) + b * n * k;
	let x0 = pu(12u) + b * n * k;
	let w0 = pu(13u) + b * n * n;
	for (var t = lid; t < n * k; t += WG) { mx[x0 + t] = mb[b0 + t]; }
{{else}}
	let w0 = pu(13u) + b * n * n;
{{end}}
	for (var t = lid; t < n * n; t += WG) { mw[w0 + t] = ma[a0 + t]; }
	storageBarrier();
	var swaps = 0u;
	for (var c = 0u; c < n; c++) {
		// Every thread finds the same pivot from the same values.
		var p = c;
		var best = abs(mw[w0 + c * n + c]);
		for (var i = c + 1u; i < n; i++) {
			let v = abs(mw[w0 + i * n + c]);
			if v > best { p = i; best = v; }
		}
		storageBarrier(); // the column is read everywhere before rows move
		if p != c {
			swaps++;
			for (var j = lid; j < n; j += WG) {
				let u = mw[w0 + c * n + j];
				mw[w0 + c * n + j] = mw[w0 + p * n + j];
				mw[w0 + p * n + j] = u;
			}
{{if eq .Mode "lu_solve"}}
			for (var j = lid; j < k; j += WG) {
				let u = mx[x0 + c * k + j];
				mx[x0 + c * k + j] = mx[x0 + p * k + j];
				mx[x0 + p * k + j] = u;
			}
{{end}}
		}
		storageBarrier();
		let piv = mw[w0 + c * n + c];
		if piv != 0.0 || is_nan(piv) { // WGSL comparisons with NaN are not to be trusted
			for (var i = c + 1u + lid; i < n; i += WG) {
				let l = mw[w0 + i * n + c] / piv;
				mw[w0 + i * n + c] = l;
				for (var j = c + 1u; j < n; j++) { mw[w0 + i * n + j] -= l * mw[w0 + c * n + j]; }
{{if eq .Mode "lu_solve"}}
				for (var j = 0u; j < k; j++) { mx[x0 + i * k + j] -= l * mx[x0 + c * k + j]; }
{{end}}
			}
		}
		storageBarrier();
	}
{{if eq .Mode "lu_solve"}}
	for (var j = lid; j < k; j += WG) {
		for (var cc = 0u; cc < n; cc++) {
			let c = n - 1u - cc;
			let v = mx[x0 + c * k + j] / mw[w0 + c * n + c];
			mx[x0 + c * k + j] = v;
			for (var i = 0u; i < c; i++) { mx[x0 + i * k + j] -= mw[w0 + i * n + c] * v; }
		}
	}
{{else}}
	if lid == 0u {
		var sg = select(1.0, -1.0, (swaps & 1u) == 1u);
		var lg = 0.0;
		var zero = false;
		for (var c = 0u; c < n; c++) {
			let u = mw[w0 + c * n + c];
			zero = zero || (u == 0.0 && !is_nan(u));
			sg = select(sg, -sg, u < 0.0);
			lg += log(abs(u));
		}
		msign[pu(11u) + b] = select(sg, 0.0, zero);
		mlog[pu(12u) + b] = select(lg, -f_inf(), zero);
	}
{{end}}
}
{{else if eq .Mode "chol"}}
// ch_at is where element (i, j) of L goes: itself, or its mirror for U = Lᵀ.
fn ch_at(i: u32, j: u32, n: u32) -> u32 { return select(i * n + j, j * n + i, pu(3u) != 0u); }

// Right-looking Cholesky in the output: L starts as a's lower triangle;
// step j takes the pivot's square root, scales column j (threads own rows)
// and updates the trailing lower triangle (threads own rows again).
@compute @workgroup_size({{.WG}})
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
	let b = wid.y * nwg.x + wid.x;
	if b >= pu(0u) { return; }
	let n = pu(1u);
	let a0 = pu(10u) + b * n * n;
	let l0 = pu(11u) + b * n * n;
	for (var t = lid; t < n * n; t += WG) {
		let i = t / n;
		let j = t % n;
		ml[l0 + ch_at(i, j, n)] = select(0.0, ma[a0 + t], j <= i);
	}
	storageBarrier();
	for (var j = 0u; j < n; j++) {
		let p = ml[l0 + ch_at(j, j, n)];
		// NaN when not positive definite (WGSL leaves sqrt of a negative open)
		let d = select(sqrt(p), f_nan(), p < 0.0 || is_nan(p));
		storageBarrier(); // the pivot is read everywhere before it is replaced
		if lid == 0u { ml[l0 + ch_at(j, j, n)] = d; }
		for (var i = j + 1u + lid; i < n; i += WG) { ml[l0 + ch_at(i, j, n)] = ml[l0 + ch_at(i, j, n)] / d; }
		storageBarrier();
		for (var i = j + 1u + lid; i < n; i += WG) {
			let lij = ml[l0 + ch_at(i, j, n)];
			for (var c = j + 1u; c <= i; c++) { ml[l0 + ch_at(i, c, n)] -= lij * ml[l0 + ch_at(c, j, n)]; }
		}
		storageBarrier();
	}
}
{{else}}
// Householder QR with LAPACK's reflectors (geqr2's, then orgqr's Q) in the
// copy w of a: reflector j is worked out by every thread from column j
// (its vector is stored below the diagonal, its factor in t[j]) and applied
// to the columns after it, threads owning columns; Q is the identity's
// first columns with the reflectors applied, last first.
@compute @workgroup_size({{.WG}})
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
	let b = wid.y * nwg.x + wid.x;
	if b >= pu(0u) { return; }
	let m = pu(1u);
	let n = pu(2u);
	let qc = pu(4u);
	let rr = pu(5u);
	let kk = min(m, n);
	let a0 = pu(10u) + b * m * n;
	let q0 = pu(11u) + b * m * qc;
	let r0 = pu(12u) + b * rr * n;
	let w0 = pu(13u) + b * m * n;
	let t0 = pu(14u) + b * kk;
	for (var t = lid; t < m * n; t += WG) { mw[w0 + t] = ma[a0 + t]; }
	storageBarrier();
	for (var j = 0u; j < kk; j++) {
		let alpha = mw[w0 + j * n + j];
		var ss = 0.0;
		for (var i = j + 1u; i < m; i++) { let v = mw[w0 + i * n + j]; ss += v * v; }
		let some = ss != 0.0 || is_nan(ss); // else the reflector is the identity (tau 0), as dlarfg's
		let beta = select(sqrt(alpha * alpha + ss), -sqrt(alpha * alpha + ss), alpha >= 0.0);
		let tau = select(0.0, (beta - alpha) / beta, some);
		let scale = select(1.0, 1.0 / (alpha - beta), some);
		storageBarrier(); // column j is read everywhere before it is scaled
		for (var i = j + 1u + lid; i < m; i += WG) { mw[w0 + i * n + j] *= scale; }
		if lid == 0u {
			if some { mw[w0 + j * n + j] = beta; }
			mt[t0 + j] = tau;
		}
		storageBarrier();
		for (var c = j + 1u + lid; c < n; c += WG) {
			var s = mw[w0 + j * n + c];
			for (var i = j + 1u; i < m; i++) { s += mw[w0 + i * n + j] * mw[w0 + i * n + c]; }
			s *= tau;
			mw[w0 + j * n + c] -= s;
			for (var i = j + 1u; i < m; i++) { mw[w0 + i * n + c] -= s * mw[w0 + i * n + j]; }
		}
		storageBarrier();
	}
	for (var t = lid; t < rr * n; t += WG) {
		let i = t / n;
		let c = t % n;
		mr[r0 + t] = select(0.0, mw[w0 + i * n + c], c >= i);
	}
	for (var t = lid; t < m * qc; t += WG) { mq[q0 + t] = select(0.0, 1.0, t / qc == t % qc); }
	storageBarrier();
	for (var jj = 0u; jj < kk; jj++) {
		let j = kk - 1u - jj;
		let tau = mt[t0 + j];
		for (var c = j + lid; c < qc; c += WG) {
			var s = mq[q0 + j * qc + c];
			for (var i = j + 1u; i < m; i++) { s += mw[w0 + i * n + j] * mq[q0 + i * qc + c]; }
			s *= tau;
			mq[q0 + j * qc + c] -= s;
			for (var i = j + 1u; i < m; i++) { mq[q0 + i * qc + c] -= s * mw[w0 + i * n + j]; }
		}
		storageBarrier();
	}
}
{{end}}
