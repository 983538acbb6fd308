package geom

import (
	"fmt"

	"github.com/webtensor/webtensor/core"
	"github.com/webtensor/webtensor/nn"
)

// GCN is the two-layer node classifier of Kipf and Welling:
// GCNConv -> ReLU -> dropout -> GCNConv. State: conv1.*, conv2.*.
type GCN struct {
	nn.Base
	Conv1, Conv2 *GCNConv
	Dropout      float64
}

// NewGCN makes a GCN from in features through hidden to out classes.
func NewGCN(in, hidden, out int, dropout float64, o Options) (*GCN, error) {
	if !(dropout >= 0 && dropout < 1) {
		return nil, fmt.Errorf("geom: GCN: dropout %v is outside [0, 1)", dropout)
	}
	c1, err := NewGCNConv(in, hidden, o)
	if err != nil {
		return nil, err
	}
	c2, err := NewGCNConv(hidden, out, o)
	if err != nil {
		return nil, err
	}
	m := &GCN{Conv1: c1, Conv2: c2, Dropout: dropout}
	if err := m.RegisterModule("conv1", c1); err != nil {
		return nil, err
	}
	return m, m.RegisterModule("conv2", c2)
}

// Forward gives the class scores [N, out] of every node.
func (m *GCN) Forward(x *core.Tensor, g *Graph) *core.Tensor {
	return twoLayers(x, g, m.Conv1, m.Conv2, m.Dropout, m.Training())
}

// twoLayers is conv2(dropout(relu(conv1(x)))), dropout only while training.
// Each intermediate is released as soon as the next is made where no
// gradient is recorded (see release): inference holds at most two [N,
// hidden] tensors.
func twoLayers(x *core.Tensor, g *Graph, conv1, conv2 interface {
	Forward(*core.Tensor, *Graph) *core.Tensor
}, dropout float64, training bool) *core.Tensor {
	c := conv1.Forward(x, g)
	h := op("relu", nil, c)
	release(c)
	if dropout > 0 && training {
		d := op("dropout", core.Attrs{"p": dropout, "training": true}, h)
		release(h)
		h = d
	}
	out := conv2.Forward(h, g)
	release(h)
	return out
}

// GraphSAGE is the two-layer SAGEConv classifier: SAGEConv -> ReLU -> dropout -> SAGEConv.
type GraphSAGE struct {
	nn.Base
	Conv1, Conv2 *SAGEConv
	Dropout      float64
}

// NewGraphSAGE makes a GraphSAGE model with aggregation aggr.
func NewGraphSAGE(in, hidden, out int, aggr string, dropout float64, o Options) (*GraphSAGE, error) {
	if !(dropout >= 0 && dropout < 1) {
		return nil, fmt.Errorf("geom: GraphSAGE: dropout %v is outside [0, 1)", dropout)
	}
	c1, err := NewSAGEConv(in, hidden, aggr, o)
	if err != nil {
		return nil, err
	}
	c2, err := NewSAGEConv(hidden, out, aggr, o)
	if err != nil {
		return nil, err
	}
	m := &GraphSAGE{Conv1: c1, Conv2: c2, Dropout: dropout}
	if err := m.RegisterModule("conv1", c1); err != nil {
		return nil, err
	}
	return m, m.RegisterModule("conv2", c2)
}

// Forward gives the class scores [N, out] of every node.
func (m *GraphSAGE) Forward(x *core.Tensor, g *Graph) *core.Tensor {
	return twoLayers(x, g, m.Conv1, m.Conv2, m.Dropout, m.Training())
}

// Accuracy is the fraction of the nodes idx whose highest score is their label.
func Accuracy(scores, labels, idx *core.Tensor) (float64, error) {
	pred := op("argmax", core.Attrs{"axis": 1}, Gather(scores, idx))
	want := castTo(Gather(labels, idx), pred.DType())
	hits, err := op("sum", nil, op("cast", core.Attrs{"dtype": core.F32}, op("eq", nil, pred, want))).Item()
	if err != nil {
		return 0, err
	}
	return hits / float64(idx.Numel()), nil
}
