// Row body (core.ElementBody with Rows): one workgroup of lanes per row of
// the output, rowbody() run by every lane with row and lane set. The op
// writes its body once (backends/lower's row dialect); the helpers read its
// inputs dense, at their element offset, as body.wgsl's do, store writes an
// output element, and row_sum/row_max/row_min combine the lanes' values.
// Slots as body.wgsl's (8 the output's element count, 9 its offset, 10..17
// its dims, 18+9k input k's offset and dims) and the row count at RowsSlot.
// An absent optional input has no binding and no helpers.
{{range .Ins}}@group(0) @binding({{.Bind}}) var<storage, read> in{{.K}}: array<{{.Type}}>;
{{end}}@group(0) @binding({{.OutBind}}) var<storage, read_write> out0: array<{{.Out}}>;

var<workgroup> wt_red: array<f32, {{.WG}}>;
var<private> row: u32;
var<private> lane: u32;
const lanes: u32 = {{.WG}}u;

const orank: u32 = {{.Rank}}u;
fn odim(d: u32) -> u32 { return pu(10u + d); }
fn onumel() -> u32 { return pu(8u); }
{{range .Ins}}
const rank{{.K}}: u32 = {{.Rank}}u;
fn x{{.K}}(j: u32) -> f32 { return f32(in{{.K}}[pu({{.Slot}}u) + j]); }
fn x{{.K}}i(j: u32) -> i32 { return i32(in{{.K}}[pu({{.Slot}}u) + j]); }
fn x{{.K}}u(j: u32) -> u32 { return u32(in{{.K}}[pu({{.Slot}}u) + j]); }
fn x{{.K}}v(j: u32) -> {{.Type}} { return in{{.K}}[pu({{.Slot}}u) + j]; }
fn dim{{.K}}(d: u32) -> u32 { return pu({{add .Slot 1}}u + d); }
fn numel{{.K}}() -> u32 {
	var n = 1u;
	for (var d = 0u; d < rank{{.K}}; d++) { n *= dim{{.K}}(d); }
	return n;
}
{{end}}
fn store(j: u32, v: {{.Out}}) { out0[pu(9u) + j] = {{.Store}}; }

// wt_row combines every lane's v by halving (op 0 sums, 1 keeps the
// maximum, 2 the minimum; a NaN wins both) and gives each lane the result.
// The first barrier keeps a lane from overwriting wt_red while another
// still reads the previous collective's result.
fn wt_row(v: f32, op: u32) -> f32 {
	workgroupBarrier();
	wt_red[lane] = v;
	workgroupBarrier();
	for (var s = lanes / 2u; s > 0u; s >>= 1u) {
		if lane < s {
			let a = wt_red[lane];
			let b = wt_red[lane + s];
			if op == 0u || is_nan(a) || is_nan(b) {
				wt_red[lane] = a + b;
			} else if op == 1u {
				wt_red[lane] = max(a, b);
			} else {
				wt_red[lane] = min(a, b);
			}
		}
		workgroupBarrier();
	}
	return wt_red[0];
}
fn row_sum(v: f32) -> f32 { return wt_row(v, 0u); }
fn row_max(v: f32) -> f32 { return wt_row(v, 1u); }
fn row_min(v: f32) -> f32 { return wt_row(v, 2u); }

fn rowbody() {
{{.Body}}
}

// The row is the workgroup's flat index (the grid is split in two
// dimensions past 65535 rows); a workgroup past the last row leaves at
// once, all its lanes together, before any barrier.
@compute @workgroup_size({{.WG}})
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
	let r = wid.y * nwg.x + wid.x;
	if r >= pu({{.RowsSlot}}u) { return; }
	row = r;
	lane = lid;
	rowbody();
}
