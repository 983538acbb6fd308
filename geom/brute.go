package geom

import (
	"fmt"
	"math"
	"unsafe"

	"github.com/webtensor/webtensor/core"
)

// The BruteForce method: squared distances from registry ops on the points'
// device, one cloud and one block of query rows at a time, and the choice
// of neighbours on the host (see BruteForce for why).

const defaultBlockEntries = 1 << 22

func (s Searcher) blockEntries() int {
	if s.BlockEntries > 0 {
		return s.BlockEntries
	}
	return defaultBlockEntries
}

// checkFinite rejects NaN and Inf on the device, with one value read back.
func checkFinite(fn, what string, t *core.Tensor) error {
	bad := op("any", nil, op("logical_or", nil, op("isnan", nil, t), op("isinf", nil, t)))
	v, err := bad.Item()
	if err != nil {
		return fmt.Errorf("geom: %s: %s: %w", fn, what, err)
	}
	if v != 0 {
		return fmt.Errorf("geom: %s: %s holds NaN or Inf, want finite coordinates", fn, what)
	}
	return nil
}

func rowRange(t *core.Tensor, lo, hi int) *core.Tensor {
	return op("slice", core.Attrs{"axis": 0, "start": lo, "stop": hi}, t)
}

func (s Searcher) bruteSearch(fn string, x, y *core.Tensor, clouds []cloud, q query) ([][]int32, error) {
	if err := checkFinite(fn, "x", x); err != nil {
		return nil, err
	}
	if !q.same {
		if err := checkFinite(fn, "y", y); err != nil {
			return nil, err
		}
	}
	rows := make([][]int32, y.Shape()[0])
	for _, c := range clouds {
		if c.xhi == c.xlo {
			continue
		}
		if err := s.bruteCloud(x, y, c, q, rows); err != nil {
			return nil, fmt.Errorf("geom: %s: %w", fn, err)
		}
	}
	return rows, nil
}

// bruteCloud fills rows[c.ylo:c.yhi] from distance blocks [b, nx].
func (s Searcher) bruteCloud(x, y *core.Tensor, c cloud, q query, rows [][]int32) error {
	dt, dev := x.DType(), x.Device()
	xs, ys := rowRange(x, c.xlo, c.xhi), rowRange(y, c.ylo, c.yhi)
	// Both sides move to the cloud's bounding-box centre first: far from
	// the origin |y|^2 + |x|^2 - 2 y.x cancels away every digit of a small
	// distance. The midpoint of integer coordinates is a multiple of 1/2,
	// so points on a grid keep exact distances (and exact ties) in f32.
	keep := core.Attrs{"axes": []int{0}, "keepdim": true}
	mid := op("add", nil, op("min", keep, xs), op("max", keep, xs))
	mid = op("mul", nil, mid, core.Scalar(0.5, dt, dev))
	xs, ys = op("sub", nil, xs, mid), op("sub", nil, ys, mid)
	// One matmul gives |x|^2 - 2 y.x for a whole block, [-2y, 1] times
	// [x^T; |x|^2], so the big matrix is written once and never revisited
	// on the device; |y|^2, constant along a row, is added on the host.
	sq := core.Attrs{"axes": []int{1}}
	xSq := op("unsqueeze", core.Attrs{"axis": 0}, op("sum", sq, op("square", nil, xs)))
	right := op("concat", core.Attrs{"axis": 0}, op("transpose", nil, xs), xSq) // [D+1, nx]
	nx, ny := c.xhi-c.xlo, c.yhi-c.ylo
	block := max(1, s.blockEntries()/nx)
	for b0 := 0; b0 < ny; b0 += block {
		b1 := min(b0+block, ny)
		yb := rowRange(ys, b0, b1)
		ySq, err := op("sum", sq, op("square", nil, yb)).Float64s()
		if err != nil {
			return err
		}
		left := op("concat", core.Attrs{"axis": 1}, op("mul", nil, yb, core.Scalar(-2, dt, dev)), core.Ones(core.Shape{b1 - b0, 1}, dt, dev))
		part := op("matmul", nil, left, right)
		// Row r of the block is y row c.ylo+b0+r; its own point, when x is
		// y, is x row c.xlo+b0+r of the cloud.
		self := int32(-1)
		if q.skipSelf() {
			self = int32(c.ylo + b0 - c.xlo)
		}
		out := rows[c.ylo+b0 : c.ylo+b1]
		if f, ok := hostF32(part); ok {
			pickBlock(f, nx, ySq, self, q, out)
		} else {
			f, err := part.Float64s()
			if err != nil {
				return err
			}
			pickBlock(f, nx, ySq, self, q, out)
		}
		part.Release()
	}
	return nil
}

// hostF32 is a contiguous f32 CPU tensor's memory itself: reading a block
// through Bytes would copy (and Float64s also widen) a billion values per
// pass over a large cloud.
func hostF32(t *core.Tensor) ([]float32, bool) {
	hs, ok := t.Storage().(core.HostStorage)
	if !ok || t.DType() != core.F32 || !t.IsContiguous() {
		return nil, false
	}
	h, lo, hi := hs.Host(), t.Offset()*4, (t.Offset()+t.Numel())*4
	if t.Numel() == 0 || len(h) < hi || uintptr(unsafe.Pointer(&h[lo]))%4 != 0 {
		return nil, false
	}
	b := h[lo:hi]
	return unsafe.Slice((*float32)(unsafe.Pointer(unsafe.SliceData(b))), t.Numel()), true
}

// pickBlock fills out[r] from row r of a block of nx columns; row r's own
// point is column self+r (self < 0: none).
func pickBlock[F float32 | float64](vals []F, nx int, ySq []float64, self int32, q query, out [][]int32) {
	parallelRows(len(out), func(lo, hi int) {
		best := &nearest{}
		for r := lo; r < hi; r++ {
			skip := int32(-1)
			if self >= 0 {
				skip = self + int32(r)
			}
			out[r] = pickRow(vals[r*nx:(r+1)*nx], ySq[r], q, skip, best)
		}
	})
}

// pickRow chooses the neighbours of one centre from its row of |x|^2 -
// 2 y.x, to which ySq adds |y|^2.
func pickRow[F float32 | float64](row []F, ySq float64, q query, skip int32, best *nearest) []int32 {
	if q.radius {
		var out []int32
		for j, v := range row {
			if int32(j) != skip && float64(v)+ySq < q.r2 {
				out = append(out, int32(j))
				if q.max > 0 && len(out) == q.max {
					break
				}
			}
		}
		return out
	}
	best.reset(q.k)
	for j, v := range row {
		d := float64(v) + ySq
		if math.IsNaN(d) { // overflow of huge coordinates: never nearer than a number
			d = math.Inf(1)
		}
		if (best.full() && d > best.worst().d) || int32(j) == skip { // most points: out without a call
			continue
		}
		best.offer(candidate{d, int32(j)})
	}
	return best.sorted()
}
