package webgpu

import (
	"fmt"
	"regexp"
	"strconv"
)

// Synthesised kernel variants: where the tuner's fixed variants (the vec4
// kernels' 8x8 and 16x8 blocks, 64 or 256 threads a workgroup) are a
// handful of points, the auto-kernel agent (package auto) searches a space
// of them, rendered from one parametrised template (linalg_matmul_syn.wgsl)
// or, for elementwise and reduction launches, any power-of-two workgroup
// size. A synthesised variant is a decision like any other: the tuner keeps
// it per device and shape class, in memory and in the disk cache, and a
// later process runs it without measuring.

// MatmulTile is a synthesised matmul variant: each thread computes TM rows
// by TN columns of c, reading a and b as vectors of V floats and unrolling
// KU chunks of V along K per loop iteration; a workgroup holds WX
// threads along c's columns by WY along its rows. NoTail leaves out the
// loop over the chunks of K an unrolled step does not cover: such a kernel
// is wrong whenever K/V is not a multiple of KU. The synthesiser never
// makes one; it exists so that the agent's check before timing is tested
// on a kernel that is really wrong.
type MatmulTile struct {
	TM, TN, V, KU, WX, WY int
	NoTail                bool
}

// Variant is the tile's name as the tuner records it:
// syn-m8n8v4k4-wg64x1 (rows, columns, vector width, K per step, workgroup).
func (t MatmulTile) Variant() string {
	s := fmt.Sprintf("syn-m%dn%dv%dk%d-wg%dx%d", t.TM, t.TN, t.V, t.V*t.KU, t.WX, t.WY)
	if t.NoTail {
		s += "-notail"
	}
	return s
}

var tileName = regexp.MustCompile(`^syn-m(\d+)n(\d+)v(\d+)k(\d+)-wg(\d+)x(\d+)(-notail)?$`)

// ParseMatmulTile reads a variant name made by Variant and checks it.
func ParseMatmulTile(variant string) (MatmulTile, error) {
	f := tileName.FindStringSubmatch(variant)
	if f == nil {
		return MatmulTile{}, fmt.Errorf("webgpu: %q is not a synthesised matmul variant (want syn-m<rows>n<cols>v<width>k<K per step>-wg<x>x<y>)", variant)
	}
	n := make([]int, 6)
	for i := range n {
		n[i], _ = strconv.Atoi(f[i+1])
	}
	t := MatmulTile{TM: n[0], TN: n[1], V: n[2], WX: n[4], WY: n[5], NoTail: f[7] != ""}
	if t.V > 0 {
		t.KU = n[3] / t.V
		if n[3]%t.V != 0 {
			return MatmulTile{}, fmt.Errorf("webgpu: variant %q: K per step %d is not a multiple of the vector width %d", variant, n[3], t.V)
		}
	}
	if err := t.Check(); err != nil {
		return MatmulTile{}, fmt.Errorf("webgpu: variant %q: %w", variant, err)
	}
	return t, nil
}

// maxTileRegs bounds the floats of c a thread keeps (TM*TN): past 128 the
// compilers spill, and a software driver's compile time grows with the
// unrolled code (a 16x16 block took lavapipe seconds to build).
const maxTileRegs = 128

// Check says why a tile cannot be built, or nil.
func (t MatmulTile) Check() error {
	switch {
	case t.V != 2 && t.V != 4:
		return fmt.Errorf("vector width %d; want 2 or 4", t.V)
	case t.TM < 1 || t.TM > 16:
		return fmt.Errorf("%d rows a thread; want 1 to 16", t.TM)
	case t.TN < t.V || t.TN%t.V != 0 || t.TN/t.V > 4:
		return fmt.Errorf("%d columns a thread with vectors of %d; want 1 to 4 whole vectors", t.TN, t.V)
	case t.TM*t.TN > maxTileRegs:
		return fmt.Errorf("a %dx%d block holds %d floats a thread; at most %d", t.TM, t.TN, t.TM*t.TN, maxTileRegs)
	case t.KU < 1 || t.KU > 4:
		return fmt.Errorf("%d chunks of K a step; want 1 to 4", t.KU)
	case t.WX < 1 || t.WY < 1 || t.WX*t.WY > 256 || t.WX*t.WY < 16:
		return fmt.Errorf("a %dx%d workgroup; want 16 to 256 threads", t.WX, t.WY)
	}
	return nil
}

// kStep is how far along K one loop iteration gets (loopSafeMatmul).
func (t MatmulTile) kStep() int { return t.V * t.KU }

// grid is the dispatch for an m x n product over nb batch entries.
func (t MatmulTile) grid(nb, m, n int) [3]uint32 {
	vecCols := (n/t.V + t.TN/t.V - 1) / (t.TN / t.V)
	rows := (m + t.TM - 1) / t.TM
	return [3]uint32{uint32((vecCols + t.WX - 1) / t.WX), uint32((rows + t.WY - 1) / t.WY), uint32(nb)}
}

// fits is whether the grid stays within 65535 workgroups a dimension.
func (t MatmulTile) fits(nb, m, n int) bool {
	for _, g := range t.grid(nb, m, n) {
		if g > 65535 {
			return false
		}
	}
	return true
}

// templateData is what linalg_matmul_syn.wgsl reads besides the store's.
func (t MatmulTile) templateData(data map[string]any) {
	seq := func(n int) []int {
		s := make([]int, n)
		for i := range s {
			s[i] = i
		}
		return s
	}
	data["V"], data["VT"] = t.V, fmt.Sprintf("vec%d<f32>", t.V)
	data["TM"], data["TNQ"], data["KU"], data["KStep"] = t.TM, t.TN/t.V, t.KU, t.kStep()
	data["WX"], data["WY"], data["Tail"] = t.WX, t.WY, !t.NoTail
	data["Rows"], data["Cols"], data["Us"], data["Es"] = seq(t.TM), seq(t.TN/t.V), seq(t.KU), seq(t.V)
	data["Comp"] = []string{".x", ".y", ".z", ".w"}
}

// synthTile is the tile of a synthesised variant name.
func synthTile(variant string) (MatmulTile, bool) {
	if len(variant) < 4 || variant[:4] != "syn-" {
		return MatmulTile{}, false
	}
	t, err := ParseMatmulTile(variant)
	return t, err == nil
}

// SynthWorkgroups are the workgroup sizes a synthesised elementwise or
// reduction launch may take (the tuner's own are 64 and 256).
var SynthWorkgroups = []string{"16", "32", "64", "128", "256"}

// acceptsSynth is whether v, though not among a kind's fixed variants, is a
// synthesised one that kind and class can run: a tile for a vec4 NN product
// (class suffix -v4), a workgroup size for a -wg kind.
func acceptsSynth(kind, class, v string) bool {
	switch {
	case kind == "matmul":
		_, ok := synthTile(v)
		return ok && len(class) > 3 && class[len(class)-3:] == "-v4"
	case len(kind) > 3 && kind[len(kind)-3:] == "-wg":
		for _, w := range SynthWorkgroups {
			if v == w {
				return true
			}
		}
	}
	return false
}
