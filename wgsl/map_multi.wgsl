// Elementwise map with several outputs: outJ[i] = EXPR_J(x0, x1, ...) for
// contiguous outputs of one shape, each input read through its own strides.
// An optimiser's step - a parameter and its state tensors - is one such
// kernel per parameter: every input is read once, every result written once.
{{range $i, $t := .Ins}}@group(0) @binding({{add $i 1}}) var<storage, read> in{{$i}}: array<{{$t}}>;
{{end}}{{range $j, $e := .Exprs}}@group(0) @binding({{add (add (len $.Ins) $j) 1}}) var<storage, read_write> out{{$j}}: array<{{$.Out}}>;
{{end}}
@compute @workgroup_size({{.WG}})
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
	let i = flat_id(wid, nwg, lid);
	if i >= pu(8u) { return; }
{{range $i, $t := .Ins}}	let x{{$i}} = in{{$i}}[{{loc $.Rank "i" "10u" (printf "%du" (operand $i)) "9u"}}];
{{end}}{{range $j, $e := .Exprs}}	out{{$j}}[i] = {{$e}};
{{end}}}
