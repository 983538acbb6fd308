package geom

import (
	"fmt"
	"math"
	"slices"

	"github.com/webtensor/webtensor/core"
)

// The KDTree method: one k-d tree per cloud, built and searched on the host
// in float64 from exact copies of the points, so squared distances are
// sum((a - b)^2) without the cancellation of the matmul form.

// kdLeafSize is the most points a leaf holds: small enough to prune, large
// enough that the scan of a leaf beats another level of recursion.
const kdLeafSize = 24

type kdTree struct {
	pts   []float64 // the cloud's points, row-major, d per point
	d     int
	perm  []int32 // point order; every node owns a contiguous range of it
	nodes []kdNode
	// leafPts is pts in perm order, so that a leaf's points are adjacent
	// in memory: the scans of leaves are most of a search.
	leafPts []float64
}

// kdNode splits its range at split along dim: the left child's points have
// coordinate <= split, the right child's >= split. A leaf has left < 0.
type kdNode struct {
	lo, hi      int32
	left, right int32
	dim         int32
	split       float64
}

func newKDTree(pts []float64, d int) *kdTree {
	n := len(pts) / d
	t := &kdTree{pts: pts, d: d, perm: make([]int32, n), nodes: make([]kdNode, 0, 2*n/kdLeafSize+1)}
	for i := range t.perm {
		t.perm[i] = int32(i)
	}
	if n > 0 {
		t.build(0, n)
	}
	t.leafPts = make([]float64, 0, len(pts))
	for _, i := range t.perm {
		t.leafPts = append(t.leafPts, pts[int(i)*d:int(i)*d+d]...)
	}
	return t
}

func (t *kdTree) coord(i int32, dim int) float64 { return t.pts[int(i)*t.d+dim] }

// build makes the node for perm[lo:hi] and returns its id.
func (t *kdTree) build(lo, hi int) int32 {
	id := int32(len(t.nodes))
	t.nodes = append(t.nodes, kdNode{lo: int32(lo), hi: int32(hi), left: -1, right: -1})
	if hi-lo <= kdLeafSize {
		return id
	}
	dim, spread := t.widest(lo, hi)
	if spread == 0 { // all the points coincide: nothing to split
		return id
	}
	mid := (lo + hi) / 2
	t.selectNth(lo, hi, mid, dim)
	split := t.coord(t.perm[mid], dim)
	left := t.build(lo, mid)
	right := t.build(mid, hi)
	t.nodes[id].left, t.nodes[id].right = left, right
	t.nodes[id].dim, t.nodes[id].split = int32(dim), split
	return id
}

// widest is the dimension along which perm[lo:hi] spreads most.
func (t *kdTree) widest(lo, hi int) (dim int, spread float64) {
	spread = -1
	for k := range t.d {
		a, b := math.Inf(1), math.Inf(-1)
		for _, i := range t.perm[lo:hi] {
			v := t.coord(i, k)
			a, b = min(a, v), max(b, v)
		}
		if b-a > spread {
			dim, spread = k, b-a
		}
	}
	return dim, spread
}

// selectNth reorders perm[lo:hi] so that perm[nth] holds the point that
// would be there sorted along dim, smaller or equal ones before it and
// greater or equal ones after (quickselect, Hoare partition, median-of-three
// pivot): O(n) per level where a sort would be O(n log n).
func (t *kdTree) selectNth(lo, hi, nth, dim int) {
	p := t.perm
	key := func(i int) float64 { return t.coord(p[i], dim) }
	hi--
	for hi > lo {
		a, b, c := key(lo), key(lo+(hi-lo)/2), key(hi)
		pivot := max(min(a, b), min(max(a, b), c))
		i, j := lo, hi
		for i <= j {
			for key(i) < pivot {
				i++
			}
			for key(j) > pivot {
				j--
			}
			if i <= j {
				p[i], p[j] = p[j], p[i]
				i++
				j--
			}
		}
		switch {
		case nth <= j:
			hi = j
		case nth >= i:
			lo = i
		default:
			return
		}
	}
}

// dist2 is the squared distance from q to the point at perm position p.
func (t *kdTree) dist2(q []float64, p int) float64 {
	pt := t.leafPts[p*t.d : p*t.d+t.d]
	s := 0.0
	for k, v := range q {
		e := v - pt[k]
		s += e * e
	}
	return s
}

// knn offers every point of node id that may beat the current k-th best.
// rd is a lower bound on the squared distance from q to the node's cell,
// built from off, q's offsets to the splits crossed on the way (the
// incremental bound of Arya and Mount, as nanoflann). The far side is
// visited when its bound equals the k-th distance too: a tie there may have
// a lower index.
func (t *kdTree) knn(id int32, q []float64, rd float64, off []float64, skip int32, best *nearest) {
	nd := &t.nodes[id]
	if nd.left < 0 {
		for p := int(nd.lo); p < int(nd.hi); p++ {
			d := t.dist2(q, p)
			if best.full() && d > best.worst().d { // most points: rejected without a call
				continue
			}
			if i := t.perm[p]; i != skip {
				best.offer(candidate{d, i})
			}
		}
		return
	}
	diff := q[nd.dim] - nd.split
	near, far := nd.left, nd.right
	if diff >= 0 {
		near, far = far, near
	}
	t.knn(near, q, rd, off, skip, best)
	old := off[nd.dim]
	farRD := rd - old*old + diff*diff
	if !best.full() || farRD <= best.worst().d {
		off[nd.dim] = diff
		t.knn(far, q, farRD, off, skip, best)
		off[nd.dim] = old
	}
}

// within appends the points of node id closer than sqrt(r2) to q (rd and
// off as in knn).
func (t *kdTree) within(id int32, q []float64, r2, rd float64, off []float64, skip int32, out []int32) []int32 {
	nd := &t.nodes[id]
	if nd.left < 0 {
		for p := int(nd.lo); p < int(nd.hi); p++ {
			if i := t.perm[p]; i != skip && t.dist2(q, p) < r2 {
				out = append(out, i)
			}
		}
		return out
	}
	diff := q[nd.dim] - nd.split
	near, far := nd.left, nd.right
	if diff >= 0 {
		near, far = far, near
	}
	out = t.within(near, q, r2, rd, off, skip, out)
	old := off[nd.dim]
	if farRD := rd - old*old + diff*diff; farRD < r2 {
		off[nd.dim] = diff
		out = t.within(far, q, r2, farRD, off, skip, out)
		off[nd.dim] = old
	}
	return out
}

// hostPoints reads points to the host as float64, rejecting NaN and Inf
// (they have no place in an order by distance).
func hostPoints(fn, what string, t *core.Tensor) ([]float64, error) {
	v, err := t.Float64s()
	if err != nil {
		return nil, fmt.Errorf("geom: %s: %s: %w", fn, what, err)
	}
	d := t.Shape()[1]
	for i, e := range v {
		if math.IsNaN(e) || math.IsInf(e, 0) {
			return nil, fmt.Errorf("geom: %s: %s[%d, %d] = %v, want finite coordinates", fn, what, i/d, i%d, e)
		}
	}
	return v, nil
}

// kdSearch answers q for every row of y against its cloud of x; rows[i] are
// the neighbours of y row i, local to its cloud.
func kdSearch(fn string, x, y *core.Tensor, d int, clouds []cloud, q query) ([][]int32, error) {
	xs, err := hostPoints(fn, "x", x)
	if err != nil {
		return nil, err
	}
	ys := xs
	if !q.same {
		if ys, err = hostPoints(fn, "y", y); err != nil {
			return nil, err
		}
	}
	rows := make([][]int32, len(ys)/d)
	for _, c := range clouds {
		if c.xhi == c.xlo {
			continue
		}
		t := newKDTree(xs[c.xlo*d:c.xhi*d], d)
		parallelRows(c.yhi-c.ylo, func(lo, hi int) {
			best, off := &nearest{}, make([]float64, d)
			for p := lo; p < hi; p++ {
				r := p
				if q.same {
					// In tree order consecutive queries share neighbours,
					// so the leaves they scan are still in cache.
					r = int(t.perm[p])
				}
				i := c.ylo + r
				qp := ys[i*d : i*d+d]
				skip := int32(-1)
				if q.skipSelf() {
					skip = int32(r)
				}
				clear(off)
				if q.radius {
					rows[i] = capNeighbours(t.within(0, qp, q.r2, 0, off, skip, nil), q.max)
					continue
				}
				best.reset(q.k)
				t.knn(0, qp, 0, off, skip, best)
				rows[i] = best.sorted()
			}
		})
	}
	return rows, nil
}

// capNeighbours sorts a radius result by index and keeps the first max
// (0: all).
func capNeighbours(found []int32, max int) []int32 {
	slices.Sort(found)
	if max > 0 && len(found) > max {
		found = found[:max:max]
	}
	return found
}
