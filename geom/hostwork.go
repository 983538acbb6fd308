package geom

import "github.com/webtensor/webtensor/core"

// Work this package does on the host although the tensors are on a device.
// Declared so docs/ops.md lists it, and counted per call (kind "host" in
// core.Fallbacks) so a GPU run reports it instead of hiding it. Neighbour
// search stays on the host because a k-d tree and a k-element heap per row
// beat the registry's topk on both backends for k << N (see BruteForce);
// a graph keeps host copies of its endpoints for degrees, self loops and
// sampling.
const (
	hostFromEdgeIndex = "geom.FromEdgeIndex"
	hostSearchKDTree  = "geom.Searcher/kdtree"
	hostSearchBrute   = "geom.Searcher/brute-force"
)

func init() {
	core.DeclareHostWork(core.AnyDevice, hostFromEdgeIndex,
		"reads edge_index (and the weights) back: a Graph keeps host copies of its endpoints")
	core.DeclareHostWork(core.AnyDevice, hostSearchKDTree,
		"k-NN and radius search (KNN, Radius, KNNGraph, RadiusGraph, DynamicEdgeConv) with the k-d tree: reads the points and batch vector back and searches on the host in float64")
	core.DeclareHostWork(core.AnyDevice, hostSearchBrute,
		"the same searches by brute force: distances on the device, one matmul per block of query rows; reads each block and the batch vector back and picks the neighbours on the host")
}

// countHostWork counts one call of fn that read t's device memory back.
func countHostWork(t *core.Tensor, fn string) {
	core.CountHostWork(t.Device(), fn)
}
