package parallel

import (
	"fmt"
	"math"
	"sort"
)

// Plan is one way to run a training step of a model on a cluster, with
// the model's prediction for it.
type Plan struct {
	Strategy    string   `json:"strategy"` // "single", "data", "tensor", "pipeline", "sequence"
	Degree      int      `json:"degree"`   // devices used
	Micro       int      `json:"micro_batches,omitempty"`
	Devices     []string `json:"devices"`
	StepSeconds float64  `json:"step_seconds"`
	Compute     float64  `json:"compute_seconds"`
	Comm        float64  `json:"comm_seconds"`
	MemoryBytes int64    `json:"memory_bytes"` // the most any one device holds
	Feasible    bool     `json:"feasible"`
	Why         string   `json:"why,omitempty"` // why it is infeasible
}

func (m MLP) flops() float64 {
	f := 0.0
	for l := range len(m.Dims) - 1 {
		f += 2 * float64(m.Rows*m.Dims[l]*m.Dims[l+1])
	}
	return f
}

func (m MLP) paramBytes(l int) float64 { return 4 * float64(m.Dims[l]*m.Dims[l+1]) }

func (m MLP) allParamBytes() float64 {
	b := 0.0
	for l := range len(m.Dims) - 1 {
		b += m.paramBytes(l)
	}
	return b
}

// actBytes is what a forward keeps for its backward: every layer's input
// and output over rows.
func (m MLP) actBytes(rows int) float64 {
	b := 0.0
	for _, d := range m.Dims {
		b += 4 * float64(rows*d)
	}
	return b
}

// Predict prices strategy on the cluster's worker processes (degree of
// them; micro micro-batches for a pipeline), the way the executors run it:
// compute at the slowest used worker's measured rate, divided among the
// processes that share a host's cores; every message through the parent
// at the slowest used link's bandwidth, one round trip's latency per call.
// With more than one worker, compute and links are priced at the rates
// measured with every worker busy at once (Measure), which carry the
// contention for the host's cores.
func Predict(m MLP, c Cluster, strategy string, degree, micro int) Plan {
	p := Plan{Strategy: strategy, Degree: degree, Micro: micro, Feasible: true}
	procs := c.Processes()
	if degree < 1 || degree > len(procs) {
		p.Feasible, p.Why = false, fmt.Sprintf("degree %d, but the cluster has %d worker processes", degree, len(procs))
		return p
	}
	g, bw, lat, mem := math.Inf(1), math.Inf(1), 0.0, int64(math.MaxInt64)
	for _, d := range procs[:degree] {
		p.Devices = append(p.Devices, d.Name)
		rate := d.GFLOPS
		if degree > 1 && d.SharedGFLOPS > 0 {
			rate = d.SharedGFLOPS // the others compute at the same time
		}
		g, mem = min(g, rate*1e9), min(mem, d.MemoryBytes)
		if l, err := c.link(d.Name); err == nil {
			lbw := l.GBps
			if degree > 1 && l.SharedGBps > 0 {
				lbw = l.SharedGBps
			}
			bw, lat = min(bw, lbw*1e9), max(lat, l.LatencyUs*1e-6)
		}
	}
	share := 1.0 // measured shared rates already carry the contention
	in, out := float64(m.Dims[0]), float64(m.Dims[len(m.Dims)-1])
	rows := float64(m.Rows)
	train := 3 * m.flops() // a backward costs about two forwards
	switch strategy {
	case "single", "data", "sequence":
		// An MLP mixes no positions, so splitting the sequence is splitting
		// the rows: sequence parallel prices as data parallel.
		if m.Rows%degree != 0 {
			p.Feasible, p.Why = false, fmt.Sprintf("%d rows do not split over %d devices", m.Rows, degree)
		}
		p.Compute = train / float64(degree) / g * share
		perWorker := 4*rows/float64(degree)*(2*in+2*out) + 2*m.allParamBytes()
		p.Comm = perWorker/bw + 4*lat + float64(degree)*m.allParamBytes()/(20e9) // links carry at once, each at its shared rate
		p.MemoryBytes = int64(2*m.allParamBytes() + m.actBytes(m.Rows/degree))
	case "tensor":
		if len(m.Dims) != 3 || m.Dims[1]%degree != 0 {
			p.Feasible, p.Why = false, fmt.Sprintf("tensor parallel splits a two-layer MLP's hidden width over the devices; dims %v over %d", m.Dims, degree)
		}
		p.Compute = train / float64(degree) / g * share
		perWorker := 4*rows*(2*in+2*out) + 2*m.allParamBytes()/float64(degree)
		p.Comm = perWorker/bw + 4*lat
		p.MemoryBytes = int64(2*m.allParamBytes()/float64(degree) + 4*rows*(in+out+2*float64(m.Dims[1])/float64(degree)))
	case "pipeline":
		stages := len(m.Dims) - 1
		if degree != stages || micro < 1 || m.Rows%micro != 0 {
			p.Feasible, p.Why = false, fmt.Sprintf("a pipeline puts one layer on each device (%d layers, degree %d) over micro-batches dividing %d rows (got %d)", stages, degree, m.Rows, micro)
			return p
		}
		mbRows := rows / float64(micro)
		worst, worstComm := 0.0, 0.0
		for l := range stages {
			comp := 3 * 2 * mbRows * float64(m.Dims[l]*m.Dims[l+1]) / g * share
			comm := (4*mbRows*(2*float64(m.Dims[l])+2*float64(m.Dims[l+1]))+2*m.paramBytes(l))/bw + 4*lat
			if comp+comm > worst+worstComm {
				worst, worstComm = comp, comm
			}
			p.MemoryBytes = max(p.MemoryBytes, int64(2*m.paramBytes(l)+4*rows*float64(m.Dims[l]+m.Dims[l+1])))
		}
		// GPipe: micro + stages - 1 slots of the slowest stage, each way.
		slots := float64(micro + stages - 1)
		p.Compute, p.Comm = slots*worst, slots*worstComm
	default:
		p.Feasible, p.Why = false, fmt.Sprintf("unknown strategy %q", strategy)
		return p
	}
	p.StepSeconds = p.Compute + p.Comm
	if p.Feasible && p.MemoryBytes > mem {
		p.Feasible, p.Why = false, fmt.Sprintf("needs %d bytes on a device that holds %d", p.MemoryBytes, mem)
	}
	return p
}

// Plans prices every strategy the cluster's workers allow, fastest first
// (feasible ones before the rest).
func Plans(m MLP, c Cluster) []Plan {
	n := len(c.Processes())
	var out []Plan
	out = append(out, Predict(m, c, "single", 1, 0))
	for d := 2; d <= n; d++ {
		out = append(out, Predict(m, c, "data", d, 0), Predict(m, c, "tensor", d, 0), Predict(m, c, "sequence", d, 0))
	}
	if stages := len(m.Dims) - 1; stages >= 2 && stages <= n {
		for _, micro := range []int{1, 2, 4, 8} {
			out = append(out, Predict(m, c, "pipeline", stages, micro))
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Feasible != out[j].Feasible {
			return out[i].Feasible
		}
		return out[i].StepSeconds < out[j].StepSeconds
	})
	return out
}

// Choose is the fastest feasible plan, or an error listing why each is not.
func Choose(m MLP, c Cluster) (Plan, []Plan, error) {
	all := Plans(m, c)
	if len(all) == 0 || !all[0].Feasible {
		var why []string
		for _, p := range all {
			why = append(why, p.Strategy+": "+p.Why)
		}
		return Plan{}, all, fmt.Errorf("parallel: no feasible plan for %v rows x dims %v: %v", m.Rows, m.Dims, why)
	}
	return all[0], all, nil
}
