package auto

import (
	"sort"

	"github.com/webtensor/webtensor/backends/webgpu"
)

// The space of variants the kernel agent synthesises for a WebGPU
// decision, and the order it searches it in. A matmul tile is rows and
// columns of c a thread owns, the vector width it reads, the chunks of K
// one loop step unrolls and the workgroup's shape; a workgroup-size
// decision takes any size of webgpu.SynthWorkgroups.

var (
	tileRows       = []int{2, 4, 8, 16}
	tileCols       = map[int][]int{4: {4, 8, 16}, 2: {4, 8}} // by vector width
	tileUnroll     = []int{1, 2}
	tileWorkgroups = [][2]int{{64, 1}, {8, 8}, {16, 4}, {4, 16}}
)

// synthSpace lists every variant the agent may synthesise for use's
// decision: the choices of its setting.
func synthSpace(use webgpu.KernelUse) []string {
	if use.Kind != "matmul" {
		return append([]string(nil), webgpu.SynthWorkgroups...)
	}
	var out []string
	for _, v := range []int{4, 2} {
		for _, tm := range tileRows {
			for _, tn := range tileCols[v] {
				for _, ku := range tileUnroll {
					for _, wg := range tileWorkgroups {
						t := webgpu.MatmulTile{TM: tm, TN: tn, V: v, KU: ku, WX: wg[0], WY: wg[1]}
						if t.Check() == nil {
							out = append(out, t.Variant())
						}
					}
				}
			}
		}
	}
	return out
}

// search tries (checks, then times) at most budget variants of space. For
// a matmul it goes in two stages: every block shape that fits the
// product's rows and columns, unrolled once in a 64-thread row; then, for
// the two fastest shapes, each unrolling and workgroup shape. The stages
// follow what decides speed on the devices measured: the block's size
// first (how often a and b are reread), its issue details second.
func search(use webgpu.KernelUse, space []string, budget int, timeOf map[string]float64, try func(string) error) error {
	tried := 0
	attempt := func(v string) error {
		if tried >= budget {
			return nil
		}
		tried++
		return try(v)
	}
	if use.Kind != "matmul" {
		for _, v := range space {
			if err := attempt(v); err != nil {
				return err
			}
		}
		return nil
	}
	m, n := use.Workload["m"], use.Workload["n"]
	var shapes []webgpu.MatmulTile
	for _, v := range space {
		t, err := webgpu.ParseMatmulTile(v)
		if err != nil || t.KU != 1 || t.WX != 64 || (t.TM > 2 && t.TM > m) || t.TN > n {
			continue
		}
		shapes = append(shapes, t)
		if err := attempt(v); err != nil {
			return err
		}
	}
	sort.SliceStable(shapes, func(i, j int) bool {
		ti, iok := timeOf[shapes[i].Variant()]
		tj, jok := timeOf[shapes[j].Variant()]
		if iok != jok {
			return iok
		}
		return ti < tj
	})
	for _, s := range shapes[:min(2, len(shapes))] {
		for _, ku := range tileUnroll {
			for _, wg := range tileWorkgroups {
				t := s
				t.KU, t.WX, t.WY = ku, wg[0], wg[1]
				if t.Check() != nil {
					continue
				}
				if err := attempt(t.Variant()); err != nil {
					return err
				}
			}
		}
	}
	return nil
}
