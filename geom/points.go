package geom

import (
	"fmt"
	"math"
	"runtime"
	"sync"

	"github.com/webtensor/webtensor/core"
)

// Neighbour search over point clouds, as torch_cluster's knn, radius,
// knn_graph and radius_graph (torch_geometric.nn.knn etc.). Points are rows
// of a float tensor [N, D]; an optional batch vector [N] (non-decreasing
// cloud ids, PyG's layout) says which cloud each point is in, and
// neighbours never cross clouds. Neighbours come nearest first, ties broken
// by the lowest index; the choice never depends on the number of threads.
// KDTree distances are exact sums of squared differences in float64;
// BruteForce ones carry the rounding of the matmul form in the points'
// dtype, so it agrees with KDTree on exact ties (points on a grid) but may
// order two neighbours within that rounding of each other differently.

// Method chooses how a Searcher finds neighbours.
type Method int

const (
	// Auto uses KDTree up to 8 dimensions and BruteForce above, where a
	// k-d tree prunes almost nothing.
	Auto Method = iota
	// KDTree searches a k-d tree per cloud on the host, in float64: about
	// N log N work against N^2 for brute force - on 10 clouds of 10k 3-D
	// points about 20 times faster on the CPU (BenchmarkKNNGraph100k). The
	// points are read to the host once; the edge list has to be there
	// anyway (Graph keeps host copies of its endpoints).
	KDTree
	// BruteForce computes squared distances with registry ops on the
	// points' device, |y|^2 - 2 y.x + |x|^2 (a matmul), one cloud and one
	// block of query rows at a time so no N^2 matrix is ever whole, and
	// picks the nearest on the host with a k-element heap per row: the
	// registry's topk sorts whole rows (CPU) or ranks every element against
	// its row (WebGPU), both far costlier than a heap for k << N. Right for
	// high-dimensional features (DynamicEdgeConv), where the matmul is the
	// work.
	BruteForce
)

func (m Method) String() string {
	switch m {
	case Auto:
		return "auto"
	case KDTree:
		return "kdtree"
	case BruteForce:
		return "brute-force"
	}
	return fmt.Sprintf("Method(%d)", int(m))
}

// Searcher finds neighbours; its zero value is ready to use (Auto).
type Searcher struct {
	Method Method
	// BlockEntries bounds a brute-force distance block (query rows times
	// cloud points, at least one row); 0 means 1<<22 (16 MiB of f32).
	BlockEntries int
}

// autoKDTreeMaxDims is where Auto switches from the k-d tree to brute force.
const autoKDTreeMaxDims = 8

// KNN finds for each point of y its k nearest points of x in the same cloud
// (fewer when the cloud is smaller), nearest first. It returns PyG's
// assignment index: an i64 tensor [2, E] on x's device, row 0 the y index
// (the centre), row 1 the x index (the neighbour). A nil batch puts every
// point in cloud 0.
func KNN(x, y *core.Tensor, k int, batchX, batchY *core.Tensor) (*core.Tensor, error) {
	return Searcher{}.KNN(x, y, k, batchX, batchY)
}

// KNNGraph links each point of x to its k nearest points of the same cloud,
// itself excluded unless loop. Edges go from the neighbour to the centre
// (PyG's source_to_target flow), grouped by centre, nearest first. Unlike
// PyG, which asks for k+1 and drops the point itself, a point with many
// exact duplicates still gets exactly k neighbours.
func KNNGraph(x *core.Tensor, k int, batch *core.Tensor, loop bool) (*Graph, error) {
	return Searcher{}.KNNGraph(x, k, batch, loop)
}

// Radius finds for each point of y the points of x in the same cloud closer
// than r (strictly, as torch_cluster), at most maxNeighbours of them (0: no
// limit) - the lowest indices, as torch_cluster's GPU kernel keeps, where
// its CPU one is biased by its tree. The result is laid out as KNN's, in
// index order per centre.
func Radius(x, y *core.Tensor, r float64, batchX, batchY *core.Tensor, maxNeighbours int) (*core.Tensor, error) {
	return Searcher{}.Radius(x, y, r, batchX, batchY, maxNeighbours)
}

// RadiusGraph links each point of x to the points of its cloud closer than
// r (itself excluded unless loop), at most maxNeighbours per point (0: no
// limit; PyG's default is 32). Edges go from the neighbour to the centre.
func RadiusGraph(x *core.Tensor, r float64, batch *core.Tensor, loop bool, maxNeighbours int) (*Graph, error) {
	return Searcher{}.RadiusGraph(x, r, batch, loop, maxNeighbours)
}

// KNN is the package's KNN with this searcher.
func (s Searcher) KNN(x, y *core.Tensor, k int, batchX, batchY *core.Tensor) (*core.Tensor, error) {
	if k <= 0 {
		return nil, fmt.Errorf("geom: KNN: k = %d, want k >= 1", k)
	}
	h, err := s.search("KNN", x, y, batchX, batchY, query{k: k})
	if err != nil {
		return nil, err
	}
	return h.assignment(x.Device())
}

// KNNGraph is the package's KNNGraph with this searcher.
func (s Searcher) KNNGraph(x *core.Tensor, k int, batch *core.Tensor, loop bool) (*Graph, error) {
	if k <= 0 {
		return nil, fmt.Errorf("geom: KNNGraph: k = %d, want k >= 1", k)
	}
	h, err := s.search("KNNGraph", x, nil, batch, nil, query{k: k, same: true, loop: loop})
	if err != nil {
		return nil, err
	}
	return h.graph("KNNGraph", x)
}

// Radius is the package's Radius with this searcher.
func (s Searcher) Radius(x, y *core.Tensor, r float64, batchX, batchY *core.Tensor, maxNeighbours int) (*core.Tensor, error) {
	q, err := radiusQuery("Radius", r, maxNeighbours)
	if err != nil {
		return nil, err
	}
	h, err := s.search("Radius", x, y, batchX, batchY, q)
	if err != nil {
		return nil, err
	}
	return h.assignment(x.Device())
}

// RadiusGraph is the package's RadiusGraph with this searcher.
func (s Searcher) RadiusGraph(x *core.Tensor, r float64, batch *core.Tensor, loop bool, maxNeighbours int) (*Graph, error) {
	q, err := radiusQuery("RadiusGraph", r, maxNeighbours)
	if err != nil {
		return nil, err
	}
	q.same, q.loop = true, loop
	h, err := s.search("RadiusGraph", x, nil, batch, nil, q)
	if err != nil {
		return nil, err
	}
	return h.graph("RadiusGraph", x)
}

func radiusQuery(fn string, r float64, maxNeighbours int) (query, error) {
	if !(r > 0) || math.IsInf(r, 0) {
		return query{}, fmt.Errorf("geom: %s: radius %v, want a finite r > 0", fn, r)
	}
	if maxNeighbours < 0 {
		return query{}, fmt.Errorf("geom: %s: maxNeighbours = %d, want >= 0 (0: no limit)", fn, maxNeighbours)
	}
	return query{radius: true, r2: r * r, max: maxNeighbours}, nil
}

// query is one search: k nearest, or everything closer than sqrt(r2) (at
// most max, 0 no limit). same: x and y are the same points, so a centre is
// skipped as its own neighbour unless loop.
type query struct {
	k          int
	radius     bool
	r2         float64
	max        int
	same, loop bool
}

// skipSelf reports whether row i must not find itself.
func (q query) skipSelf() bool { return q.same && !q.loop }

// cloud pairs the x rows [xlo, xhi) and y rows [ylo, yhi) of one cloud id.
type cloud struct{ xlo, xhi, ylo, yhi int }

// hits is a search's result, centre-major: pair e joins centre[e] (a row of
// y) to neighbour[e] (a row of x).
type hits struct{ centre, neighbour []int64 }

func (h hits) assignment(dev core.Device) (*core.Tensor, error) {
	e := len(h.centre)
	idx := make([]int64, 0, 2*e)
	idx = append(append(idx, h.centre...), h.neighbour...)
	t := core.FromSlice(idx, core.Shape{2, e}, dev)
	return t, t.Err()
}

func (h hits) graph(fn string, x *core.Tensor) (*Graph, error) {
	g, err := NewGraph(x.Shape()[0], h.neighbour, h.centre, nil, x.Device())
	if err != nil {
		return nil, fmt.Errorf("geom: %s: %w", fn, err)
	}
	return g, nil
}

// search checks the inputs, pairs the clouds and runs the chosen method.
func (s Searcher) search(fn string, x, y, batchX, batchY *core.Tensor, q query) (hits, error) {
	nx, d, err := pointsShape(fn, "x", x)
	if err != nil {
		return hits{}, err
	}
	ny := nx
	if q.same {
		y, batchY = x, batchX
	} else {
		var dy int
		if ny, dy, err = pointsShape(fn, "y", y); err != nil {
			return hits{}, err
		}
		if dy != d {
			return hits{}, fmt.Errorf("geom: %s: x has %d coordinates per point, y %d", fn, d, dy)
		}
		if x.Device() != y.Device() {
			return hits{}, fmt.Errorf("geom: %s: x is on %v, y on %v", fn, x.Device(), y.Device())
		}
	}
	xName := "batch_x"
	if q.same {
		xName = "batch"
	}
	bx, err := cloudRuns(fn, xName, batchX, nx)
	if err != nil {
		return hits{}, err
	}
	by, err := cloudRuns(fn, "batch_y", batchY, ny)
	if err != nil {
		return hits{}, err
	}
	clouds := pairClouds(bx, by)
	// The search itself is not part of any gradient.
	x, y = x.Detach(), y.Detach()
	m := s.Method
	if m == Auto {
		m = KDTree
		if d > autoKDTreeMaxDims {
			m = BruteForce
		}
	}
	var rows [][]int32
	switch m {
	case KDTree:
		countHostWork(x, hostSearchKDTree)
		rows, err = kdSearch(fn, x, y, d, clouds, q)
	case BruteForce:
		countHostWork(x, hostSearchBrute)
		rows, err = s.bruteSearch(fn, x, y, clouds, q)
	default:
		err = fmt.Errorf("geom: %s: unknown search method %v", fn, m)
	}
	if err != nil {
		return hits{}, err
	}
	return collect(rows, clouds), nil
}

// pointsShape checks that t is a float tensor [N, D] with D >= 1.
func pointsShape(fn, what string, t *core.Tensor) (n, d int, err error) {
	if t == nil {
		return 0, 0, fmt.Errorf("geom: %s: %s is nil", fn, what)
	}
	if err := t.Err(); err != nil {
		return 0, 0, fmt.Errorf("geom: %s: %s: %w", fn, what, err)
	}
	s := t.Shape()
	if len(s) != 2 || s[1] < 1 {
		return 0, 0, fmt.Errorf("geom: %s: %s has shape %v, want [N, D] with D >= 1 (one row per point)", fn, what, s)
	}
	if !t.DType().IsFloat() {
		return 0, 0, fmt.Errorf("geom: %s: %s is %v, want a float dtype", fn, what, t.DType())
	}
	return s[0], s[1], nil
}

// run is the rows [lo, hi) of cloud id.
type run struct {
	id     int64
	lo, hi int
}

// cloudRuns reads a batch vector for n points (nil: one cloud 0) into runs
// of equal ids. Ids must not decrease, as in PyG's batches, so that every
// cloud is one contiguous block of rows.
func cloudRuns(fn, what string, batch *core.Tensor, n int) ([]run, error) {
	if batch == nil {
		if n == 0 {
			return nil, nil
		}
		return []run{{0, 0, n}}, nil
	}
	if err := batch.Err(); err != nil {
		return nil, fmt.Errorf("geom: %s: %s: %w", fn, what, err)
	}
	if s := batch.Shape(); len(s) != 1 || s[0] != n {
		return nil, fmt.Errorf("geom: %s: %s has shape %v for %d points, want [%d]", fn, what, s, n, n)
	}
	if batch.DType().IsFloat() || batch.DType() == core.Bool {
		return nil, fmt.Errorf("geom: %s: %s is %v, want integer cloud ids", fn, what, batch.DType())
	}
	ids, err := batch.Int64s()
	if err != nil {
		return nil, fmt.Errorf("geom: %s: %s: %w", fn, what, err)
	}
	var runs []run
	for i, id := range ids {
		switch {
		case id < 0:
			return nil, fmt.Errorf("geom: %s: %s[%d] = %d, want cloud ids >= 0", fn, what, i, id)
		case i > 0 && id < ids[i-1]:
			return nil, fmt.Errorf("geom: %s: %s is not sorted: %s[%d] = %d after %d (each cloud's points must be contiguous, as in PyG batches)", fn, what, what, i, id, ids[i-1])
		case i == 0 || id != ids[i-1]:
			runs = append(runs, run{id: id, lo: i, hi: i + 1})
		default:
			runs[len(runs)-1].hi = i + 1
		}
	}
	return runs, nil
}

// pairClouds matches x and y runs by cloud id; y runs without x points are
// kept (their centres find nothing), x runs without y points dropped.
func pairClouds(bx, by []run) []cloud {
	var out []cloud
	i := 0
	for _, r := range by {
		for i < len(bx) && bx[i].id < r.id {
			i++
		}
		c := cloud{ylo: r.lo, yhi: r.hi}
		if i < len(bx) && bx[i].id == r.id {
			c.xlo, c.xhi = bx[i].lo, bx[i].hi
		}
		out = append(out, c)
	}
	return out
}

// collect turns per-row neighbour lists (local to each cloud, rows in y
// order) into global index pairs.
func collect(rows [][]int32, clouds []cloud) hits {
	total := 0
	for _, r := range rows {
		total += len(r)
	}
	h := hits{centre: make([]int64, 0, total), neighbour: make([]int64, 0, total)}
	for _, c := range clouds {
		for i := c.ylo; i < c.yhi; i++ {
			for _, j := range rows[i] {
				h.centre = append(h.centre, int64(i))
				h.neighbour = append(h.neighbour, int64(c.xlo)+int64(j))
			}
		}
	}
	return h
}

// candidate is a point at squared distance d; candidates order by distance,
// then by index, which is how every tie is broken.
type candidate struct {
	d float64
	j int32
}

func (a candidate) before(b candidate) bool { return a.d < b.d || (a.d == b.d && a.j < b.j) }

// nearest keeps the k best candidates seen as a max-heap on (d, j).
type nearest struct {
	k    int
	heap []candidate
}

func (n *nearest) reset(k int) { n.k, n.heap = k, n.heap[:0] }

// full reports whether k candidates are held; worst is then the k-th best.
func (n *nearest) full() bool       { return len(n.heap) == n.k }
func (n *nearest) worst() candidate { return n.heap[0] }
func (n *nearest) offer(c candidate) {
	h := n.heap
	if len(h) < n.k {
		h = append(h, c)
		for i := len(h) - 1; i > 0; {
			p := (i - 1) / 2
			if !h[p].before(h[i]) {
				break
			}
			h[p], h[i] = h[i], h[p]
			i = p
		}
		n.heap = h
		return
	}
	if !c.before(h[0]) {
		return
	}
	h[0] = c
	n.siftDown()
}

// sorted empties the heap into a new slice of indices, nearest first.
func (n *nearest) sorted() []int32 {
	out := make([]int32, len(n.heap))
	for i := len(out) - 1; i >= 0; i-- {
		out[i] = n.heap[0].j
		last := len(n.heap) - 1
		n.heap[0] = n.heap[last]
		n.heap = n.heap[:last]
		n.siftDown()
	}
	return out
}

func (n *nearest) siftDown() {
	h := n.heap
	for i := 0; ; {
		big, l, r := i, 2*i+1, 2*i+2
		if l < len(h) && h[big].before(h[l]) {
			big = l
		}
		if r < len(h) && h[big].before(h[r]) {
			big = r
		}
		if big == i {
			return
		}
		h[i], h[big] = h[big], h[i]
		i = big
	}
}

// parallelRows runs body over [0, n) split across the available cores;
// results never depend on the split.
func parallelRows(n int, body func(lo, hi int)) {
	workers := runtime.GOMAXPROCS(0)
	if workers > n/64 {
		workers = n / 64
	}
	if workers <= 1 {
		body(0, n)
		return
	}
	var wg sync.WaitGroup
	step := (n + workers - 1) / workers
	for lo := 0; lo < n; lo += step {
		wg.Add(1)
		go func(lo, hi int) {
			defer wg.Done()
			body(lo, hi)
		}(lo, min(lo+step, n))
	}
	wg.Wait()
}
