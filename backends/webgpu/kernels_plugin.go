package webgpu

import (
	"crypto/sha256"
	"fmt"
	"sync"

	"github.com/webtensor/webtensor/core"
)

// carriedWG is the workgroup size the plugin WGSL contract fixes.
const carriedWG = 64

// carried caches the kernel built for each op definition and WGSL source,
// so a plugin op's call does not hash its shader every time.
var carried sync.Map // carriedKey -> core.Kernel

type carriedKey struct {
	def  *core.OpDef
	wgsl string
}

func carriedKernelFor(def *core.OpDef) core.Kernel {
	key := carriedKey{def, def.WGSL}
	if k, ok := carried.Load(key); ok {
		return k.(core.Kernel)
	}
	k, _ := carried.LoadOrStore(key, carriedKernel(def))
	return k.(core.Kernel)
}

// carriedKernel runs the WGSL an op definition carries (core.OpDef.WGSL,
// from a plugin manifest) with the layout documented there: inputs, then
// outputs, then a uniform {n, scalar attributes in declaration order}.
// Inputs are passed dense from element 0, since such kernels index x[i].
func carriedKernel(def *core.OpDef) core.Kernel {
	sum := sha256.Sum256([]byte(def.WGSL))
	key := fmt.Sprintf("carried|%s|%x", def.Name, sum[:8])
	return func(k *core.KernelCall) error {
		g := gpuOf(k)
		if len(k.Outputs) == 0 {
			return fmt.Errorf("webgpu: %s has no outputs for its WGSL kernel", def.Name)
		}
		n := k.Outputs[0].Numel()
		if n == 0 {
			return nil
		}
		if groups := (n + carriedWG - 1) / carriedWG; groups > 65535 {
			return fmt.Errorf("webgpu: %s's WGSL kernel covers at most %d elements in one dispatch (65535 workgroups of %d), got %d; run it on device cpu",
				def.Name, 65535*carriedWG, carriedWG, n)
		}
		ins := make([]*core.Tensor, 0, len(k.Inputs))
		for i, t := range k.Inputs {
			if t == nil {
				return fmt.Errorf("webgpu: %s's WGSL kernel needs input %d, which is absent", def.Name, i)
			}
			if !t.IsContiguous() || t.Offset() != 0 {
				d, err := core.Empty(g, t.Shape(), t.DType())
				if err != nil {
					return err
				}
				defer d.Release()
				if err := g.mapRun([]*core.Tensor{t}, d, "x0", nil); err != nil {
					return err
				}
				t = d
			}
			ins = append(ins, t)
		}
		nIn, nOut := len(ins), len(k.Outputs)
		p, err := g.pipelineWithLayout(key, nIn, nOut, nIn+nOut, func() (string, error) { return def.WGSL, nil })
		if err != nil {
			return fmt.Errorf("%s's WGSL kernel: %w", def.Name, err)
		}
		var prm params
		prm.setI(0, n)
		slot := 1
		for _, a := range def.Attrs {
			switch a.Kind {
			case core.AttrFloat:
				prm.setF(slot, k.Attrs.Float(a.Name))
			case core.AttrInt:
				prm.setI(slot, k.Attrs.Int(a.Name))
			case core.AttrBool:
				if k.Attrs.Bool(a.Name) {
					prm.setU(slot, 1)
				}
			default:
				continue
			}
			slot++
		}
		bufs, err := buffers(append(ins, k.Outputs...)...)
		if err != nil {
			return err
		}
		x, _ := groupsFor(n, carriedWG)
		return g.runGroups(p, &prm, [3]uint32{x, 1, 1}, bufs...)
	}
}
