package parallel

import (
	"fmt"
	"math"
	"sort"
	"strings"
)

// Spec names a plan: a strategy, how many devices, micro-batches for a
// pipeline, and the device of a single-device plan.
type Spec struct {
	Strategy string `json:"strategy"` // "single", "data", "tensor", "pipeline", "sequence"
	Degree   int    `json:"degree"`
	Micro    int    `json:"micro_batches,omitempty"`
	Device   string `json:"device,omitempty"` // single only: "cpu", "webgpu"
}

// Plan is one way to run a training step of a model on a cluster, with
// the model's prediction for it.
type Plan struct {
	Strategy    string   `json:"strategy"`
	Degree      int      `json:"degree"` // devices used
	Micro       int      `json:"micro_batches,omitempty"`
	Devices     []string `json:"devices"`
	StepSeconds float64  `json:"step_seconds"`
	Compute     float64  `json:"compute_seconds"`
	Comm        float64  `json:"comm_seconds"`
	MemoryBytes int64    `json:"memory_bytes"` // the most any one device holds
	Feasible    bool     `json:"feasible"`
	Why         string   `json:"why,omitempty"` // why it is infeasible
}

// Name is the plan's short name: "data x2", "pipeline x2 m4", "single cpu".
func (p Plan) Name() string {
	switch {
	case p.Strategy == "single" && len(p.Devices) == 1:
		return "single " + p.Devices[0]
	case p.Micro > 0:
		return fmt.Sprintf("%s x%d m%d", p.Strategy, p.Degree, p.Micro)
	}
	return fmt.Sprintf("%s x%d", p.Strategy, p.Degree)
}

// rates are what the devices a plan uses allow: the slowest one's compute
// (g, FLOP/s) and memory bandwidth (mbw), the slowest link's bandwidth
// (bw) and the largest latency, the smallest memory, and each op's fixed
// cost (opSec: a kernel's launch, a WebGPU dispatch).
type rates struct {
	g, mbw, bw, lat, opSec float64
	mem                    int64
}

// forward is the forward time of nodes at frac of their work (a share of
// the rows); sharded nodes take a further 1/split (tensor parallel).
func (r rates) forward(nodes []NodeCost, frac float64, split int) float64 {
	t := 0.0
	for _, n := range nodes {
		if n.FLOPs == 0 {
			continue // a view: no kernel
		}
		f := frac
		if n.Sharded {
			f /= float64(split)
		}
		t += max(n.FLOPs*f/r.g, n.Bytes*f/r.mbw) + r.opSec
	}
	return t
}

// train is a step's compute: a backward costs about two forwards.
func (r rates) train(nodes []NodeCost, frac float64, split int) float64 {
	return 3 * r.forward(nodes, frac, split)
}

// procRates are the rates of the first degree worker processes: with more
// than one, the rates measured with every worker busy at once (Measure),
// which carry the contention for the host's cores.
func (c Cluster) procRates(degree int) (rates, []string) {
	procs := c.Processes()
	r := rates{g: math.Inf(1), mbw: math.Inf(1), bw: math.Inf(1), mem: math.MaxInt64, opSec: c.opSeconds("cpu")}
	var names []string
	for _, d := range procs[:degree] {
		names = append(names, d.Name)
		rate := d.GFLOPS
		if degree > 1 && d.SharedGFLOPS > 0 {
			rate = d.SharedGFLOPS
		}
		r.g, r.mbw, r.mem = min(r.g, rate*1e9), min(r.mbw, d.GBps*1e9/float64(degree)), min(r.mem, d.MemoryBytes)
		if l, err := c.link(d.Name); err == nil {
			lbw := l.GBps
			if degree > 1 && l.SharedGBps > 0 {
				lbw = l.SharedGBps
			}
			r.bw, r.lat = min(r.bw, lbw*1e9), max(r.lat, l.LatencyUs*1e-6)
		}
	}
	return r, names
}

func (c Cluster) device(name string) (Device, bool) {
	for _, d := range c.Devices {
		if d.Name == name {
			return d, true
		}
	}
	return Device{}, false
}

func (c Cluster) opSeconds(name string) float64 {
	d, _ := c.device(name)
	return d.OpMicros * 1e-6
}

// parentBW is how fast the parent process adds what the workers send
// (the CPU device's memory bandwidth, 10 GB/s where the cluster has none).
func (c Cluster) parentBW() float64 {
	if d, ok := c.device("cpu"); ok && d.GBps > 0 {
		return d.GBps * 1e9
	}
	return 10e9
}

func infeasible(p Plan, format string, args ...any) Plan {
	p.Feasible, p.Why = false, fmt.Sprintf(format, args...)
	return p
}

// Predict prices a plan for the model on the cluster the way the
// executors run it: a single device in this process, or worker processes
// whose messages all pass through the parent (a star over pipes), every
// collective a gather to the parent and a scatter back. Compute is each
// node's roofline (its FLOPs at the device's measured rate or its bytes at
// the measured bandwidth, whichever is longer, plus the op's fixed cost);
// a backward is two forwards; messages take the slowest used link's
// bandwidth and a round trip's latency per call.
func Predict(m Model, c Cluster, s Spec) Plan {
	p := Plan{Strategy: s.Strategy, Degree: s.Degree, Micro: s.Micro, Feasible: true}
	if s.Strategy == "single" {
		return predictSingle(m, c, s, p)
	}
	n := len(c.Processes())
	if s.Degree < 1 || s.Degree > n {
		return infeasible(p, "degree %d, but the cluster has %d worker processes", s.Degree, n)
	}
	r, names := c.procRates(s.Degree)
	p.Devices = names
	deg := float64(s.Degree)
	P, in, out := m.ParamBytes, m.InputBytes, m.OutputBytes
	switch s.Strategy {
	case "data", "sequence":
		rounds, perWorker, held := 2.0, 2*(in+out)/deg+2*P, 0.0
		if s.Strategy == "data" && m.Batch%s.Degree != 0 {
			p = infeasible(p, "a batch of %d does not split over %d devices", m.Batch, s.Degree)
		}
		if s.Strategy == "sequence" {
			if m.Seq%s.Degree != 0 {
				p = infeasible(p, "%d positions do not split over %d devices", m.Seq, s.Degree)
			}
			// Each position-mixing node gathers K and V (each device sends
			// its share, gets the whole) and its backward scatters their
			// gradients' sums (sends the whole, gets its share).
			for _, e := range m.Exchanges {
				perWorker += 2 * e.Bytes * (1 + 1/deg)
				held += e.Bytes * (1 - 1/deg)
				rounds += 2
			}
		}
		p.Compute = r.train(m.Nodes, 1/deg, 1)
		p.Comm = perWorker/r.bw + rounds*2*r.lat + deg*P/c.parentBW()
		p.MemoryBytes = int64(2*P + m.ActBytes/deg + held)
	case "tensor":
		if why := m.tensorFits(s.Degree); why != "" {
			p = infeasible(p, "tensor parallel: %s", why)
		}
		ar := 0.0
		for _, b := range m.Tensor.AllReduceBytes {
			ar += b
		}
		sp := m.Tensor.ShardedParamBytes
		perWorker := in + out + 4*ar + 2*m.Tensor.GatherBytes + 2*sp/deg + 2*(P-sp)
		rounds := 2 * float64(1+len(m.Tensor.AllReduceBytes))
		p.Compute = r.train(m.Nodes, 1, s.Degree)
		p.Comm = perWorker/r.bw + rounds*2*r.lat + deg*(2*ar+P-sp)/c.parentBW()
		sa := m.Tensor.ShardedActBytes
		p.MemoryBytes = int64(2*sp/deg + 2*(P-sp) + sa/deg + m.ActBytes - sa)
	case "pipeline":
		p = predictPipeline(m, r, s, p)
		if !p.Feasible {
			return p
		}
	default:
		return infeasible(p, "unknown strategy %q (single, data, tensor, pipeline, sequence)", s.Strategy)
	}
	return p.finish(r.mem)
}

func (p Plan) finish(mem int64) Plan {
	p.StepSeconds = p.Compute + p.Comm
	if p.Feasible && p.MemoryBytes > mem {
		p = infeasible(p, "needs %d bytes on a device that holds %d", p.MemoryBytes, mem)
	}
	return p
}

func predictSingle(m Model, c Cluster, s Spec, p Plan) Plan {
	d, ok := c.device(s.Device)
	if !ok || d.Kind == "process" {
		return infeasible(p, "single-device plans run in this process on a cpu or webgpu device; the cluster has no such device %q", s.Device)
	}
	p.Degree, p.Devices = 1, []string{d.Name}
	r := rates{g: d.GFLOPS * 1e9, mbw: d.GBps * 1e9, opSec: d.OpMicros * 1e-6}
	p.Compute = r.train(m.Nodes, 1, 1)
	p.MemoryBytes = int64(2*m.ParamBytes + m.ActBytes)
	return p.finish(d.MemoryBytes)
}

// predictPipeline cuts the nodes into Degree contiguous stages of about
// equal forward time and prices GPipe over Micro micro-batches: every
// stage works Micro + Degree - 1 slots of the slowest stage, each way;
// activations at the cuts pass through the parent.
func predictPipeline(m Model, r rates, s Spec, p Plan) Plan {
	if s.Micro < 1 || m.Batch%s.Micro != 0 {
		return infeasible(p, "%d micro-batches do not divide a batch of %d", s.Micro, m.Batch)
	}
	stages := stageBounds(m.Nodes, r, s.Degree)
	if len(stages) < s.Degree {
		return infeasible(p, "the graph has %d nodes that compute, fewer than %d stages", len(stages), s.Degree)
	}
	frac := 1 / float64(s.Micro)
	worstComp, worstComm, params := 0.0, 0.0, 0.0
	first := 0
	for i, end := range stages {
		nodes := m.Nodes[first : end+1]
		inB := m.InputBytes
		if first > 0 {
			inB = m.Nodes[first-1].Cut
		}
		outB := m.Nodes[end].Cut
		if i == len(stages)-1 {
			outB = m.OutputBytes
		}
		comp := r.train(nodes, frac, 1)
		comm := 2*(inB+outB)*frac/r.bw + 4*r.lat
		if comp+comm > worstComp+worstComm {
			worstComp, worstComm = comp, comm
		}
		ps, as := 0.0, 0.0
		for _, n := range nodes {
			ps, as = ps+n.ParamBytes, as+n.ActBytes
		}
		params = max(params, ps)
		p.MemoryBytes = max(p.MemoryBytes, int64(2*ps+as+inB))
		first = end + 1
	}
	slots := float64(s.Micro + s.Degree - 1)
	p.Compute = slots * worstComp
	p.Comm = slots*worstComm + 2*params/r.bw
	return p
}

// stageBounds are the last node of each of n stages of about equal
// forward time (fewer where fewer nodes compute).
func stageBounds(nodes []NodeCost, r rates, n int) []int {
	total := r.forward(nodes, 1, 1)
	var bounds []int
	acc, computing := 0.0, 0
	for i, nd := range nodes {
		acc += r.forward(nodes[i:i+1], 1, 1)
		if nd.FLOPs > 0 {
			computing++
		}
		if len(bounds) < n-1 && computing > 0 && acc >= total*float64(len(bounds)+1)/float64(n) {
			bounds = append(bounds, i)
			computing = 0
		}
	}
	if computing > 0 || len(bounds) == 0 {
		bounds = append(bounds, len(nodes)-1)
	}
	return bounds
}

// Specs are the plans worth pricing on c: one device in this process
// (each cpu and webgpu device), and over 2 to all of the worker processes
// data, tensor and sequence parallel and pipelines of 1 to 8 micro-batches.
func Specs(c Cluster) []Spec {
	var out []Spec
	for _, d := range c.Devices {
		if d.Kind != "process" {
			out = append(out, Spec{Strategy: "single", Degree: 1, Device: d.Name})
		}
	}
	n := len(c.Processes())
	for d := 2; d <= n; d++ {
		out = append(out, Spec{Strategy: "data", Degree: d}, Spec{Strategy: "tensor", Degree: d}, Spec{Strategy: "sequence", Degree: d})
		for _, micro := range []int{1, 2, 4, 8} {
			out = append(out, Spec{Strategy: "pipeline", Degree: d, Micro: micro})
		}
	}
	return out
}

// Plans prices every plan of Specs(c), fastest first (feasible ones
// before the rest).
func Plans(m Model, c Cluster) []Plan {
	var out []Plan
	for _, s := range Specs(c) {
		out = append(out, Predict(m, c, s))
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Feasible != out[j].Feasible {
			return out[i].Feasible
		}
		return out[i].StepSeconds < out[j].StepSeconds
	})
	return out
}

// Choose is the fastest feasible plan and every plan priced, or an error
// listing why each is infeasible.
func Choose(m Model, c Cluster) (Plan, []Plan, error) {
	all := Plans(m, c)
	if len(all) == 0 || !all[0].Feasible {
		var why []string
		for _, p := range all {
			why = append(why, p.Name()+": "+p.Why)
		}
		if len(all) == 0 {
			why = append(why, "the cluster has no devices")
		}
		return Plan{}, all, fmt.Errorf("parallel: no feasible plan for a model of %.0f parameter bytes on %d devices: %s",
			m.ParamBytes, len(c.Devices), strings.Join(why, "; "))
	}
	return all[0], all, nil
}
