// Reductions and scans over a frame: the input's dims split into kept dims
// (shape at slots 9..17: rank, dims) and reduced dims (slots 54 count,
// 55 rank, 56..63 dims). Operand k (inputs, then the output) has a kept-dim
// descriptor at slot 64+18k and a reduced-dim descriptor at 73+18k, so any
// operand can be a strided or broadcast view. The backend supplies the body:
// in per-group mode thread o owns kept index o and loops over r; in
// per-element mode thread t owns (o, r) = (t / R, t % R); in split mode
// thread t owns part t % P (P at slot 50) of group t / P. With Flag, a
// body may call fail().
{{range $i, $t := .Ins}}@group(0) @binding({{add $i 1}}) var<storage, read> in{{$i}}: array<{{$t}}>;
{{end}}@group(0) @binding({{add (len .Ins) 1}}) var<storage, read_write> out0: array<{{.Out}}>;
{{if .Flag}}@group(0) @binding({{add (len .Ins) 2}}) var<storage, read_write> flag: array<atomic<u32>>;
// fail marks the launch failed (a result the output cannot hold); the host
// reads the flag and fails the op.
fn fail() { atomicOr(&flag[0], 1u); }
{{end}}
fn at_k(o: u32, k: u32) -> i32 { return {{loc .KRank "o" "10u" "64u + 18u * k" "9u"}}; }
fn at_r(r: u32, k: u32) -> i32 { return {{loc .RRank "r" "56u" "73u + 18u * k" "55u"}}; }

// Bodies read operands only at their thread's own group o, so each
// operand's group offset is found once per thread, not once per read.
var<private> kb: array<i32, {{add (len .Ins) 1}}>;
{{range $i, $t := .Ins}}fn v{{$i}}(o: u32, r: u32) -> {{$t}} { return in{{$i}}[u32(kb[{{$i}}] + at_r(r, {{$i}}u))]; }
{{end}}fn oat(o: u32, r: u32) -> u32 { return u32(kb[{{len .Ins}}] + at_r(r, {{len .Ins}}u)); }

@compute @workgroup_size({{.WG}})
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
	let t = flat_id(wid, nwg, lid);
	if t >= pu(8u) { return; }
	let R = pu(54u);
{{if .PerElement}}	let o = t / R;
	let r = t % R;
{{else if .Split}}	let o = t / pu(50u);
	let part = t % pu(50u);
{{else}}	let o = t;
{{end}}	for (var k = 0u; k <= {{len .Ins}}u; k++) { kb[k] = at_k(o, k); }
{{.Body}}
}
