package geom

import (
	"bufio"
	"compress/gzip"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/webtensor/webtensor/core"
)

// LoadEdgeList reads a text edge list: one edge "src dst" or "src dst
// weight" per line, separated by spaces, tabs or commas; blank lines and
// lines starting with # or % are skipped. numNodes <= 0 takes the largest
// id + 1.
func LoadEdgeList(path string, numNodes int, dev ...core.Device) (*Graph, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("geom: LoadEdgeList: %w", err)
	}
	defer f.Close()
	var src, dst []int64
	var w []float64
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<16), 1<<20)
	maxID := int64(-1)
	for line := 1; sc.Scan(); line++ {
		text := strings.TrimSpace(sc.Text())
		if text == "" || text[0] == '#' || text[0] == '%' {
			continue
		}
		fields := strings.FieldsFunc(text, func(r rune) bool { return r == ' ' || r == '\t' || r == ',' })
		if len(fields) < 2 || len(fields) > 3 {
			return nil, fmt.Errorf("geom: LoadEdgeList %s:%d: %q is not \"src dst [weight]\"", path, line, text)
		}
		s, err1 := strconv.ParseInt(fields[0], 10, 64)
		d, err2 := strconv.ParseInt(fields[1], 10, 64)
		if err1 != nil || err2 != nil || s < 0 || d < 0 {
			return nil, fmt.Errorf("geom: LoadEdgeList %s:%d: node ids must be integers >= 0, got %q", path, line, text)
		}
		if len(fields) == 3 {
			v, err := strconv.ParseFloat(fields[2], 64)
			if err != nil {
				return nil, fmt.Errorf("geom: LoadEdgeList %s:%d: bad weight %q", path, line, fields[2])
			}
			if w == nil && len(src) > 0 {
				return nil, fmt.Errorf("geom: LoadEdgeList %s:%d: a weight after %d edges without one", path, line, len(src))
			}
			w = append(w, v)
		} else if w != nil {
			return nil, fmt.Errorf("geom: LoadEdgeList %s:%d: no weight, but earlier edges have one", path, line)
		}
		src, dst = append(src, s), append(dst, d)
		maxID = max(maxID, s, d)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("geom: LoadEdgeList %s: %w", path, err)
	}
	if numNodes <= 0 {
		numNodes = int(maxID + 1)
	}
	return NewGraph(numNodes, src, dst, w, dev...)
}

// LoadOGBNode reads an OGB node property prediction dataset from the layout
// its downloader leaves (dir/raw/edge.csv[.gz], node-feat.csv[.gz],
// node-label.csv[.gz], and dir/split/<scheme>/train.csv[.gz], test.csv[.gz]),
// with no download: the files must be there. Edges are stored in both
// directions when undirected (OGB's arxiv is directed; products is not).
func LoadOGBNode(dir string, undirected bool, dev ...core.Device) (*Dataset, error) {
	edges, err := readCSV(filepath.Join(dir, "raw", "edge.csv"))
	if err != nil {
		return nil, err
	}
	feat, err := readCSV(filepath.Join(dir, "raw", "node-feat.csv"))
	if err != nil {
		return nil, err
	}
	n := len(feat)
	if n == 0 {
		return nil, fmt.Errorf("geom: LoadOGBNode %s: no node features", dir)
	}
	var src, dst []int64
	for i, e := range edges {
		if len(e) != 2 {
			return nil, fmt.Errorf("geom: LoadOGBNode %s: edge line %d has %d fields", dir, i+1, len(e))
		}
		src, dst = append(src, int64(e[0])), append(dst, int64(e[1]))
		if undirected {
			src, dst = append(src, int64(e[1])), append(dst, int64(e[0]))
		}
	}
	g, err := NewGraph(n, src, dst, nil, dev...)
	if err != nil {
		return nil, fmt.Errorf("geom: LoadOGBNode %s: %w", dir, err)
	}
	f := len(feat[0])
	x := make([]float64, 0, n*f)
	for i, row := range feat {
		if len(row) != f {
			return nil, fmt.Errorf("geom: LoadOGBNode %s: feature row %d has %d values, row 1 has %d", dir, i+1, len(row), f)
		}
		x = append(x, row...)
	}
	d := &Dataset{Graph: g, X: core.FromFloat64s(core.F32, core.Shape{n, f}, x, dev...)}
	if labels, err := readCSV(filepath.Join(dir, "raw", "node-label.csv")); err == nil {
		y := make([]int64, n)
		for i, row := range labels {
			if i < n && len(row) > 0 {
				y[i] = int64(row[0])
				d.NumClasses = max(d.NumClasses, int(y[i])+1)
			}
		}
		d.Y = core.FromSlice(y, core.Shape{n}, dev...)
	}
	splits, _ := filepath.Glob(filepath.Join(dir, "split", "*"))
	if len(splits) > 0 {
		if d.Train, err = readIndex(filepath.Join(splits[0], "train.csv"), dev); err != nil {
			return nil, err
		}
		if d.Test, err = readIndex(filepath.Join(splits[0], "test.csv"), dev); err != nil {
			return nil, err
		}
	}
	return d, firstErr(d.X, d.Y, d.Train, d.Test)
}

func readIndex(path string, dev []core.Device) (*core.Tensor, error) {
	rows, err := readCSV(path)
	if err != nil {
		return nil, err
	}
	idx := make([]int64, len(rows))
	for i, r := range rows {
		idx[i] = int64(r[0])
	}
	return core.FromSlice(idx, core.Shape{len(idx)}, dev...), nil
}

// readCSV reads a headerless numeric CSV, from path or path.gz.
func readCSV(path string) ([][]float64, error) {
	f, err := os.Open(path)
	var r io.Reader = f
	if err != nil {
		if f, err = os.Open(path + ".gz"); err != nil {
			return nil, fmt.Errorf("geom: neither %s nor %s.gz exists (OGB files are read from disk, never downloaded)", path, path)
		}
		zr, err := gzip.NewReader(f)
		if err != nil {
			f.Close()
			return nil, fmt.Errorf("geom: %s.gz: %w", path, err)
		}
		r = zr
	}
	defer f.Close()
	var out [][]float64
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<16), 1<<24)
	for line := 1; sc.Scan(); line++ {
		text := strings.TrimSpace(sc.Text())
		if text == "" {
			continue
		}
		parts := strings.Split(text, ",")
		row := make([]float64, len(parts))
		for j, p := range parts {
			if row[j], err = strconv.ParseFloat(strings.TrimSpace(p), 64); err != nil {
				return nil, fmt.Errorf("geom: %s:%d: %q is not a number", path, line, p)
			}
		}
		out = append(out, row)
	}
	return out, sc.Err()
}

// BatchGraphs joins small graphs into one disjoint graph for graph
// classification (PyG's Batch): node ids shifted, features concatenated,
// and a batch vector [total nodes] naming each node's graph, for Pool.
func BatchGraphs(graphs []*Graph, xs []*core.Tensor, dev ...core.Device) (g *Graph, x, batch *core.Tensor, err error) {
	if len(graphs) == 0 || len(graphs) != len(xs) {
		return nil, nil, nil, fmt.Errorf("geom: BatchGraphs: %d graphs and %d feature tensors", len(graphs), len(xs))
	}
	var src, dst, b []int64
	var w []float64
	weighted := graphs[0].weight != nil
	offset := int64(0)
	for i, gi := range graphs {
		if (gi.weight != nil) != weighted {
			return nil, nil, nil, fmt.Errorf("geom: BatchGraphs: graph %d has weights and graph 0 has not, or the other way", i)
		}
		if s := xs[i].Shape(); len(s) == 0 || s[0] != gi.NumNodes {
			return nil, nil, nil, fmt.Errorf("geom: BatchGraphs: graph %d has %d nodes but features of shape %v", i, gi.NumNodes, s)
		}
		for k := range gi.src {
			src, dst = append(src, gi.src[k]+offset), append(dst, gi.dst[k]+offset)
		}
		w = append(w, gi.weight...)
		for range gi.NumNodes {
			b = append(b, int64(i))
		}
		offset += int64(gi.NumNodes)
	}
	if !weighted {
		w = nil
	}
	if g, err = NewGraph(int(offset), src, dst, w, dev...); err != nil {
		return nil, nil, nil, err
	}
	parts := make([]*core.Tensor, len(xs))
	for i, xi := range xs {
		parts[i] = xi.To(devOr(dev))
	}
	x = core.Call1("concat", core.Attrs{"axis": 0}, parts...)
	batch = core.FromSlice(b, core.Shape{len(b)}, dev...)
	return g, x, batch, firstErr(x, batch)
}
