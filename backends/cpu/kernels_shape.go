package cpu

import (
	"unsafe"

	"github.com/webtensor/webtensor/core"
	"github.com/webtensor/webtensor/core/numerics"
)

// Shape copies move raw element bytes, so every dtype is copied exactly.
// Joins and splits copy whole blocks; the per-element copies (flip, roll,
// tile, repeat_interleave, pad, the slice gradient) share remapCopy, which
// maps each output coordinate to an input coordinate dim by dim.

func init() {
	register("concat", joinKernel)
	register("stack", joinKernel)
	register("split", splitKernel)
	register("chunk", splitKernel)
	register("flip", flipKernel)
	register("roll", rollKernel)
	register("tile", tileKernel)
	register("repeat_interleave", repeatInterleaveKernel)
	register("_slice_grad", sliceGradKernel)
	register("pad", padKernel)
	register("_pad_grad", padGradKernel)
}

// layout is where a tensor's elements live: raw storage bytes, an element
// offset and per-dim strides in elements.
type layout struct {
	data    []byte
	offset  int
	strides []int
}

func layoutOf(t *core.Tensor) layout {
	return layout{data: host(t), offset: t.Offset(), strides: t.Strides()}
}

// rowMajorBytes returns t's elements densely in row-major order; for a
// contiguous tensor that is a window on its storage, not a copy.
func rowMajorBytes(t *core.Tensor) []byte {
	size, n := t.DType().Size(), t.Numel()
	if n == 0 {
		return nil
	}
	b := host(t)
	if t.IsContiguous() {
		return b[t.Offset()*size : (t.Offset()+n)*size]
	}
	out := alignedBytes(n * size)
	for i, p := range indexMap(t, t.Shape()) {
		copy(out[i*size:(i+1)*size], b[p*size:(p+1)*size])
	}
	return out
}

// denseOut is the part of a freshly allocated output's storage it owns.
func denseOut(t *core.Tensor) []byte {
	size := t.DType().Size()
	return host(t)[t.Offset()*size : (t.Offset()+t.Numel())*size]
}

// outerCount is the product of the dims before axis.
func outerCount(s core.Shape, axis int) int { return s[:axis].Numel() }

// joinKernel serves concat and stack: the output is, for every index of the
// dims before the axis, the inputs' blocks one after the other.
func joinKernel(k *core.KernelCall) error {
	out := k.Outputs[0]
	s := out.Shape()
	ax, err := core.NormAxis(k.Attrs.Int("axis"), len(s))
	if err != nil {
		return err
	}
	outer := outerCount(s, ax)
	if outer == 0 || out.Numel() == 0 {
		return nil
	}
	dst, row := denseOut(out), len(denseOut(out))/outer
	start := 0
	for _, in := range k.Inputs {
		src := rowMajorBytes(in)
		blk := len(src) / outer
		at := start
		parallelFor(outer, blk/64+1, func(lo, hi int) {
			for o := lo; o < hi; o++ {
				copy(dst[o*row+at:o*row+at+blk], src[o*blk:(o+1)*blk])
			}
		})
		start += blk
	}
	return nil
}

// splitKernel serves split and chunk: the inverse of joinKernel.
func splitKernel(k *core.KernelCall) error {
	in := k.Inputs[0]
	s := in.Shape()
	ax, err := core.NormAxis(k.Attrs.Int("axis"), len(s))
	if err != nil {
		return err
	}
	outer := outerCount(s, ax)
	if outer == 0 || in.Numel() == 0 {
		return nil
	}
	src := rowMajorBytes(in)
	row := len(src) / outer
	start := 0
	for _, out := range k.Outputs {
		dst := denseOut(out)
		blk := len(dst) / outer
		for o := 0; o < outer; o++ {
			copy(dst[o*blk:(o+1)*blk], src[o*row+start:o*row+start+blk])
		}
		start += blk
	}
	return nil
}

// identityMap is the coordinate map of a dim that is copied as is.
func identityMap(n int) []int {
	m := make([]int, n)
	for i := range m {
		m[i] = i
	}
	return m
}

// elemsOf reinterprets aligned storage bytes as elements of type T.
func elemsOf[T any](b []byte) []T {
	var z T
	if len(b) == 0 {
		return nil
	}
	return unsafe.Slice((*T)(unsafe.Pointer(&b[0])), len(b)/int(unsafe.Sizeof(z)))
}

// remapCopy fills the dense output out: output coordinate o along dim d
// reads input coordinate maps[d][o] of src, or takes fill when any map says
// -1. src.strides must have the output's rank.
func remapCopy(out *core.Tensor, src layout, maps [][]int, fill []byte) {
	size := out.DType().Size()
	switch size {
	case 1:
		remapTyped(elemsOf[uint8](denseOut(out)), elemsOf[uint8](src.data), src, maps, elemsOf[uint8](fill)[0])
	case 2:
		remapTyped(elemsOf[uint16](denseOut(out)), elemsOf[uint16](src.data), src, maps, elemsOf[uint16](fill)[0])
	case 4:
		remapTyped(elemsOf[uint32](denseOut(out)), elemsOf[uint32](src.data), src, maps, elemsOf[uint32](fill)[0])
	default:
		remapTyped(elemsOf[uint64](denseOut(out)), elemsOf[uint64](src.data), src, maps, elemsOf[uint64](fill)[0])
	}
}

// remapTyped walks the output row by row: the dims before the last give a
// base position (or a filled row), the last dim's map gives the offsets.
func remapTyped[T any](dst, data []T, src layout, maps [][]int, fill T) {
	if len(dst) == 0 {
		return
	}
	rank := len(maps)
	if rank == 0 {
		dst[0] = data[src.offset]
		return
	}
	offs := make([][]int, rank)
	for d, m := range maps {
		offs[d] = make([]int, len(m))
		for o, i := range m {
			offs[d][o] = -1
			if i >= 0 {
				offs[d][o] = i * src.strides[d]
			}
		}
	}
	last := offs[rank-1]
	runs := remapRuns(last)
	rows := len(dst) / len(last)
	parallelFor(rows, len(last), func(lo, hi int) {
		idx := make([]int, rank-1)
		rem := lo
		for d := rank - 2; d >= 0; d-- {
			idx[d] = rem % len(maps[d])
			rem /= len(maps[d])
		}
		for r := lo; r < hi; r++ {
			base, filled := src.offset, false
			for d := 0; d < rank-1; d++ {
				o := offs[d][idx[d]]
				if o < 0 {
					filled = true
					break
				}
				base += o
			}
			row := dst[r*len(last) : (r+1)*len(last)]
			switch {
			case filled:
				for j := range row {
					row[j] = fill
				}
			case runs != nil:
				// Runs of adjacent source elements, or of the fill (a
				// slice's gradient: its columns and zeros on either side),
				// as block copies.
				for _, run := range runs {
					part := row[run.at : run.at+run.n]
					if run.src < 0 {
						for j := range part {
							part[j] = fill
						}
					} else {
						copy(part, data[base+run.src:base+run.src+run.n])
					}
				}
			default:
				for j, o := range last {
					if o < 0 {
						row[j] = fill
					} else {
						row[j] = data[base+o]
					}
				}
			}
			for d := rank - 2; d >= 0; d-- {
				idx[d]++
				if idx[d] < len(maps[d]) {
					break
				}
				idx[d] = 0
			}
		}
	})
}

// remapRun is a stretch of an output row that reads n adjacent source
// elements from offset src on (or, with src -1, takes the fill).
type remapRun struct{ at, n, src int }

// remapRuns splits the last dim's offsets into runs, or returns nil when
// the runs would be short (a strided or reversed source), where the
// element loop is faster than a copy per run.
func remapRuns(offs []int) []remapRun {
	var runs []remapRun
	for j := 0; j < len(offs); {
		k := j + 1
		for k < len(offs) && ((offs[j] < 0 && offs[k] < 0) || (offs[j] >= 0 && offs[k] == offs[j]+(k-j))) {
			k++
		}
		runs = append(runs, remapRun{at: j, n: k - j, src: offs[j]})
		j = k
	}
	if len(runs)*8 > len(offs) {
		return nil
	}
	return runs
}

// zeroFill is a fill value of all-zero bytes, wide enough for any dtype.
var zeroFill = alignedBytes(8)

func flipKernel(k *core.KernelCall) error {
	in, out := k.Inputs[0], k.Outputs[0]
	s := in.Shape()
	axes, err := core.NormAxes(k.Attrs.Ints("axes"), len(s))
	if err != nil {
		return err
	}
	maps := make([][]int, len(s))
	for d, n := range s {
		maps[d] = identityMap(n)
	}
	for _, d := range axes {
		for o := range maps[d] {
			maps[d][o] = s[d] - 1 - o
		}
	}
	remapCopy(out, layoutOf(in), maps, zeroFill)
	return nil
}

// rolledMap is the coordinate map of a dim of size n rolled by shift.
func rolledMap(n, shift int) []int {
	m := make([]int, n)
	for o := range m {
		m[o] = ((o-shift)%n + n) % n
	}
	return m
}

func rollKernel(k *core.KernelCall) error {
	in, out := k.Inputs[0], k.Outputs[0]
	s := in.Shape()
	if in.Numel() == 0 {
		return nil
	}
	shifts, flat, err := rollShiftsOf(s, k.Attrs)
	if err != nil {
		return err
	}
	if flat {
		n := in.Numel()
		src := layout{data: rowMajorBytes(in), strides: []int{1}}
		flatOut := core.NewView(out, core.Shape{n}, []int{1}, out.Offset())
		remapCopy(flatOut, src, [][]int{rolledMap(n, shifts[0])}, zeroFill)
		return nil
	}
	maps := make([][]int, len(s))
	for d, n := range s {
		maps[d] = rolledMap(n, shifts[d])
	}
	remapCopy(out, layoutOf(in), maps, zeroFill)
	return nil
}

// rollShiftsOf mirrors core's reading of roll's attributes: the net shift
// of every axis, or one shift of the flattened tensor.
func rollShiftsOf(s core.Shape, a core.Attrs) ([]int, bool, error) {
	shifts := a.Ints("shifts")
	if !a.Has("axes") {
		return shifts, true, nil
	}
	per := make([]int, len(s))
	for i, ax := range a.Ints("axes") {
		d, err := core.NormAxis(ax, len(s))
		if err != nil {
			return nil, false, err
		}
		per[d] += shifts[i]
	}
	return per, false, nil
}

func tileKernel(k *core.KernelCall) error {
	in, out := k.Inputs[0], k.Outputs[0]
	os := out.Shape()
	lead := len(os) - in.Rank()
	strides := append(make([]int, lead), in.Strides()...)
	maps := make([][]int, len(os))
	for d, n := range os {
		maps[d] = make([]int, n)
		if d < lead {
			continue
		}
		size := in.Shape()[d-lead]
		for o := range maps[d] {
			maps[d][o] = o % size
		}
	}
	remapCopy(out, layout{data: host(in), offset: in.Offset(), strides: strides}, maps, zeroFill)
	return nil
}

func repeatInterleaveKernel(k *core.KernelCall) error {
	in, out := k.Inputs[0], k.Outputs[0]
	r := k.Attrs.Int("repeats")
	if out.Numel() == 0 {
		return nil
	}
	if !k.Attrs.Has("axis") {
		m := tempInts(out.Numel())
		for o := range m {
			m[o] = o / r
		}
		src := layout{data: rowMajorBytes(in), strides: []int{1}}
		remapCopy(out, src, [][]int{m}, zeroFill)
		return nil
	}
	ax, err := core.NormAxis(k.Attrs.Int("axis"), in.Rank())
	if err != nil {
		return err
	}
	maps := make([][]int, out.Rank())
	for d, n := range out.Shape() {
		maps[d] = identityMap(n)
	}
	for o := range maps[ax] {
		maps[ax][o] = o / r
	}
	remapCopy(out, layoutOf(in), maps, zeroFill)
	return nil
}

// sliceGradKernel writes g at the slice positions of a zero tensor: along
// the axis, output coordinate first+j*step reads g's coordinate j.
func sliceGradKernel(k *core.KernelCall) error {
	g, out := k.Inputs[0], k.Outputs[0]
	s := out.Shape()
	ax, err := core.NormAxis(k.Attrs.Int("axis"), len(s))
	if err != nil {
		return err
	}
	maps := make([][]int, len(s))
	for d, n := range s {
		maps[d] = identityMap(n)
	}
	count, step := g.Shape()[ax], k.Attrs.Int("step")
	first := sliceFirst(s[ax], k.Attrs.Int("start"))
	for o := range maps[ax] {
		maps[ax][o] = -1
		if j := (o - first) / step; o >= first && (o-first)%step == 0 && j < count {
			maps[ax][o] = j
		}
	}
	remapCopy(out, layoutOf(g), maps, zeroFill)
	return nil
}

// sliceFirst resolves a Python slice start over a dim of size n.
func sliceFirst(n, start int) int {
	if start < 0 {
		start += n
	}
	return min(max(start, 0), n)
}

// padMaps gives, for every dim of the padded output, the input coordinate
// each output coordinate reads (-1: the constant fill).
func padMaps(in, out core.Shape, pads []int, mode string) [][]int {
	maps := make([][]int, len(out))
	for d := range out {
		maps[d] = identityMap(out[d])
		p := len(in) - 1 - d
		if 2*p >= len(pads) {
			continue
		}
		before, n := pads[2*p], in[d]
		for o := range maps[d] {
			i := o - before
			switch {
			case i >= 0 && i < n:
			case mode == "reflect" && i < 0:
				i = -i
			case mode == "reflect":
				i = 2*(n-1) - i
			case mode == "replicate":
				i = min(max(i, 0), n-1)
			default:
				i = -1
			}
			maps[d][o] = i
		}
	}
	return maps
}

func padKernel(k *core.KernelCall) error {
	in, out := k.Inputs[0], k.Outputs[0]
	mode := k.Attrs.String("mode")
	fill := alignedBytes(8)
	numerics.PutF64(out.DType(), fill, 0, k.Attrs.Float("value"))
	remapCopy(out, layoutOf(in), padMaps(in.Shape(), out.Shape(), k.Attrs.Ints("pads"), mode), fill)
	return nil
}

// padGradKernel adds every element of g to the input position the pad read
// it from; reflected and replicated positions collect several.
func padGradKernel(k *core.KernelCall) error {
	g, out := k.Inputs[0], k.Outputs[0]
	in := out.Shape()
	maps := padMaps(in, g.Shape(), k.Attrs.Ints("pads"), k.Attrs.String("mode"))
	acc := tempF64(out.Numel())
	strides := core.ContiguousStrides(in)
	gv := readF64(g)
	idx := make([]int, len(maps))
	for _, v := range gv {
		pos, skip := 0, false
		for d, o := range idx {
			i := maps[d][o]
			if i < 0 {
				skip = true
				break
			}
			pos += i * strides[d]
		}
		if !skip {
			acc[pos] += v
		}
		for d := len(idx) - 1; d >= 0; d-- {
			idx[d]++
			if idx[d] < len(maps[d]) {
				break
			}
			idx[d] = 0
		}
	}
	writeF64(out, acc)
	return nil
}
