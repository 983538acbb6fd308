// Batched matrix product c[z] = a[z] @ b[z] for strided, broadcast operands.
// Slots: 0 M, 1 K, 2 N, 3..6 the row/column strides of a (m, k) and b (k, n);
// the batch dims are the iteration shape (9..17) with a's and b's batch
// descriptors as operands 0 and 1. The output is contiguous [batch, M, N].
{{template "matmul_store" .}}
// The vec4 variants are in linalg_matmul_vec.wgsl.
@group(0) @binding(1) var<storage, read> a: array<{{.T}}>;
@group(0) @binding(2) var<storage, read> b: array<{{.T}}>;
fn a_at(base: i32, m: u32, k: u32) -> {{.CT}} { return {{.CT}}(a[u32(base + i32(m) * pi(3u) + i32(k) * pi(4u))]); }
fn b_at(base: i32, k: u32, n: u32) -> {{.CT}} { return {{.CT}}(b[u32(base + i32(k) * pi(5u) + i32(n) * pi(6u))]); }
{{if eq .Variant "regblock"}}
// Register-blocked: each thread owns a 4x4 block of c and keeps it in
// registers; no workgroup memory and no barriers, which software drivers
// (lavapipe, SwiftShader) run far faster than tiled kernels.
@compute @workgroup_size({{.WG}})
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
	let t = flat_id(wid, nwg, lid);
	if t >= pu(8u) { return; }
	let M = pu(0u);
	let K = pu(1u);
	let N = pu(2u);
	let tn = (N + 3u) / 4u;
	let tm = (M + 3u) / 4u;
	let z = t / (tm * tn);
	let m0 = ((t / tn) % tm) * 4u;
	let n0 = (t % tn) * 4u;
	let ab = loc(z, pu(9u), 10u, 18u);
	let bb = loc(z, pu(9u), 10u, 27u);
	c_begin(z);
	var acc: array<vec4<{{.CT}}>, 4>;
	let mm = vec4<u32>(min(m0, M - 1u), min(m0 + 1u, M - 1u), min(m0 + 2u, M - 1u), min(m0 + 3u, M - 1u));
	let nn = vec4<u32>(min(n0, N - 1u), min(n0 + 1u, N - 1u), min(n0 + 2u, N - 1u), min(n0 + 3u, N - 1u));
	for (var k = 0u; k < K; k++) {
		let bv = vec4<{{.CT}}>(b_at(bb, k, nn.x), b_at(bb, k, nn.y), b_at(bb, k, nn.z), b_at(bb, k, nn.w));
		acc[0] += a_at(ab, mm.x, k) * bv;
		acc[1] += a_at(ab, mm.y, k) * bv;
		acc[2] += a_at(ab, mm.z, k) * bv;
		acc[3] += a_at(ab, mm.w, k) * bv;
	}
	for (var i = 0u; i < 4u; i++) {
		if m0 + i >= M { break; }
		for (var j = 0u; j < 4u; j++) {
			if n0 + j >= N { break; }
			c_store(z, m0 + i, n0 + j, acc[i][j]);
		}
	}
}
{{else if eq .Variant "tiled"}}
// Tiled: a 16x16 workgroup stages 16x16 tiles of a and b in workgroup
// memory, so each value is read from global memory once per tile; real GPUs
// favour this.
var<workgroup> ta: array<array<{{.CT}}, 16>, 16>;
var<workgroup> tb: array<array<{{.CT}}, 16>, 16>;

@compute @workgroup_size(16, 16)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>) {
	let M = pu(0u);
	let K = pu(1u);
	let N = pu(2u);
	let z = wid.z;
	let m = wid.y * 16u + lid.y;
	let n = wid.x * 16u + lid.x;
	let ab = loc(z, pu(9u), 10u, 18u);
	let bb = loc(z, pu(9u), 10u, 27u);
	c_begin(z);
	var acc = {{.Zero}};
	for (var k0 = 0u; k0 < K; k0 += 16u) {
		let ka = k0 + lid.x;
		let kb = k0 + lid.y;
		ta[lid.y][lid.x] = select({{.Zero}}, a_at(ab, min(m, M - 1u), min(ka, K - 1u)), m < M && ka < K);
		tb[lid.y][lid.x] = select({{.Zero}}, b_at(bb, min(kb, K - 1u), min(n, N - 1u)), kb < K && n < N);
		workgroupBarrier();
		for (var k = 0u; k < 16u; k++) {
			acc += ta[lid.y][k] * tb[k][lid.x];
		}
		workgroupBarrier();
	}
	if m < M && n < N { c_store(z, m, n, acc); }
}
{{end}}
{{define "matmul_store"}}
// c_store writes one element of c through the epilogue: x0 is the product,
// x1.. the fused extra operands (bias, residual, ...) read at the same
// output position through their descriptors (batch strides as operands,
// the m and n strides in the descriptor's last two stride slots).
{{range .Extras}}@group(0) @binding({{.Binding}}) var<storage, read> e{{.I}}: array<f32>;
{{end}}{{if .Vec4Store}}@group(0) @binding({{.OutBinding}}) var<storage, read_write> c: array<vec4<f32>>;
{{if .Also}}@group(0) @binding({{add .OutBinding 1}}) var<storage, read_write> c2: array<vec4<f32>>;
{{end}}{{else}}@group(0) @binding({{.OutBinding}}) var<storage, read_write> c: array<{{.Out}}>;
{{if .Also}}@group(0) @binding({{add .OutBinding 1}}) var<storage, read_write> c2: array<f32>;
{{end}}{{end}}{{if .ColSum}}@group(0) @binding({{.ColSumBinding}}) var<storage, read_write> cs: array<vec4<f32>>;
{{end}}var<private> cb: i32;
{{range .Extras}}var<private> eb{{.I}}: i32;
{{end}}
// Extra operand I is read at row m, column n through its descriptor at
// Slot; an operand broadcast along rows or columns (a bias: Rows false)
// leaves that term out, so the address is the same for every row.
// c_begin finds each extra operand's offset for batch entry z, once per
// thread: through loc, whose loop runs on a rank read from the uniform
// block, it was the cost of an epilogue on a software driver (a bias add
// in the store of a 4000x64x64 product: 1.7 ms of 5.6, against 0.1 ms
// hoisted).
// c itself is found the same way, through its descriptor at OutSlot (its
// batch strides, then its row stride at +7; its columns are contiguous),
// so a product can be stored into a view: attention writes its heads
// straight into [batch, L, heads, E] memory.
fn c_begin(z: u32) {
	cb = loc(z, pu(9u), 10u, {{.OutSlot}}u);
{{range .Extras}}	eb{{.I}} = loc(z, pu(9u), 10u, {{.Slot}}u);
{{end}}}
{{if .Vec4Store}}
// c_epi4 is the epilogue of the four elements of c at row m, columns
// 4q..4q+3 (.Vec4Store: N is a multiple of 4 and c holds f32), c_also4
// the second tree's (FusePairs); c_put4 and c_put4_also store them as one
// vec4 each. A thread computes its whole block before it stores any of it,
// so reads that repeat across its rows (a bias) are loads the compiler can
// share, not reloads after each store.
fn c_epi4(m: u32, q: u32, x: vec4<f32>) -> vec4<f32> {
	var r: vec4<f32>;
	for (var j = 0u; j < 4u; j++) {
		let n = q * 4u + j;
		let x0 = x[j];
{{range .Extras}}		let x{{.X}} = e{{.I}}[{{template "matmul_extra_at" .}}];
{{end}}		r[j] = {{.Epilogue}};
	}
	return r;
}
fn c_put4(m: u32, q: u32, r: vec4<f32>) {
	c[u32(cb + i32(m) * pi({{.OutSlot}}u + 7u)) / 4u + q] = r;
}
{{if .Also}}fn c_also4(m: u32, q: u32, x: vec4<f32>) -> vec4<f32> {
	var r: vec4<f32>;
	for (var j = 0u; j < 4u; j++) {
		let n = q * 4u + j;
		let x0 = x[j];
{{range .Extras}}		let x{{.X}} = e{{.I}}[{{template "matmul_extra_at" .}}];
{{end}}		let v = {{.Epilogue}};
		r[j] = {{.Also}};
	}
	return r;
}
fn c_put4_also(m: u32, q: u32, r: vec4<f32>) {
	c2[u32(cb + i32(m) * pi({{.OutSlot}}u + 7u)) / 4u + q] = r;
}
{{end}}{{else}}
fn c_store(z: u32, m: u32, n: u32, x0: {{.CT}}) {
{{range .Extras}}	let x{{.X}} = e{{.I}}[{{template "matmul_extra_at" .}}];
{{end}}	let v = {{.Epilogue}};
	let o = u32(cb + i32(m) * pi({{.OutSlot}}u + 7u) + i32(n));
	c[o] = {{.Store}};
{{if .Also}}	c2[o] = {{.Also}};
{{end}}}
{{end}}{{end}}
{{define "matmul_extra_at"}}u32(eb{{.I}}{{if .Rows}} + i32(m) * pi({{.Slot}}u + 7u){{end}}{{if .Cols}} + i32(n) * pi({{.Slot}}u + 8u){{end}}){{end}}
