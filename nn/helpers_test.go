package nn_test

import (
	"testing"

	"github.com/stretchr/testify/require"
	_ "github.com/webtensor/webtensor/backends/cpu"
	"github.com/webtensor/webtensor/core"
	"github.com/webtensor/webtensor/nn"
)

// must unwraps a constructor's result, failing the test on error:
// lin := must(nn.NewLinear(2, 3))(t).
func must[T any](v T, err error) func(testing.TB) T {
	return func(tb testing.TB) T {
		tb.Helper()
		require.NoError(tb, err)
		return v
	}
}

// values reads a tensor as float64s, failing the test if it carries an error.
func values(tb testing.TB, x *core.Tensor) []float64 {
	tb.Helper()
	require.NoError(tb, x.Err())
	v, err := x.Float64s()
	require.NoError(tb, err)
	return v
}

// entry is a state-dict name with its shape and dtype, for comparing against torch.
type entry struct {
	name  string
	shape core.Shape
	dtype core.DType
}

func stateEntries(m nn.Module) []entry {
	var out []entry
	for _, s := range m.StateDict() {
		t := s.Value.Tensor()
		out = append(out, entry{s.Name, t.Shape(), t.DType()})
	}
	return out
}

func paramNames(m nn.Module) []string {
	var out []string
	for _, np := range m.NamedParameters() {
		out = append(out, np.Name)
	}
	return out
}
