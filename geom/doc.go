// Package geom is webtensor's graph neural network library: graphs as edge
// lists on any device, message passing with sum, mean, max, min and softmax
// aggregation built from the registry's segment ops (so it runs, and
// differentiates, on every backend), the layers PyTorch Geometric users
// know - GCNConv, SAGEConv, GINConv, GATConv - with PyG's parameter names
// (a PyG state dict loads into them), global pooling for graph
// classification, and a stochastic block model generator so demos need no
// download.
//
// For point clouds: exact k-NN and radius search, batched so neighbours
// stay inside their cloud (KNN, Radius, KNNGraph, RadiusGraph, as
// torch_cluster's), seeded transforms (NormalizeScale, RandomRotate,
// RandomJitter) and the DGCNN layers EdgeConv and DynamicEdgeConv.
//
// Messages flow along edges from Src to Dst, as PyG's default
// source_to_target flow: edge_index[0] is the source, edge_index[1] the
// node that aggregates.
//
// Not everything here runs on the points' or edges' device: neighbour
// search picks neighbours on the host, and a Graph keeps host copies of its
// endpoints. hostwork.go declares that work (docs/ops.md lists it) and
// counts each call that does it on a GPU (core.Fallbacks, kind "host").
package geom
