package geom

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/webtensor/webtensor/backends/webgpu/webgputest"
	"github.com/webtensor/webtensor/core"
)

// Neighbour search against the reference in testdata/pyg_points.safetensors
// (testdata/gen_pyg_points.py, `make geom-vectors`): random clouds, batched
// ones with a cloud smaller than k and a query cloud with no points, and
// integer grids whose many exact ties must go to the lowest index. Every
// method must give exactly the reference's pairs, in its order.

func loadPointRef(t *testing.T, dt core.DType, dev core.Device) []refCase {
	t.Helper()
	out := loadRefFile(t, "testdata/pyg_points.safetensors", dt, dev)
	slices.SortFunc(out, func(a, b refCase) int { return strings.Compare(a.name, b.name) })
	return out
}

func refCasesOfKind(t *testing.T, dt core.DType, dev core.Device, kinds ...string) []refCase {
	var out []refCase
	for _, c := range loadPointRef(t, dt, dev) {
		if slices.Contains(kinds, c.attrs["kind"].(string)) {
			out = append(out, c)
		}
	}
	require.NotEmpty(t, out, "no reference cases of kind %v", kinds)
	return out
}

// runSearchCase answers a reference case with s, as a [2, E] index in the
// reference's layout (the *_graph forms in PyG's flow layout, source first).
func runSearchCase(t *testing.T, s Searcher, c refCase) []int64 {
	t.Helper()
	a := c.attrs
	x, bx := c.get("x"), c.get("batch_x")
	var idx *core.Tensor
	var err error
	switch a["kind"] {
	case "knn":
		idx, err = s.KNN(x, c.get("y"), int(a["k"].(float64)), bx, c.get("batch_y"))
	case "radius":
		idx, err = s.Radius(x, c.get("y"), a["r"].(float64), bx, c.get("batch_y"), int(a["max"].(float64)))
	case "knn_graph", "radius_graph":
		var g *Graph
		if a["kind"] == "knn_graph" {
			g, err = s.KNNGraph(x, int(a["k"].(float64)), bx, a["loop"].(bool))
		} else {
			g, err = s.RadiusGraph(x, a["r"].(float64), bx, a["loop"].(bool), int(a["max"].(float64)))
		}
		require.NoError(t, err)
		require.Equal(t, x.Shape()[0], g.NumNodes)
		require.Equal(t, x.Device(), g.Device())
		src, dst := g.Edges()
		return append(slices.Clone(src), dst...)
	}
	require.NoError(t, err)
	require.Equal(t, x.Device(), idx.Device())
	v, err := idx.Int64s()
	require.NoError(t, err)
	return v
}

func runSearchReference(t *testing.T, dev core.Device, dt core.DType) {
	for _, m := range []Searcher{{Method: KDTree}, {Method: BruteForce}, {Method: BruteForce, BlockEntries: 50}, {}} {
		for _, c := range refCasesOfKind(t, dt, dev, "knn", "radius", "knn_graph", "radius_graph") {
			t.Run(fmt.Sprintf("%v/block%d/%s", m.Method, m.BlockEntries, c.name), func(t *testing.T) {
				want, err := c.get("index").Int64s()
				require.NoError(t, err)
				require.Equal(t, want, runSearchCase(t, m, c))
			})
		}
	}
}

func TestSearchMatchesReferenceOnCPU(t *testing.T) {
	runSearchReference(t, core.CPU, core.F64)
}

func TestSearchMatchesReferenceOnWebGPU(t *testing.T) {
	dev := webgputest.Device
	webgputest.Need(t)
	// f32 points: the grids stay exact; the random clouds hold no near-tie
	// that rounding to f32 would flip.
	runSearchReference(t, dev, core.F32)
}

// randomClouds makes n points of dimension d in clouds of the given sizes:
// uniform in [0, 1), or integers below grid (many exact ties) when grid > 0.
func randomClouds(seed uint64, d, grid int, sizes ...int) (x, batch *core.Tensor) {
	r := rand.New(rand.NewPCG(seed, 1))
	var pts []float64
	var ids []int64
	for c, n := range sizes {
		for range n {
			for range d {
				if grid > 0 {
					pts = append(pts, float64(r.IntN(grid)))
				} else {
					pts = append(pts, r.Float64())
				}
			}
			ids = append(ids, int64(c))
		}
	}
	return core.FromFloat64s(core.F64, core.Shape{len(ids), d}, pts), core.FromSlice(ids, core.Shape{len(ids)})
}

// The k-d tree's pruning against brute force on clouds big enough to have
// a deep tree, with ties, in 3 and 5 dimensions, every query form.
func TestSearchMethodsAgree(t *testing.T) {
	for _, tc := range []struct {
		name    string
		d, grid int
	}{{"uniform3d", 3, 0}, {"grid3d", 3, 6}, {"uniform5d", 5, 0}, {"grid2d", 2, 9}} {
		x, b := randomClouds(7, tc.d, tc.grid, 700, 1, 450, 0, 300)
		y, by := randomClouds(8, tc.d, tc.grid, 90, 20, 60, 5, 40)
		r := 0.2
		if tc.grid > 0 {
			r = 2.5
		}
		kd, bf := Searcher{Method: KDTree}, Searcher{Method: BruteForce, BlockEntries: 40000}
		for _, k := range []int{1, 8, 30} {
			for _, loop := range []bool{false, true} {
				g1, err := kd.KNNGraph(x, k, b, loop)
				require.NoError(t, err)
				g2, err := bf.KNNGraph(x, k, b, loop)
				require.NoError(t, err)
				requireSameGraph(t, fmt.Sprintf("%s knn_graph k=%d loop=%v", tc.name, k, loop), g1, g2)
			}
			i1, err := kd.KNN(x, y, k, b, by)
			require.NoError(t, err)
			i2, err := bf.KNN(x, y, k, b, by)
			require.NoError(t, err)
			requireSameIndex(t, fmt.Sprintf("%s knn k=%d", tc.name, k), i1, i2)
		}
		for _, max := range []int{0, 5} {
			g1, err := kd.RadiusGraph(x, r, b, false, max)
			require.NoError(t, err)
			g2, err := bf.RadiusGraph(x, r, b, false, max)
			require.NoError(t, err)
			requireSameGraph(t, fmt.Sprintf("%s radius_graph max=%d", tc.name, max), g1, g2)
			i1, err := kd.Radius(x, y, r, b, by, max)
			require.NoError(t, err)
			i2, err := bf.Radius(x, y, r, b, by, max)
			require.NoError(t, err)
			requireSameIndex(t, fmt.Sprintf("%s radius max=%d", tc.name, max), i1, i2)
		}
	}
}

func requireSameGraph(t *testing.T, what string, a, b *Graph) {
	t.Helper()
	as, ad := a.Edges()
	bs, bd := b.Edges()
	require.Positive(t, len(as), what)
	require.Equal(t, ad, bd, "%s: centres", what)
	require.Equal(t, as, bs, "%s: neighbours", what)
}

func requireSameIndex(t *testing.T, what string, a, b *core.Tensor) {
	t.Helper()
	av, err := a.Int64s()
	require.NoError(t, err)
	bv, err := b.Int64s()
	require.NoError(t, err)
	require.Positive(t, len(av), what)
	require.Equal(t, av, bv, what)
}

func TestKNNGraphStructure(t *testing.T) {
	x, b := randomClouds(3, 3, 0, 30, 3, 40)
	g, err := KNNGraph(x, 4, b, false)
	require.NoError(t, err)
	src, dst := g.Edges()
	// Cloud 1 has 3 points: each gets the other 2.
	require.Equal(t, 30*4+3*2+40*4, len(src))
	ids, _ := b.Int64s()
	for e := range src {
		require.NotEqual(t, src[e], dst[e], "self loop at edge %d", e)
		require.Equal(t, ids[src[e]], ids[dst[e]], "edge %d crosses clouds", e)
	}
	require.True(t, slices.IsSorted(dst), "edges grouped by centre")
}

func TestSearchErrors(t *testing.T) {
	x, b := randomClouds(1, 3, 0, 5, 5)
	short := core.FromSlice([]int64{0, 0, 1}, core.Shape{3})
	unsorted := core.FromSlice([]int64{0, 0, 1, 1, 1, 0, 1, 1, 1, 1}, core.Shape{10})
	flat := core.FromFloat64s(core.F64, core.Shape{10}, make([]float64, 10))
	boolBatch := core.Call1("cast", core.Attrs{"dtype": core.Bool}, core.FromSlice([]int64{0, 1}, core.Shape{2}))
	negative := core.FromSlice([]int64{-1, 0, 0, 0, 0, 0, 0, 0, 0, 0}, core.Shape{10})
	nan := core.FromFloat64s(core.F64, core.Shape{2, 2}, []float64{0, 1, 2, math.NaN()})
	for _, m := range []Method{KDTree, BruteForce} {
		s := Searcher{Method: m}
		for _, tc := range []struct {
			name, want string
			run        func() error
		}{
			{"k=0", "k = 0, want k >= 1", func() error { _, err := s.KNNGraph(x, 0, b, false); return err }},
			{"k<0", "k = -2, want k >= 1", func() error { _, err := s.KNN(x, x, -2, b, b); return err }},
			{"batch length", "batch has shape [3] for 10 points, want [10]", func() error { _, err := s.KNNGraph(x, 2, short, false); return err }},
			{"batch_y length", "batch_y has shape [3] for 10 points", func() error { _, err := s.KNN(x, x, 2, b, short); return err }},
			{"unsorted batch", "batch is not sorted: batch[5] = 0 after 1", func() error { _, err := s.RadiusGraph(x, 1, unsorted, false, 0); return err }},
			{"float batch", "batch is f64, want integer cloud ids", func() error { _, err := s.KNNGraph(x, 2, flat, false); return err }},
			{"bool batch", "want integer cloud ids", func() error { _, err := s.KNN(nan, nan, 2, boolBatch, nil); return err }},
			{"negative id", "batch_y[0] = -1, want cloud ids >= 0", func() error { _, err := s.KNN(x, x, 2, b, negative); return err }},
			{"1-D points", "x has shape [10], want [N, D]", func() error { _, err := s.KNNGraph(flat, 2, nil, false); return err }},
			{"1-D y", "y has shape [10], want [N, D]", func() error { _, err := s.Radius(x, flat, 1, nil, nil, 0); return err }},
			{"dims differ", "x has 3 coordinates per point, y 2", func() error { _, err := s.KNN(x, nan, 1, nil, nil); return err }},
			{"radius", "radius 0, want a finite r > 0", func() error { _, err := s.RadiusGraph(x, 0, b, false, 0); return err }},
			{"max", "maxNeighbours = -1", func() error { _, err := s.Radius(x, x, 1, b, b, -1); return err }},
			{"nan", "NaN", func() error { _, err := s.KNNGraph(nan, 1, nil, false); return err }},
			{"nil", "x is nil", func() error { _, err := s.KNNGraph(nil, 1, nil, false); return err }},
		} {
			t.Run(fmt.Sprintf("%v/%s", m, tc.name), func(t *testing.T) {
				err := tc.run()
				require.Error(t, err)
				require.Contains(t, err.Error(), tc.want)
				require.True(t, strings.HasPrefix(err.Error(), "geom: "), err.Error())
			})
		}
	}
}

// BenchmarkKNNGraph100k is PyG's knn_graph(x, k=16, batch) on 100k 3-D
// points in 10 clouds of 10k on the CPU (f32, as a model would hold them);
// testdata/bench_knn_torch.py times the same in torch.
func BenchmarkKNNGraph100k(b *testing.B) {
	const n, clouds = 100_000, 10
	x := core.Call1("rand", core.Attrs{"shape": []int{n, 3}, "seed": 1, "offset": 0})
	ids := make([]int64, n)
	for i := range ids {
		ids[i] = int64(i / (n / clouds))
	}
	batch := core.FromSlice(ids, core.Shape{n})
	for _, m := range []Method{KDTree, BruteForce} {
		b.Run(m.String(), func(b *testing.B) {
			if m == BruteForce && testing.Short() {
				b.Skip("brute force over 10 clouds of 10k takes seconds")
			}
			for range b.N {
				g, err := Searcher{Method: m}.KNNGraph(x, 16, batch, false)
				if err != nil {
					b.Fatal(err)
				}
				if g.NumEdges() != n*16 {
					b.Fatalf("%d edges, want %d", g.NumEdges(), n*16)
				}
			}
		})
	}
}
