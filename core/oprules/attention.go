package oprules

import "fmt"

// Scaled dot-product attention: q, k and v's batch dims broadcast together.

// SDPAShapes is the geometry of an attention call: the broadcast batch
// shape, query length L, key length S, head dim E and value dim Ev.
type SDPAShapes struct {
	Batch       Shape
	L, S, E, Ev int
}

// Scores is the shape of the attention matrix, [batch..., L, S].
func (s SDPAShapes) Scores() Shape { return append(s.Batch.Clone(), s.L, s.S) }

// AttentionShapes checks q [..., L, E], k [..., S, E], v [..., S, Ev].
func AttentionShapes(q, k, v Shape) (SDPAShapes, error) {
	for i, s := range []Shape{q, k, v} {
		if len(s) < 2 {
			return SDPAShapes{}, fmt.Errorf("%s must have at least 2 dims [..., length, dim], got %v", []string{"query", "key", "value"}[i], s)
		}
	}
	lq, lk, lv := len(q), len(k), len(v)
	if q[lq-1] != k[lk-1] {
		return SDPAShapes{}, fmt.Errorf("query dim %d differs from key dim %d (query %v, key %v)", q[lq-1], k[lk-1], q, k)
	}
	if k[lk-2] != v[lv-2] {
		return SDPAShapes{}, fmt.Errorf("key length %d differs from value length %d (key %v, value %v)", k[lk-2], v[lv-2], k, v)
	}
	batch, err := BroadcastShapes(q[:lq-2], k[:lk-2], v[:lv-2])
	if err != nil {
		return SDPAShapes{}, fmt.Errorf("batch dims: %w", err)
	}
	return SDPAShapes{Batch: batch, L: q[lq-2], S: k[lk-2], E: q[lq-1], Ev: v[lv-1]}, nil
}
