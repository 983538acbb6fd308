// Synthesised matmul variants (the auto-kernel agent's; backends/webgpu/
// gpu_synth.go names and checks them): one register-blocked kernel,
// parametrised by the block of c each thread owns (.TM rows by .TNQ vectors
// of .V columns), how many .V-long chunks of K one loop iteration reads
// (.KU, the unrolling), and the workgroup's shape (.WX threads along c's
// columns, .WY along its rows). Operands as the vec4 NN kernels: f32 a and
// b with contiguous, aligned rows (a's k-rows, b's n-rows); slots as in
// linalg_matmul.wgsl. No workgroup memory and no barriers: the kernels
// software drivers run fastest (DESIGN.md, Execution).
@group(0) @binding(1) var<storage, read> a: array<{{.VT}}>;
@group(0) @binding(2) var<storage, read> b: array<{{.VT}}>;
{{template "matmul_store" .}}
@compute @workgroup_size({{.WX}}, {{.WY}})
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>) {
	let M = pu(0u);
	let K = pu(1u);
	let N = pu(2u);
	let nq = N / {{.V}}u; // vector columns of c
	let z = wid.z;
	let qb = (wid.x * {{.WX}}u + lid.x) * {{.TNQ}}u;
	let m0 = (wid.y * {{.WY}}u + lid.y) * {{.TM}}u;
	if qb >= nq || m0 >= M { return; }
	let sam = pu(3u) / {{.V}}u; // a's row stride in vectors
	let sbk = pu(5u) / {{.V}}u; // b's row stride in vectors
	let ab = u32(loc(z, pu(9u), 10u, 18u)) / {{.V}}u;
	let bb = u32(loc(z, pu(9u), 10u, 27u)) / {{.V}}u;
{{range .Cols}}	let q{{.}} = min(qb + {{.}}u, nq - 1u);
{{end}}{{range .Rows}}	let r{{.}} = ab + min(m0 + {{.}}u, M - 1u) * sam;
{{end}}{{range $i := .Rows}}{{range $j := $.Cols}}	var c{{$i}}_{{$j}} = {{$.VT}}(0.0);
{{end}}{{end}}	let steps = K / {{.KStep}}u;
	for (var s = 0u; s < steps; s++) {
		let k0 = s * {{.KU}}u; // in chunks of {{.V}}
		let bk = bb + s * {{.KStep}}u * sbk;
{{range $u := .Us}}{{range $e := $.Es}}{{range $j := $.Cols}}		let b{{$u}}_{{$e}}_{{$j}} = b[bk + {{add (mul $u $.V) $e}}u * sbk + q{{$j}}];
{{end}}{{end}}{{range $i := $.Rows}}		let a{{$i}}_{{$u}} = a[r{{$i}} + k0 + {{$u}}u];
{{range $j := $.Cols}}		c{{$i}}_{{$j}} += {{range $e := $.Es}}{{if $e}} + {{end}}a{{$i}}_{{$u}}{{index $.Comp $e}} * b{{$u}}_{{$e}}_{{$j}}{{end}};
{{end}}{{end}}{{end}}	}
{{if .Tail}}	// The chunks of K that a whole unrolled step does not cover.
	for (var k4 = steps * {{.KU}}u; k4 < K / {{.V}}u; k4++) {
		let bk = bb + k4 * {{.V}}u * sbk;
{{range $e := .Es}}{{range $j := $.Cols}}		let t{{$e}}_{{$j}} = b[bk + {{$e}}u * sbk + q{{$j}}];
{{end}}{{end}}{{range $i := .Rows}}		let x{{$i}} = a[r{{$i}} + k4];
{{range $j := $.Cols}}		c{{$i}}_{{$j}} += {{range $e := $.Es}}{{if $e}} + {{end}}x{{$i}}{{index $.Comp $e}} * t{{$e}}_{{$j}}{{end}};
{{end}}{{end}}	}
{{end}}	c_begin(z);
{{if .Vec4Store}}{{range $i := .Rows}}{{range $j := $.Cols}}	let e{{$i}}_{{$j}} = c_epi4(min(m0 + {{$i}}u, M - 1u), q{{$j}}, c{{$i}}_{{$j}});
{{if $.Also}}	let f{{$i}}_{{$j}} = c_also4(min(m0 + {{$i}}u, M - 1u), q{{$j}}, c{{$i}}_{{$j}});
{{end}}{{end}}{{end}}{{range $i := .Rows}}	if m0 + {{$i}}u < M {
{{range $j := $.Cols}}		if qb + {{$j}}u < nq { c_put4(m0 + {{$i}}u, qb + {{$j}}u, e{{$i}}_{{$j}});{{if $.Also}} c_put4_also(m0 + {{$i}}u, qb + {{$j}}u, f{{$i}}_{{$j}});{{end}} }
{{end}}	}
{{end}}{{else}}{{range $i := .Rows}}	if m0 + {{$i}}u < M {
{{range $j := $.Cols}}		if qb + {{$j}}u < nq {
{{range $e := $.Es}}			c_store(z, m0 + {{$i}}u, (qb + {{$j}}u) * {{$.V}}u + {{$e}}u, c{{$i}}_{{$j}}{{index $.Comp $e}});
{{end}}		}
{{end}}	}
{{end}}{{end}}}
