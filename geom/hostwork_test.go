package geom_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	_ "github.com/webtensor/webtensor/backends/cpu"
	"github.com/webtensor/webtensor/backends/webgpu/webgputest"
	"github.com/webtensor/webtensor/core"
	"github.com/webtensor/webtensor/geom"
)

// Neighbour search and FromEdgeIndex on a GPU do part of their work on the
// host; each call says so in core.Fallbacks, with the declared reason, and
// the same calls on the CPU report nothing.
func TestHostWorkOnDevicesIsCounted(t *testing.T) {
	gpu := webgputest.Device
	webgputest.Need(t)
	pts := core.FromSlice([]float32{0, 0, 1, 0, 0, 1, 5, 5}, core.Shape{4, 2})
	edges := core.FromSlice([]int64{0, 1, 2, 1, 2, 3}, core.Shape{2, 3})
	for _, dev := range []core.Device{core.CPU, gpu} {
		core.ResetFallbacks()
		x := pts.To(dev)
		_, err := geom.KNNGraph(x, 2, nil, false)
		require.NoError(t, err)
		_, err = geom.Searcher{Method: geom.BruteForce}.KNN(x, x, 1, nil, nil)
		require.NoError(t, err)
		_, err = geom.FromEdgeIndex(4, edges.To(dev), nil)
		require.NoError(t, err)
		if dev == core.CPU {
			assert.Empty(t, core.Fallbacks(), "work for the CPU device is not host work")
			continue
		}
		got := map[string]int64{}
		for _, f := range core.Fallbacks() {
			assert.Equal(t, core.FallbackHost, f.Kind, f.Op)
			assert.NotEmpty(t, f.Reason, "%s is declared", f.Op)
			got[f.Op] += f.Count
		}
		assert.Equal(t, map[string]int64{"geom.Searcher/kdtree": 1, "geom.Searcher/brute-force": 1, "geom.FromEdgeIndex": 1}, got)
	}
}
