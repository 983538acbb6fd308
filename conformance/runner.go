package conformance

import (
	"fmt"
	"math"

	"github.com/webtensor/webtensor/core"
	"github.com/webtensor/webtensor/core/kernelkit"
	"github.com/webtensor/webtensor/core/safetensors"
)

// RunOp runs every case of an op's vector file on dev through the public Go
// API (core.Call, Backward) and grades it like every other SDK's runner.
func RunOp(def *core.OpDef, v *Vectors, dev core.Device) OpResult {
	res := OpResult{Status: "pass"}
	b, err := core.BackendFor(dev)
	if err != nil {
		return OpResult{Status: "fail", Detail: err.Error()}
	}
	caps := b.Capabilities()
	samples := map[string]core.Sample{}
	for _, s := range def.Samples {
		samples[s.Name] = s
	}
	for _, c := range v.Cases {
		if why := Unstorable(caps, c, v); why != "" {
			res.Skipped++
			continue
		}
		res.Cases++
		worst, err := runCase(def, samples[c.Name], c, v, dev)
		res.Worst = math.Max(res.Worst, worst)
		if err != nil && res.Status == "pass" {
			res.Status, res.Detail = "fail", fmt.Sprintf("case %s: %v", c.Name, err)
		}
	}
	if res.Cases == 0 {
		res.Status, res.Detail = "n/a", fmt.Sprintf("every case needs a dtype or value range %s cannot hold", dev)
	}
	return res
}

// Unstorable names what a case needs that a backend with caps cannot hold
// (a dtype, or i64 values beyond i32 on a 32-bit device), or "" when it can
// run there.
func Unstorable(caps core.Capabilities, c CaseSpec, v *Vectors) string {
	ok := map[core.DType]bool{}
	for _, d := range caps.DTypes {
		ok[d] = true
	}
	for _, role := range []string{"in", "out"} {
		for i := 0; i < 16; i++ {
			st, found := v.Tensor(c.Name, role, i)
			if !found {
				continue
			}
			if !ok[st.DType] {
				return fmt.Sprintf("no %v (%s %d)", st.DType, role, i)
			}
			if st.DType == core.I64 && caps.NarrowI64 {
				for _, x := range Values(st) {
					if x < math.MinInt32 || x > math.MaxInt32 {
						return fmt.Sprintf("i64 only as i32, and %s %d has %v", role, i, x)
					}
				}
			}
		}
	}
	return ""
}

func runCase(def *core.OpDef, s core.Sample, c CaseSpec, v *Vectors, dev core.Device) (float64, error) {
	ins := make([]*core.Tensor, len(c.Inputs))
	for i, spec := range c.Inputs {
		if spec.Absent {
			continue
		}
		st, ok := v.Tensor(c.Name, "in", i)
		if !ok {
			return 0, fmt.Errorf("input %d missing from the vector file", i)
		}
		ins[i] = core.MakeLayout(st.DType, st.Shape, Values(st), spec.Strided, dev)
		if c.Grad && spec.Grad {
			ins[i].SetRequiresGrad(true)
		}
	}
	attrs := s.ResolvedAttrs(def)
	for _, a := range def.Attrs {
		if a.Name == "device" && attrs.String("device") == "" {
			attrs["device"] = dev.String()
		}
	}
	outs, err := core.CallDef(def, CallInputs(c, ins), attrs)
	if err != nil {
		return 0, err
	}
	if len(outs) != len(c.Outputs) {
		return 0, fmt.Errorf("%d outputs, want %d", len(outs), len(c.Outputs))
	}
	outs = FiledOutputs(c, outs)
	worst := 0.0
	var loss *core.Tensor
	for j, o := range outs {
		want, ok := v.Tensor(c.Name, "out", j)
		if !ok {
			return worst, fmt.Errorf("output %d missing from the vector file", j)
		}
		w, err := grade(o, want, def.Tolerance(want.DType), 1)
		worst = math.Max(worst, w)
		if err != nil {
			return worst, fmt.Errorf("output %d: %v", j, err)
		}
		if up, ok := v.Tensor(c.Name, "up", j); ok && o.RequiresGrad() {
			term := core.Call1("sum", nil, core.Call1("mul", nil, o, up.ToTensor(dev)))
			if loss == nil {
				loss = term
			} else {
				loss = loss.Add(term)
			}
		}
	}
	if !c.Grad || loss == nil {
		return worst, nil
	}
	if err := loss.Backward(); err != nil {
		return worst, fmt.Errorf("backward: %v", err)
	}
	for i, spec := range c.Inputs {
		if !spec.Grad {
			continue
		}
		want, ok := v.Tensor(c.Name, "grad", i)
		if !ok {
			return worst, fmt.Errorf("gradient %d missing from the vector file", i)
		}
		g := ins[i].Grad()
		if g == nil {
			g = core.ZerosLike(ins[i])
		}
		w, err := grade(g, want, def.Tolerance(want.DType), kernelkit.GradTolScale)
		worst = math.Max(worst, w)
		if err != nil {
			return worst, fmt.Errorf("gradient of input %d: %v", i, err)
		}
	}
	return worst, nil
}

// grade compares got with want and returns the worst tolerance ratio.
func grade(got *core.Tensor, want safetensors.Tensor, tol core.Tol, scale float64) (float64, error) {
	if err := got.Err(); err != nil {
		return 0, err
	}
	if got.DType() != want.DType {
		return 0, fmt.Errorf("dtype %v, want %v", got.DType(), want.DType)
	}
	if !got.Shape().Equal(core.Shape(want.Shape)) {
		return 0, fmt.Errorf("shape %v, want %v", got.Shape(), want.Shape)
	}
	gv, err := got.Float64s()
	if err != nil {
		return 0, err
	}
	wv := Values(want)
	if !want.DType.IsFloat() {
		tol = core.Tol{}
	}
	atol, rtol := tol.Atol*scale, tol.Rtol*scale
	worst := 0.0
	for i := range wv {
		g, w := gv[i], wv[i]
		switch {
		case math.IsNaN(w) || math.IsNaN(g):
			if math.IsNaN(w) != math.IsNaN(g) {
				return math.Inf(1), fmt.Errorf("element %d: got %v, want %v", i, g, w)
			}
			continue
		case math.IsInf(w, 0) || math.IsInf(g, 0):
			if g != w {
				return math.Inf(1), fmt.Errorf("element %d: got %v, want %v", i, g, w)
			}
			continue
		}
		d := math.Abs(g - w)
		bound := atol + rtol*math.Abs(w)
		r := 0.0
		switch {
		case bound > 0:
			r = d / bound
		case d > 0:
			r = math.Inf(1)
		}
		if r > worst {
			worst = r
		}
		if d > bound {
			return worst, fmt.Errorf("element %d: got %v, want %v (atol %g, rtol %g)", i, g, w, atol, rtol)
		}
	}
	return worst, nil
}
