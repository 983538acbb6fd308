// Discrete Fourier transforms along one axis as direct sums, one thread per
// output element: exact integer phase indices (p = f*t mod n, stepped
// without overflow) and compensated sums keep f32 accurate, and any length
// works. Input is dense [outer, l, inner] (times 2 for complex pairs) at an
// element offset. Slots: 0 outer, 1 l, 2 n, 3 inner, 4 scale, 5 sign of the
// exponent, 6 input offset, 7 bins (rfft: output bins; irfft: input bins m).
@group(0) @binding(1) var<storage, read> x: array<f32>;
@group(0) @binding(2) var<storage, read_write> y: array<{{.Out}}>;

const TAU: f32 = 6.283185307179586;

@compute @workgroup_size({{.WG}})
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
	let t = flat_id(wid, nwg, lid);
	if t >= pu(8u) { return; }
	let l = pu(1u); let n = pu(2u); let inner = pu(3u);
	let scale = pf(4u); let sgn = pf(5u); let off = pu(6u); let bins = pu(7u);
{{if eq .Mode "resize"}}
	let i = t % inner; let k = (t / inner) % n; let o = t / (inner * n);
	var v = 0.0;
	if k < l { v = x[off + (o * l + k) * inner + i]; }
	y[t] = {{call .Store "v"}};
{{else if eq .Mode "c2r"}}
	// t = (o * n + k) * inner + i: one real output sample.
	let i = t % inner; let k = (t / inner) % n; let o = t / (inner * n);
	var acc = 0.0; var c = 0.0;
	var p = 0u;
	for (var f = 0u; f < min(bins, l); f++) {
		let at = off + 2u * ((o * l + f) * inner + i);
		let th = TAU * f32(p) / f32(n);
		var term = x[at] * m_cos(th);
		if f == 0u || 2u * f == n { } else { term = 2.0 * (term - x[at + 1u] * m_sin(th)); }
		let yv = term - c; let s = acc + yv; c = (s - acc) - yv; acc = s;
		p = (p + k) % n;
	}
	y[t] = {{call .Store "acc * scale"}};
{{else}}
	// t = (o * nout + f) * inner + i: one complex output bin.
	let nout = select(n, bins, {{.Real}});
	let i = t % inner; let f = (t / inner) % nout; let o = t / (inner * nout);
	var re = 0.0; var im = 0.0; var cr = 0.0; var ci = 0.0;
	var p = 0u;
	for (var s = 0u; s < min(l, n); s++) {
		let th = sgn * TAU * f32(p) / f32(n);
		let cs = m_cos(th); let sn = m_sin(th);
		var xr = 0.0; var xi = 0.0;
		if {{.Real}} {
			xr = x[off + (o * l + s) * inner + i];
		} else {
			let at = off + 2u * ((o * l + s) * inner + i);
			xr = x[at]; xi = x[at + 1u];
		}
		let tr = xr * cs - xi * sn - cr; let nr = re + tr; cr = (nr - re) - tr; re = nr;
		let ti = xr * sn + xi * cs - ci; let ni = im + ti; ci = (ni - im) - ti; im = ni;
		p = (p + f) % n;
	}
	y[2u * t] = {{call .Store "re * scale"}};
	y[2u * t + 1u] = {{call .Store "im * scale"}};
{{end}}
}
