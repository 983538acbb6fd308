package onnx

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/webtensor/webtensor/core"
	pb "github.com/webtensor/webtensor/onnx/internal/onnxpb"
)

// IDF and TFIDF with weights (read by output column, as ONNX's reference
// reads them), unigrams and skip-bigrams, a permuted ngram_indexes; the
// expected values are ONNX's reference evaluator's.
func TestTfIdfVectorizerWeights(t *testing.T) {
	x := core.FromSlice([]int64{1, 2, 3, 1, 2, 3, 7, 3, 3, 3, 2, 1, 2, 9}, core.Shape{2, 7}, core.CPU)
	attrs := func(mode string) []*pb.AttributeProto {
		return []*pb.AttributeProto{strAttribute("mode", mode), intAttribute("min_gram_length", 1), intAttribute("max_gram_length", 2),
			intAttribute("max_skip_count", 1), intsAttribute("ngram_counts", 0, 3), intsAttribute("ngram_indexes", 3, 0, 1, 2, 4),
			intsAttribute("pool_int64s", 1, 2, 3, 1, 2, 3, 2), floatsAttribute("weights", 0.5, 2, 3, 4, 5)}
	}
	out, err := runOne(t, "TfIdfVectorizer", attrs("IDF"), 1, x)
	require.NoError(t, err)
	assert.Equal(t, []float64{0.5, 2, 3, 4, 5, 0.5, 2, 3, 4, 5}, floats(t, out[0]))
	out, err = runOne(t, "TfIdfVectorizer", attrs("TFIDF"), 1, x)
	require.NoError(t, err)
	assert.Equal(t, []float64{1, 4, 6, 8, 5, 1, 6, 3, 4, 10}, floats(t, out[0]))
	out, err = runOne(t, "TfIdfVectorizer", attrs("TF")[:7], 1, call("slice", core.Attrs{"axis": 0, "start": 0, "stop": 1}, x).Reshape([]int{7}).Cast(core.I32))
	require.NoError(t, err)
	assert.Equal(t, core.Shape{5}, out[0].Shape())
	assert.Equal(t, []float64{2, 2, 2, 2, 1}, floats(t, out[0]))
}

func TestTfIdfVectorizerErrorsNameTheNode(t *testing.T) {
	x := core.FromSlice([]int64{1, 2, 3}, core.Shape{3}, core.CPU)
	base := func(extra ...*pb.AttributeProto) []*pb.AttributeProto {
		a := map[string]*pb.AttributeProto{}
		for _, v := range []*pb.AttributeProto{strAttribute("mode", "TF"), intAttribute("min_gram_length", 1), intAttribute("max_gram_length", 2),
			intAttribute("max_skip_count", 0), intsAttribute("ngram_counts", 0, 2), intsAttribute("ngram_indexes", 0, 1, 2),
			intsAttribute("pool_int64s", 1, 2, 1, 2)} {
			a[v.GetName()] = v
		}
		for _, v := range extra {
			a[v.GetName()] = v
		}
		var list []*pb.AttributeProto
		for _, name := range operators["TfIdfVectorizer"].attrs {
			if v := a[name]; v != nil {
				list = append(list, v)
			}
		}
		return list
	}
	strs := &pb.AttributeProto{Name: strAttribute("pool_strings", "").Name, Type: pb.AttributeProto_STRINGS.Enum(), Strings: [][]byte{[]byte("a")}}
	cases := []struct {
		attrs []*pb.AttributeProto
		want  string
	}{
		{base(strAttribute("mode", "BM25")), `mode "BM25" is not one of TF, IDF, TFIDF`},
		{base(intAttribute("min_gram_length", 3)), `min_gram_length 3, max_gram_length 2 and max_skip_count 0: want 1 <= min <= max`},
		{base(strs), `attribute "pool_strings" is not supported: only integer n-grams (pool_int64s) are`},
		{base(intsAttribute("ngram_counts", 0, 1)), `ngram_counts [0 1] gives the 2-grams 3 items, not a multiple of 2`},
		{base(intsAttribute("ngram_indexes", 0, 1)), `ngram_indexes has 2 values, fewer than the pool's n-grams`},
		{base(intsAttribute("ngram_indexes", 0, 1, 2, 3)), `ngram_indexes has 4 values for the pool's 3 n-grams`},
		{base(floatsAttribute("weights", 1, 2)), `weights has 2 values for 3 ngram_indexes`},
		{base(intsAttribute("ngram_counts", 0, 5)), `ngram_counts [0 5] does not split the pool's 4 items into runs`},
	}
	for _, tc := range cases {
		_, err := runOne(t, "TfIdfVectorizer", tc.attrs, 1, x)
		assert.ErrorContains(t, err, `node "n1" (TfIdfVectorizer): `+tc.want)
	}
	_, err := runOne(t, "TfIdfVectorizer", base(), 1, x.Cast(core.F32))
	assert.ErrorContains(t, err, `node "n1" (TfIdfVectorizer): X is a f32 tensor of shape [3], want integers of shape [C] or [N, C]`)
}

// MelWeightMatrix against ONNX's reference evaluator: its nonzero
// entries for 5 mel bins of a 64-point DFT at 16 kHz, 100 to 7000 Hz.
func TestMelWeightMatrix(t *testing.T) {
	i32 := func(v int32) *core.Tensor { return core.FromSlice([]int32{v}, core.Shape{}, core.CPU) }
	f32 := func(v float32) *core.Tensor { return core.FromSlice([]float32{v}, core.Shape{}, core.CPU) }
	out, err := runOne(t, "MelWeightMatrix", nil, 1, i32(5), i32(64), i32(16000), f32(100), f32(7000))
	require.NoError(t, err)
	require.Equal(t, core.Shape{33, 5}, out[0].Shape())
	mel := []int{0, 0, 1, 1, 1, 2, 2, 2, 2, 2, 3, 3, 3, 3, 3, 3, 3, 4, 4, 4, 4, 4, 4, 4, 4, 4}
	spec := []int{1, 2, 2, 3, 4, 4, 5, 6, 7, 8, 6, 7, 8, 9, 10, 11, 12, 10, 11, 12, 13, 14, 15, 16, 17, 18}
	vals := []float64{1, 0.5, 0.5, 1, 0.5, 0.5, 1, 0.75, 0.5, 0.25, 0.25, 0.5, 0.75, 1, 0.75, 0.5, 0.25, 0.25, 0.5, 0.75, 1,
		5.0 / 6, 4.0 / 6, 0.5, 2.0 / 6, 1.0 / 6}
	want := make([]float64, 33*5)
	for i := range mel {
		want[spec[i]*5+mel[i]] = vals[i]
	}
	assertClose(t, want, floats(t, out[0]), 1e-7, "MelWeightMatrix")

	_, err = runOne(t, "MelWeightMatrix", nil, 1, i32(5), i32(64), i32(16000), f32(100), f32(16000))
	assert.ErrorContains(t, err, `node "n1" (MelWeightMatrix): lower_edge_hertz 100 and upper_edge_hertz 16000 put mel point 6 at spectrogram bin 41, outside [0, 33)`)
	_, err = runOne(t, "MelWeightMatrix", []*pb.AttributeProto{intAttribute("output_datatype", int64(pb.TensorProto_INT32))}, 1,
		i32(5), i32(64), i32(16000), f32(100), f32(7000))
	assert.ErrorContains(t, err, `node "n1" (MelWeightMatrix): output_datatype 6 is not a floating-point type`)
}
