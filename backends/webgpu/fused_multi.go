package webgpu

import (
	"fmt"
	"strings"

	"github.com/webtensor/webtensor/backends/lower"
	"github.com/webtensor/webtensor/core"
	"github.com/webtensor/webtensor/core/ir/fusion"
	"github.com/webtensor/webtensor/wgsl"
)

// Several fused trees over the same inputs in one kernel
// (fusion.MultiMapFuser, wgsl/map_multi.wgsl): each thread evaluates every
// tree at its element and stores one output per tree. An optimiser's step
// - a parameter and its moments - is one launch per parameter instead of
// about fifteen. The shader compiler may contract a*b+c into a fused
// multiply-add, which WGSL allows and no API can forbid, so the results
// agree with the op chain within the f32 tolerance, not bit for bit.

// FusesExactly is false: see above.
func (b *Backend) FusesExactly() bool { return false }

// FuseMaps computes every tree over inputs (broadcast to shape) into a new
// f32 tensor of shape. The trees' constants travel in the uniform block
// (lower.FusedHoisted), so a step with a new learning rate or bias
// correction reuses the kernel. A launch needs one storage buffer per input and per
// output: past the device's limit it is refused and the caller runs the
// op chain (Adam with AMSGrad needs 9; lavapipe and browsers allow 10).
func (b *Backend) FuseMaps(trees []*fusion.Expr, inputs []*core.Tensor, shape core.Shape, dtype core.DType) ([]*core.Tensor, error) {
	b.profileOp("fused")
	if dtype != core.F32 {
		return nil, fmt.Errorf("webgpu: fused kernels are f32, not %s", dtype)
	}
	if err := f32OnGPU("fused input", inputs); err != nil {
		return nil, err
	}
	if n, limit := len(inputs)+len(trees), int(b.limits.MaxStorageBuffersPerShaderStage); n > limit {
		return nil, fmt.Errorf("webgpu: %d trees over %d inputs need %d storage buffers, the device allows %d", len(trees), len(inputs), n, limit)
	}
	var sc lower.Scalars
	exprs, err := lower.FusedHoisted(trees, len(inputs), &sc)
	if err != nil {
		return nil, fmt.Errorf("webgpu: %w", err)
	}
	outs := make([]*core.Tensor, len(trees))
	for i := range outs {
		out, err := core.Empty(b, shape, core.F32)
		if err != nil {
			releaseAll(outs[:i]...)
			return nil, err
		}
		outs[i] = out
	}
	if err := b.mapMultiRun(inputs, outs, exprs, &sc); err != nil {
		releaseAll(outs...)
		return nil, err
	}
	return outs, nil
}

// mapMultiRun launches map_multi.wgsl: outs[j] = exprs[j] over ins, with
// the scalar slots sc.
func (b *Backend) mapMultiRun(ins, outs []*core.Tensor, exprs []string, sc *lower.Scalars) error {
	n := outs[0].Numel()
	if n == 0 {
		return nil
	}
	types := make([]string, len(ins))
	for i, t := range ins {
		types[i] = physical(t.DType())
	}
	var prm params
	prm.setScalars(sc)
	it := newIteration(outs[0].Shape(), ins...)
	if err := it.write(&prm, n); err != nil {
		return err
	}
	rank := len(it.Shape)
	key := fmt.Sprintf("map_multi|%d|r%d|%s|%s", mapWG, rank, strings.Join(types, ","), strings.Join(exprs, "|"))
	p, err := b.pipelineFor(key, len(ins), len(outs), func() (string, error) {
		return wgsl.Render("map_multi", map[string]any{"WG": mapWG, "Rank": rank, "Ins": types, "Out": "f32", "Exprs": exprs})
	})
	if err != nil {
		return err
	}
	bufs, err := buffers(append(append([]*core.Tensor{}, ins...), outs...)...)
	if err != nil {
		return err
	}
	return b.run(p, &prm, n, mapWG, bufs...)
}

var _ fusion.MultiMapFuser = (*Backend)(nil)
