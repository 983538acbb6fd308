package onnx

import (
	"fmt"

	"github.com/webtensor/webtensor/core"
	pb "github.com/webtensor/webtensor/onnx/internal/onnxpb"
)

// TfIdfVectorizer over integer n-grams, composed of registry ops so it
// runs on every backend and traces. The pool is read at load into one
// [grams, n] table per n-gram length in [min_gram_length,
// max_gram_length]. At run time, for each length n and skip distance d
// (1 for unigrams, which skipping does not change; 1 to max_skip_count+1
// otherwise), the input's windows of n items d apart are compared with
// every n-gram of the table ([rows, windows, grams, n] comparisons), the
// matches counted per n-gram and added into the output columns with a
// matmul against a one-hot map from n-grams to ngram_indexes. The
// comparison grid grows with the vocabulary times the row's length; a
// model with a very large pool holds that much. String pools
// (pool_strings) are refused at load.

func init() {
	operators["TfIdfVectorizer"] = &opSpec{attrs: []string{"max_gram_length", "max_skip_count", "min_gram_length", "mode",
		"ngram_counts", "ngram_indexes", "pool_int64s", "pool_strings", "weights"}, prepare: prepareTfIdf, run: tfIdf}
}

// tfIdfGrams is the pool's n-grams of one length n: their items ([grams, n],
// row-major) and output columns.
type tfIdfGrams struct {
	n       int
	items   []int64
	columns []int
}

// tfIdfTable is a TfIdfVectorizer's pool by n-gram length; weights (nil
// without them) are by output column, as ONNX's reference and
// onnxruntime read them.
type tfIdfTable struct {
	mode     string
	maxSkip  int
	outSize  int
	byLength []tfIdfGrams
	weights  []float64
}

func prepareTfIdf(n *node) error {
	intAttr := func(name string) (int64, error) {
		a := n.attrs[name]
		if a == nil {
			return 0, fmt.Errorf("attribute %q is required", name)
		}
		if a.GetType() != pb.AttributeProto_INT {
			return 0, fmt.Errorf("attribute %q is a %s, want INT", name, a.GetType())
		}
		return a.GetI(), nil
	}
	lo, err := intAttr("min_gram_length")
	if err != nil {
		return err
	}
	hi, err := intAttr("max_gram_length")
	if err != nil {
		return err
	}
	skip, err := intAttr("max_skip_count")
	if err != nil {
		return err
	}
	if lo < 1 || hi < lo || skip < 0 {
		return fmt.Errorf("min_gram_length %d, max_gram_length %d and max_skip_count %d: want 1 <= min <= max and a skip count of at least 0", lo, hi, skip)
	}
	t := &tfIdfTable{maxSkip: int(skip)}
	mode := n.attrs["mode"]
	if mode == nil {
		return fmt.Errorf("attribute \"mode\" is required")
	}
	switch t.mode = string(mode.GetS()); t.mode {
	case "TF", "IDF", "TFIDF":
	default:
		return fmt.Errorf("mode %q is not one of TF, IDF, TFIDF", t.mode)
	}
	if n.attrs["pool_strings"] != nil {
		return fmt.Errorf("attribute \"pool_strings\" is not supported: only integer n-grams (pool_int64s) are")
	}
	poolAttr, countsAttr, indexAttr := n.attrs["pool_int64s"], n.attrs["ngram_counts"], n.attrs["ngram_indexes"]
	if poolAttr == nil || countsAttr == nil || indexAttr == nil {
		return fmt.Errorf("attributes pool_int64s, ngram_counts and ngram_indexes are required")
	}
	pool, counts, indexes := poolAttr.GetInts(), countsAttr.GetInts(), indexAttr.GetInts()
	var weights []float32
	if w := n.attrs["weights"]; w != nil {
		weights = w.GetFloats()
		if len(weights) != len(indexes) {
			return fmt.Errorf("weights has %d values for %d ngram_indexes", len(weights), len(indexes))
		}
	}
	for _, ix := range indexes {
		if ix < 0 {
			return fmt.Errorf("ngram_indexes %v has a negative index", indexes)
		}
		t.outSize = max(t.outSize, int(ix)+1)
	}
	if weights != nil {
		if len(weights) < t.outSize {
			return fmt.Errorf("weights has %d values for %d output columns", len(weights), t.outSize)
		}
		for _, w := range weights[:t.outSize] {
			t.weights = append(t.weights, float64(w))
		}
	}
	id := 0 // the n-gram's position in ngram_indexes
	for i, start := range counts {
		end := int64(len(pool))
		if i+1 < len(counts) {
			end = counts[i+1]
		}
		size := i + 1
		if start < 0 || end < start || end > int64(len(pool)) {
			return fmt.Errorf("ngram_counts %v does not split the pool's %d items into runs", counts, len(pool))
		}
		if (end-start)%int64(size) != 0 {
			return fmt.Errorf("ngram_counts %v gives the %d-grams %d items, not a multiple of %d", counts, size, end-start, size)
		}
		grams := int(end-start) / size
		if id+grams > len(indexes) {
			return fmt.Errorf("ngram_indexes has %d values, fewer than the pool's n-grams", len(indexes))
		}
		if int64(size) >= lo && int64(size) <= hi && grams > 0 {
			g := tfIdfGrams{n: size, items: pool[start:end]}
			for k := range grams {
				g.columns = append(g.columns, int(indexes[id+k]))
			}
			t.byLength = append(t.byLength, g)
		}
		id += grams
	}
	if id != len(indexes) {
		return fmt.Errorf("ngram_indexes has %d values for the pool's %d n-grams", len(indexes), id)
	}
	n.prepared = t
	return nil
}

func tfIdf(c *ctx) ([]*core.Tensor, error) {
	t := c.n.prepared.(*tfIdfTable)
	x := c.in(0)
	if c.err != nil {
		return nil, nil
	}
	if (x.Rank() != 1 && x.Rank() != 2) || x.DType().IsFloat() || x.DType() == core.Bool {
		c.fail("X is a %s tensor of shape %v, want integers of shape [C] or [N, C]", x.DType(), x.Shape())
		return nil, nil
	}
	flat := x.Rank() == 1
	if flat {
		x = x.Reshape([]int{1, x.Numel()})
	}
	rows, cols := x.Shape()[0], x.Shape()[1]
	dev := x.Device()
	x = x.Cast(core.I64)
	y := core.Zeros(core.Shape{rows, t.outSize}, core.F32, dev)
	for _, g := range t.byLength {
		grams := len(g.columns)
		table := core.FromSlice(g.items, core.Shape{grams, g.n}, dev)
		onehot := make([]float64, grams*t.outSize)
		for k, col := range g.columns {
			onehot[k*t.outSize+col] = 1
		}
		toColumns := core.FromFloat64s(core.F32, core.Shape{grams, t.outSize}, onehot, dev)
		skips := t.maxSkip + 1
		if g.n == 1 {
			skips = 1
		}
		for d := 1; d <= skips; d++ {
			windows := cols - (g.n-1)*d
			if windows <= 0 {
				break
			}
			parts := make([]*core.Tensor, g.n)
			for j := range parts {
				parts[j] = call("slice", core.Attrs{"axis": 1, "start": j * d, "stop": j*d + windows}, x)
			}
			w := call("stack", core.Attrs{"axis": 2}, parts...).Reshape([]int{rows, windows, 1, g.n})
			same := call("eq", nil, w, table).Cast(core.I32)                                                                    // [rows, windows, grams, n]
			whole := call("eq", nil, call("sum", core.Attrs{"axes": []int{3}}, same), core.Scalar(float64(g.n), core.I32, dev)) // [rows, windows, grams]
			found := call("sum", core.Attrs{"axes": []int{1}}, whole.Cast(core.F32))                                            // [rows, grams]
			y = call("add", nil, y, call("matmul", nil, found, toColumns))
		}
	}
	y = t.weigh(y)
	if flat {
		y = y.Reshape([]int{t.outSize})
	}
	return one(y)
}

// weigh turns the counts into the mode's values: TF the counts, IDF the
// column's weight (1 without weights) where the count is not zero, TFIDF
// the count times the weight.
func (t *tfIdfTable) weigh(counts *core.Tensor) *core.Tensor {
	if t.mode == "TF" || t.mode == "TFIDF" && t.weights == nil {
		return counts
	}
	weights := like(counts, 1)
	if t.weights != nil {
		weights = core.FromFloat64s(core.F32, core.Shape{t.outSize}, t.weights, counts.Device())
	}
	if t.mode == "TFIDF" {
		return call("mul", nil, counts, weights)
	}
	return call("where", nil, call("gt", nil, counts, like(counts, 0)), weights, like(counts, 0))
}
