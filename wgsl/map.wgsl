// Elementwise map: out0[i] = EXPR(x0, x1, ...) for a contiguous output; each
// input is read through its own strides, so broadcasting and views cost no
// copy. The backend supplies the expression and any helper functions, and
// may supply guards: statements over the inputs and the result res that
// mark the launch failed in the flag, one bit per kind of failure.
{{range $i, $t := .Ins}}@group(0) @binding({{add $i 1}}) var<storage, read> in{{$i}}: array<{{$t}}>;
{{end}}@group(0) @binding({{add (len .Ins) 1}}) var<storage, read_write> out0: array<{{.Out}}>;
{{if .Guard}}@group(0) @binding({{add (len .Ins) 2}}) var<storage, read_write> flag: array<atomic<u32>>;
{{end}}
{{.Helpers}}

@compute @workgroup_size({{.WG}})
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
	let i = flat_id(wid, nwg, lid);
	if i >= pu(8u) { return; }
{{range $i, $t := .Ins}}	let x{{$i}} = in{{$i}}[{{loc $.Rank "i" "10u" (printf "%du" (operand $i)) "9u"}}];
{{end}}{{if .Guard}}	let res = {{.Expr}};
{{.Guard}}	out0[i] = res;
{{else}}	out0[i] = {{.Expr}};
{{end}}}
