"""Writes the vec4 register-blocked matmul kernels, unrolled for two block
shapes per operand layout: wgsl/linalg_matmul_vec.wgsl (the bindings and
the choice of layout), one file per layout,
wgsl/linalg_matmul_vec_{nn,nt,tn}.wgsl, and the stores they share by block
shape, wgsl/linalg_matmul_vec_store.wgsl.
Run it after editing (make generate does); --check fails when a file is
stale (make generate-check).

Each thread owns a ROWS x 4*NQ block of c and walks k four at a time:
ROWS vec4s of a and 4*NQ of b feed ROWS*NQ*4 vec4 multiply-adds. On SIMD
software drivers (lavapipe) every load is a gather across lanes, so loads
per multiply-add decide the speed; measured on lavapipe at 1024 (GFLOP/s):
4x4 3, 4x8 12.7, 8x8 15-19, 8x16 17.7, 16x8 21.7. The tuner times the
variants per device and shape class and keeps the fastest.
"""

from pathlib import Path

VARIANTS = {"regblock4": (8, 2), "regblock16": (16, 2)}  # name: (rows, vec4 columns)

# The transposed layouts a linear layer makes. NT, c = a @ W^T with W a
# contiguous [N, K]: a row of a and a row of W are both contiguous along k,
# so each c[m, n] is a dot product of vec4s (K a multiple of 4). TN,
# c = x^T @ g with x a contiguous [K, M] (a weight gradient): a's m-column
# block and b's n-row are contiguous, so each k adds an outer product of
# vec4s (M and N multiples of 4). Same loads per multiply-add as regblock4.
NT_VARIANTS = {"nt8": (8, 2), "nt16": (16, 2)}  # name: (rows, vec4 columns)
TN_VARIANTS = {"tn8": (2, 2), "tn16": (4, 2)}  # name: (vec4 rows, vec4 columns)


SIGNATURE = """
@compute @workgroup_size({{.WG}})
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
\t@builtin(local_invocation_index) lid: u32) {"""


def kernel(rows: int, nq: int) -> str:
    out = [SIGNATURE, f"""
	let t = flat_id(wid, nwg, lid);
	if t >= pu(8u) {{ return; }}
	let M = pu(0u);
	let K = pu(1u);
	let N = pu(2u);
	let nq = N / 4u;                  // vec4 columns of c
	let tn = (nq + {nq - 1}u) / {nq}u;  // groups of {nq}
	let tm = (M + {rows - 1}u) / {rows}u;
	let z = t / (tm * tn);
	let m0 = ((t / tn) % tm) * {rows}u;
	let qb = (t % tn) * {nq}u;
	let sam = pu(3u) / 4u; // a's row stride in vec4s
	let sbk = pu(5u) / 4u; // b's row stride in vec4s
	let ab = u32(loc(z, pu(9u), 10u, 18u)) / 4u;
	let bb = u32(loc(z, pu(9u), 10u, 27u)) / 4u;
"""]
    out += [f"\tlet q{j} = min(qb + {j}u, nq - 1u);\n" for j in range(nq)]
    out += [f"\tlet r{i} = ab + min(m0 + {i}u, M - 1u) * sam;\n" for i in range(rows)]
    out += ["\t" + " ".join(f"var c{i}_{j} = vec4<f32>(0.0);" for j in range(nq)) + "\n" for i in range(rows)]
    out.append("\tvar bi = bb;\n\tfor (var k4 = 0u; k4 < K / 4u; k4++) {\n")
    out += [f"\t\tlet b{k}_{j} = b[bi + {k}u * sbk + q{j}];\n" for k in range(4) for j in range(nq)]
    out.append("\t\tbi += 4u * sbk;\n")
    for i in range(rows):
        out.append(f"\t\tlet a{i} = a[r{i} + k4];\n")
        out += [f"\t\tc{i}_{j} += a{i}.x * b0_{j} + a{i}.y * b1_{j} + a{i}.z * b2_{j} + a{i}.w * b3_{j};\n"
                for j in range(nq)]
    out.append("\t}\n")
    out.append(store_call(rows, nq))
    return "".join(out)


# Both guards store() takes: whole vec4 columns, or columns one by one (the
# NT kernels, whose N need not be a multiple of 4).
WHOLE, RAGGED = "qb + {j}u < nq", "(qb + {j}u) * 4u + j < N"


def store_name(rows: int, nq: int, ragged: bool = False) -> str:
    return f"matmul_vec_store_{rows}x{nq}" + ("_ragged" if ragged else "")


def store_call(rows: int, nq: int, ragged: bool = False) -> str:
    """A kernel's store: the block's store code, shared by every kernel with
    the same block (templates are textual, so it reads the kernel's locals)."""
    return f'{{{{template "{store_name(rows, nq, ragged)}" .}}}}\n}}\n'


def store(rows: int, nq: int, in_range: str = WHOLE) -> str:
    """Stores the rows x nq vec4 accumulators c{i}_{j} at (m0 + i, qb + j);
    in_range guards column j of the block (lane j of each vec4)."""
    out = ["\tc_begin(z);\n"]
    # With N a multiple of 4 each accumulator is stored whole: a software
    # driver's scalar stores are scatters across lanes, and a product with a
    # short k spends as long storing as multiplying.
    # Every row and column of the block through the epilogue first (rows
    # and columns past c's edge read clamped, in-bounds operands), then
    # the stores.
    out.append("{{if .Vec4Store}}")
    at = [(i, j, f"min(m0 + {i}u, M - 1u), min(qb + {j}u, nq - 1u), c{i}_{j}") for i in range(rows) for j in range(nq)]
    out += [f"\tlet e{i}_{j} = c_epi4({args});\n" for i, j, args in at]
    out.append("{{if .Also}}" + "".join(f"\tlet f{i}_{j} = c_also4({args});\n" for i, j, args in at) + "{{end}}")
    for i in range(rows):
        out.append(f"\tif m0 + {i}u < M {{\n")
        out += [f"\t\tif qb + {j}u < nq {{ c_put4(m0 + {i}u, qb + {j}u, e{i}_{j});"
                f"{{{{if .Also}}}} c_put4_also(m0 + {i}u, qb + {j}u, f{i}_{j});{{{{end}}}} }}\n" for j in range(nq)]
        out.append("\t}\n")
    out.append("{{else}}")
    out += [f"\tvar cs{j} = array<vec4<f32>, {rows}>(" + ", ".join(f"c{i}_{j}" for i in range(rows)) + ");\n"
           for j in range(nq)]
    out.append(f"\tfor (var i = 0u; i < {rows}u; i++) {{\n\t\tif m0 + i >= M {{ break; }}\n"
               "\t\tfor (var j = 0u; j < 4u; j++) {\n")
    out += [f"\t\t\tif {in_range.format(j=j)} {{ c_store(z, m0 + i, (qb + {j}u) * 4u + j, cs{j}[i][j]); }}\n"
            for j in range(nq)]
    out.append("\t\t}\n\t}\n{{end}}")
    return "".join(out)


def kernel_nt(rows: int, nq: int) -> str:
    """c = a @ b with b's k stride 1: dot products of a's and W's k-rows.
    Columns of c are clamped like rows, so N need not be a multiple of 4;
    the accumulators still group four columns in a vec4 to share store()."""
    cols = 4 * nq
    out = [SIGNATURE, f"""
	let t = flat_id(wid, nwg, lid);
	if t >= pu(8u) {{ return; }}
	let M = pu(0u);
	let K = pu(1u);
	let N = pu(2u);
	let nq = (N + 3u) / 4u;
	let tn = (N + {cols - 1}u) / {cols}u;
	let tm = (M + {rows - 1}u) / {rows}u;
	let z = t / (tm * tn);
	let m0 = ((t / tn) % tm) * {rows}u;
	let qb = (t % tn) * {nq}u;
	let n0 = qb * 4u;
	let sam = pu(3u) / 4u; // a's row stride in vec4s
	let sbn = pu(6u) / 4u; // b's column stride (W's row stride) in vec4s
	let ab = u32(loc(z, pu(9u), 10u, 18u)) / 4u;
	let bb = u32(loc(z, pu(9u), 10u, 27u)) / 4u;
"""]
    out += [f"\tlet r{i} = ab + min(m0 + {i}u, M - 1u) * sam;\n" for i in range(rows)]
    out += [f"\tlet w{j} = bb + min(n0 + {j}u, N - 1u) * sbn;\n" for j in range(cols)]
    out += ["\t" + " ".join(f"var c{i}_{j} = vec4<f32>(0.0);" for j in range(nq)) + "\n" for i in range(rows)]
    out.append("\tfor (var k4 = 0u; k4 < K / 4u; k4++) {\n")
    out += [f"\t\tlet b{j} = b[w{j} + k4];\n" for j in range(cols)]
    for i in range(rows):
        out.append(f"\t\tlet a{i} = a[r{i} + k4];\n")
        out += [f"\t\tc{i}_{j} += vec4<f32>(" + ", ".join(f"dot(a{i}, b{4 * j + e})" for e in range(4)) + ");\n"
                for j in range(nq)]
    out.append("\t}\n")
    out.append(store_call(rows, nq, ragged=True))
    return "".join(out)


def kernel_tn(rq: int, nq: int) -> str:
    """c = a @ b with a's m stride 1: each k adds the outer product of a's
    m-column block (rq vec4s) and b's n-row block (nq vec4s). K is walked
    four at a time (about 15% faster than one at a time on lavapipe at 1024)
    and then one at a time, so only M and N need be multiples of 4."""
    rows = 4 * rq
    out = [SIGNATURE, f"""
	let t = flat_id(wid, nwg, lid);
	if t >= pu(8u) {{ return; }}
	let M = pu(0u);
	let K = pu(1u);
	let N = pu(2u);
	let mq = M / 4u;                  // vec4 rows of c
	let nq = N / 4u;                  // vec4 columns of c
	let tn = (nq + {nq - 1}u) / {nq}u;
	let tm = (mq + {rq - 1}u) / {rq}u;
	let z = t / (tm * tn);
	let pb = ((t / tn) % tm) * {rq}u;
	let m0 = pb * 4u;
	let qb = (t % tn) * {nq}u;
	let sak = pu(4u) / 4u; // a's k stride in vec4s
	let sbk = pu(5u) / 4u; // b's k stride in vec4s
"""]
    out += [f"\tlet p{p} = min(pb + {p}u, mq - 1u);\n" for p in range(rq)]
    out += [f"\tlet q{j} = min(qb + {j}u, nq - 1u);\n" for j in range(nq)]
    out += ["\t" + " ".join(f"var c{i}_{j} = vec4<f32>(0.0);" for j in range(nq)) + "\n" for i in range(rows)]
    out.append("\tvar ai = u32(loc(z, pu(9u), 10u, 18u)) / 4u;\n\tvar bi = u32(loc(z, pu(9u), 10u, 27u)) / 4u;\n")
    def step(k: int) -> list[str]:
        lines = [f"\t\tlet a{p}_{k} = a[ai + {k}u * sak + p{p}];\n" for p in range(rq)]
        lines += [f"\t\tlet b{j}_{k} = b[bi + {k}u * sbk + q{j}];\n" for j in range(nq)]
        lines += ["\t\t" + " ".join(f"c{i}_{j} += a{i // 4}_{k}.{'xyzw'[i % 4]} * b{j}_{k};" for j in range(nq)) + "\n"
                  for i in range(rows)]
        return lines

    def colsum(ks: range) -> str:
        # .ColSum: b's column sums ride along (the bias gradient beside the
        # weight gradient x^T @ g). Each step's rows are added plainly and
        # the step's total with Kahan compensation, so the error stays that
        # of a compensated sum of K/4 terms whatever K is.
        terms = [" + ".join(f"b{j}_{k}" for k in ks) for j in range(nq)]
        return "{{if .ColSum}}" + "".join(
            f"\t\tlet sy{j} = ({terms[j]}) - sc{j};\n\t\tlet st{j} = s{j} + sy{j};\n"
            f"\t\tsc{j} = select((st{j} - s{j}) - sy{j}, vec4<f32>(0.0), abs(st{j}) > vec4<f32>(3.40282347e38));\n"
            f"\t\ts{j} = st{j};\n" for j in range(nq)) + "{{end}}"
    sums = "".join(f"\tvar s{j} = vec4<f32>(0.0); var sc{j} = vec4<f32>(0.0);\n" for j in range(nq))
    out.append("{{if .ColSum}}" + sums + "{{end}}")
    out.append("\tvar k = 0u;\n\tfor (; k + 4u <= K; k += 4u) {\n")
    for k in range(4):
        out += step(k)
    out.append(colsum(range(4)))
    out.append("\t\tai += 4u * sak;\n\t\tbi += 4u * sbk;\n\t}\n\tfor (; k < K; k++) {\n")
    out += step(0)
    out.append(colsum(range(1)))
    out.append("\t\tai += sak;\n\t\tbi += sbk;\n\t}\n")
    # The threads of the first row block (each block of columns has one)
    # write the sums.
    out.append("{{if .ColSum}}\tif pb == 0u && z == 0u {\n"
               + "".join(f"\t\tif qb + {j}u < nq {{ cs[qb + {j}u] = s{j}; }}\n" for j in range(nq)) + "\t}\n{{end}}")
    out.append(store_call(rows, nq))
    return "".join(out)


HEADER = "// Code generated by make generate (scripts/gen_matmul_vec.py). DO NOT EDIT.\n"


def layout_file(layout: str, kernels: list[tuple[str, int, int, str]]) -> str:
    """One layout's kernels as template matmul_vec_<layout>, chosen by .Variant."""
    parts = [HEADER, f'{{{{define "matmul_vec_{layout}"}}}}']
    for i, (name, rows, nq, text) in enumerate(kernels):
        parts.append(("{{if" if i == 0 else "{{else if") + f' eq .Variant "{name}"}}}}\n// {rows}x{4 * nq} blocks\n')
        parts.append(text)
    parts.append("{{end}}{{end}}\n")
    return "".join(parts)


def main() -> None:
    import sys

    layouts = {
        "nn": [(name, rows, nq, kernel(rows, nq)) for name, (rows, nq) in VARIANTS.items()],
        "nt": [(name, rows, nq, kernel_nt(rows, nq)) for name, (rows, nq) in NT_VARIANTS.items()],
        "tn": [(name, 4 * rq, nq, kernel_tn(rq, nq)) for name, (rq, nq) in TN_VARIANTS.items()],
    }
    choice = []
    for i, (layout, kernels) in enumerate(layouts.items()):
        names = " ".join(f'(eq .Variant "{name}")' for name, *_ in kernels)
        keyword = "{{if" if i == 0 else "{{else if"
        choice.append(f'{keyword} or {names}}}}}{{{{template "matmul_vec_{layout}" .}}}}')
    files = {"linalg_matmul_vec.wgsl": HEADER + """// Register-blocked matmul on vec4s for f32 operands with contiguous,
// 16-byte aligned rows (the host checks which layout holds): regblock*
// a's k-rows and b's n-rows (linalg_matmul_vec_nn.wgsl), nt* a's and b's
// k-rows (a @ W^T, linalg_matmul_vec_nt.wgsl), tn* a's m-rows and b's n-rows
// (x^T @ g, linalg_matmul_vec_tn.wgsl). Slots as in linalg_matmul.wgsl. Each thread owns a block
// of c kept in registers, with no workgroup memory and no barriers.
@group(0) @binding(1) var<storage, read> a: array<vec4<f32>>;
@group(0) @binding(2) var<storage, read> b: array<vec4<f32>>;
{{template "matmul_store" .}}
""" + "".join(choice) + "{{end}}\n"}
    for layout, kernels in layouts.items():
        files[f"linalg_matmul_vec_{layout}.wgsl"] = layout_file(layout, kernels)
    blocks = sorted({(rows, nq, layout == "nt") for layout, kernels in layouts.items() for _, rows, nq, _ in kernels})
    stores = []
    for rows, nq, ragged in blocks:
        body = store(rows, nq, RAGGED if ragged else WHOLE)
        stores.append(f'{{{{define "{store_name(rows, nq, ragged)}"}}}}{body}{{{{end}}}}\n')
    store_note = "// Each block shape's store, shared by its kernels.\n"
    files["linalg_matmul_vec_store.wgsl"] = HEADER + store_note + "".join(stores)
    wgsl = Path(__file__).resolve().parent.parent.joinpath("wgsl")
    for name, text in files.items():
        target = wgsl.joinpath(name)
        if "--check" in sys.argv:
            if not target.exists() or target.read_text() != text:
                sys.exit(f"wgsl/{name} is stale: run python3 scripts/gen_matmul_vec.py")
            continue
        target.write_text(text)


if __name__ == "__main__":
    main()
