// Direct convolutions, one thread per output element looping over its
// window, so results are deterministic and need no scratch memory. Tensors
// are dense [B, C, H, W] (1-D convolutions have H = 1) at element offsets.
// Slots: 0 B, 1 image channels, 2 grid channels, 3 groups, 4..5 image H W,
// 6..7 grid H W, 20..21 kernel, 22..23 stride, 24..25 padding,
// 26..27 dilation, 28..30 offsets of the three inputs, 31 has bias; an
// epilogue's operands are described over the output shape (rank 9, dims
// 10..) from operand slot 2 on.
// Mode grid: out = conv(image, weight) + bias over the grid (conv2d);
// mode image: the transposed direction (conv_transpose2d);
// mode wgrad: d weight from image and grid gradient.
// Split: where a device's loop limit (backends/webgpu/looplimit.go) would
// cut a thread's loops short, thread id sums only part id / n of output
// element id % n's terms, the flat range [part * chunk, min(part * chunk +
// chunk, terms)), into the partial out0[id] (slots 32 n, 33 chunk, 34
// terms); mode sum then adds each element's parts (slot 35 of them) from
// in0, the bias at channel (t / plane) % channels (slots 32 plane, 33
// channels) and the epilogue.
@group(0) @binding(1) var<storage, read> in0: array<f32>;
@group(0) @binding(2) var<storage, read> in1: array<f32>;
@group(0) @binding(3) var<storage, read> in2: array<f32>;
{{range .Extras}}@group(0) @binding({{.Binding}}) var<storage, read> e{{.I}}: array<f32>;
{{end}}@group(0) @binding({{.OutBinding}}) var<storage, read_write> out0: array<{{.Out}}>;

@compute @workgroup_size({{.WG}})
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
	let id = flat_id(wid, nwg, lid);
	if id >= pu(8u) { return; }
{{- if .Split}}
	let t = id % pu(32u);
	let lo = (id / pu(32u)) * pu(33u);
	let hi = min(lo + pu(33u), pu(34u));
{{- else}}
	let t = id;
{{- end}}
	let B = pu(0u); let IC = pu(1u); let GC = pu(2u); let G = pu(3u);
	let IH = i32(pu(4u)); let IW = i32(pu(5u)); let GH = i32(pu(6u)); let GW = i32(pu(7u));
	let KH = pu(20u); let KW = pu(21u);
	let SH = i32(pu(22u)); let SW = i32(pu(23u)); let PH = i32(pu(24u)); let PW = i32(pu(25u));
	let DH = i32(pu(26u)); let DW = i32(pu(27u));
	let o0 = pu(28u); let o1 = pu(29u); let o2 = pu(30u);
	let icg = IC / G;
	let gcg = GC / G;
	var acc = 0.0;
{{if eq .Mode "grid"}}
	// t = ((b * GC + gc) * GH + gy) * GW + gx; in0 image, in1 weight, in2 bias
	let gx = i32(t % u32(GW)); let gy = i32((t / u32(GW)) % u32(GH));
	let gc = (t / u32(GW * GH)) % GC; let b = t / (u32(GW * GH) * GC);
	let grp = gc / gcg;
{{- if .Split}}
	for (var j = lo; j < hi; j++) {
		let kx = j % KW; let ky = (j / KW) % KH; let c = j / (KW * KH);
		let y = gy * SH - PH + i32(ky) * DH;
		let x = gx * SW - PW + i32(kx) * DW;
		if y < 0 || y >= IH || x < 0 || x >= IW { continue; }
		acc += in0[o0 + ((b * IC + grp * icg + c) * u32(IH) + u32(y)) * u32(IW) + u32(x)] *
			in1[o1 + ((gc * icg + c) * KH + ky) * KW + kx];
	}
{{- else}}
	for (var c = 0u; c < icg; c++) {
		let ic = grp * icg + c;
		for (var ky = 0u; ky < KH; ky++) {
			let y = gy * SH - PH + i32(ky) * DH;
			if y < 0 || y >= IH { continue; }
			for (var kx = 0u; kx < KW; kx++) {
				let x = gx * SW - PW + i32(kx) * DW;
				if x < 0 || x >= IW { continue; }
				let iv = in0[o0 + ((b * IC + ic) * u32(IH) + u32(y)) * u32(IW) + u32(x)];
				let wv = in1[o1 + ((gc * icg + c) * KH + ky) * KW + kx];
				acc += iv * wv;
			}
		}
	}
{{- end}}
	if pu(31u) != 0u { acc += in2[o2 + gc]; }
{{else if eq .Mode "image"}}
	// t = ((b * IC + ic) * IH + y) * IW + x; in0 grid, in1 weight, in2 bias
	let x = i32(t % u32(IW)); let y = i32((t / u32(IW)) % u32(IH));
	let ic = (t / u32(IW * IH)) % IC; let b = t / (u32(IW * IH) * IC);
	let grp = ic / icg;
	let c = ic % icg;
{{- if .Split}}
	for (var j = lo; j < hi; j++) {
		let kx = j % KW; let ky = (j / KW) % KH; let gc = grp * gcg + j / (KW * KH);
		let ny = y + PH - i32(ky) * DH;
		let nx = x + PW - i32(kx) * DW;
		if ny < 0 || ny % SH != 0 || ny / SH >= GH || nx < 0 || nx % SW != 0 || nx / SW >= GW { continue; }
		acc += in0[o0 + ((b * GC + gc) * u32(GH) + u32(ny / SH)) * u32(GW) + u32(nx / SW)] *
			in1[o1 + ((gc * icg + c) * KH + ky) * KW + kx];
	}
{{- else}}
	for (var g = 0u; g < gcg; g++) {
		let gc = grp * gcg + g;
		for (var ky = 0u; ky < KH; ky++) {
			let ny = y + PH - i32(ky) * DH;
			if ny < 0 || ny % SH != 0 { continue; }
			let gy = ny / SH;
			if gy >= GH { continue; }
			for (var kx = 0u; kx < KW; kx++) {
				let nx = x + PW - i32(kx) * DW;
				if nx < 0 || nx % SW != 0 { continue; }
				let gx = nx / SW;
				if gx >= GW { continue; }
				let gv = in0[o0 + ((b * GC + gc) * u32(GH) + u32(gy)) * u32(GW) + u32(gx)];
				let wv = in1[o1 + ((gc * icg + c) * KH + ky) * KW + kx];
				acc += gv * wv;
			}
		}
	}
{{- end}}
	if pu(31u) != 0u { acc += in2[o2 + ic]; }
{{else if eq .Mode "wgrad"}}
	// t = ((gc * icg + c) * KH + ky) * KW + kx; in0 image, in1 grid gradient
	let kx = t % KW; let ky = (t / KW) % KH;
	let c = (t / (KW * KH)) % icg; let gc = t / (KW * KH * icg);
	let ic = (gc / gcg) * icg + c;
{{- if .Split}}
	for (var j = lo; j < hi; j++) {
		let gx = i32(j % u32(GW)); let gy = i32((j / u32(GW)) % u32(GH)); let b = j / u32(GW * GH);
		let y = gy * SH - PH + i32(ky) * DH;
		let x = gx * SW - PW + i32(kx) * DW;
		if y < 0 || y >= IH || x < 0 || x >= IW { continue; }
		acc += in0[o0 + ((b * IC + ic) * u32(IH) + u32(y)) * u32(IW) + u32(x)] *
			in1[o1 + ((b * GC + gc) * u32(GH) + u32(gy)) * u32(GW) + u32(gx)];
	}
{{- else}}
	for (var b = 0u; b < B; b++) {
		for (var gy = 0; gy < GH; gy++) {
			let y = gy * SH - PH + i32(ky) * DH;
			if y < 0 || y >= IH { continue; }
			for (var gx = 0; gx < GW; gx++) {
				let x = gx * SW - PW + i32(kx) * DW;
				if x < 0 || x >= IW { continue; }
				acc += in0[o0 + ((b * IC + ic) * u32(IH) + u32(y)) * u32(IW) + u32(x)] *
					in1[o1 + ((b * GC + gc) * u32(GH) + u32(gy)) * u32(GW) + u32(gx)];
			}
		}
	}
{{- end}}
{{else}}
	// Mode sum: the parts of element t, in order.
	for (var p = 0u; p < pu(35u); p++) { acc += in0[p * pu(8u) + t]; }
	if pu(31u) != 0u { acc += in2[o2 + (t / pu(32u)) % pu(33u)]; }
{{end}}
{{- if .Split}}
	out0[id] = acc;
{{- else}}
	// The epilogue (x0 the sum, x1.. fused operands at this output element
	// through their descriptors over the output shape, of rank .Rank, built
	// in; "x0" when none).
	let x0 = acc;
{{range .Extras}}	let x{{.X}} = e{{.I}}[u32({{loc $.Rank "t" "10u" (printf "%du" .Slot) "9u"}})];
{{end}}	let v = {{.Epilogue}};
	out0[t] = {{.Store}};
{{- end}}
}
