package core

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The rules runKernel computes in place give what the op's own Infer gives,
// for every op that uses one, on every sample input the registry has, in
// every input dtype the sample's op accepts.
func TestInlineInferenceMatchesInfer(t *testing.T) {
	seen := map[inlineInfer]int{}
	for _, def := range Ops() {
		if def.inline == inferOther {
			continue
		}
		for _, s := range def.Samples {
			for _, d := range append([]DType{Invalid}, I32, Bool, F16) { // Invalid: the sample's own dtypes
				inputs := make([]*Tensor, len(s.Inputs))
				for i, g := range s.Inputs {
					if d != Invalid {
						g.DType = d
					}
					inputs[i] = &Tensor{shape: g.Shape, dtype: g.DType} // inference reads no values
				}
				var r inferred
				got, ok, err := r.inline(def, inputs)
				want, wantErr := inferOf(def, inputs, s.ResolvedAttrs(def))
				if !ok {
					assert.Greater(t, maxRank(inputs), len(r.dims), "%s %s: not computed in place", def.Name, s.Name)
					continue
				}
				seen[def.inline]++
				if wantErr != nil {
					assert.Error(t, err, "%s %s %v", def.Name, s.Name, d)
					continue
				}
				require.NoError(t, err, "%s %s %v", def.Name, s.Name, d)
				assert.Equal(t, want, got, "%s %s %v", def.Name, s.Name, d)
			}
		}
	}
	for _, k := range []inlineInfer{inferSame, inferSameBool, inferSameFloat, inferBroadcast, inferBroadcastBool} {
		assert.Positive(t, seen[k], "no op checked with rule %d", k)
	}
}

func maxRank(ts []*Tensor) int {
	r := 0
	for _, t := range ts {
		if t != nil {
			r = max(r, t.Rank())
		}
	}
	return r
}
