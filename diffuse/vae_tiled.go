package diffuse

import (
	"fmt"

	"github.com/webtensor/webtensor/core"
)

// DecodeTiled decodes latents in overlapping square tiles of tileLatent
// latent pixels, tileLatent - overlap apart, and blends each tile into its
// upper and left neighbours linearly across the overlap (overlap·f image
// pixels), as diffusers' AutoencoderKL.tiled_decode does after
// enable_tiling(): with tile_latent_min_size = tileLatent,
// tile_sample_min_size = tileLatent·f and tile_overlap_factor =
// overlap / tileLatent, the result is diffusers' (f = 2^(levels-1)).
//
// Why tiles: a plain Decode's largest activation grows with the image
// (block_out_channels[0] channels at full resolution) and its mid-block
// attention with the square of the latent's area; a tile bounds both, at
// the cost of a slightly different result near the seams (each tile's
// group norms and attention see only the tile). Like diffusers, latents
// no larger than one tile are decoded whole.
//
// The tiles follow diffusers exactly, including its order of blending:
// each tile is first blended with the (already blended) tile above, then
// with the (already blended) tile to its left, then cropped to the
// (tileLatent - overlap)·f rows and columns it contributes; the last
// tiles of a row or column may be partial, and the blend then spans at
// most the smaller tile.
func (m *AutoencoderKL) DecodeTiled(latents *core.Tensor, tileLatent, overlap int) (*core.Tensor, error) {
	return m.decodeTiled(latents, tileLatent, overlap, nil)
}

func (m *AutoencoderKL) decodeTiled(latents *core.Tensor, tile, overlap int, meter *activationMeter) (*core.Tensor, error) {
	switch {
	case tile < 1:
		return nil, fmt.Errorf("diffuse: AutoencoderKL.DecodeTiled: tile of %d latent pixels, want >= 1", tile)
	case overlap < 0:
		return nil, fmt.Errorf("diffuse: AutoencoderKL.DecodeTiled: overlap %d, want >= 0", overlap)
	case overlap >= tile:
		return nil, fmt.Errorf("diffuse: AutoencoderKL.DecodeTiled: tile of %d latent pixels is not larger than the overlap %d (the tiles would not advance)", tile, overlap)
	}
	if err := m.checkInput("DecodeTiled", "latents", latents, m.Config.LatentChannels, 1, "latent_channels"); err != nil {
		return nil, err
	}
	defer core.NoGradScope()()
	s := latents.Shape()
	hl, wl := s[2], s[3]
	var out *core.Tensor
	if hl <= tile && wl <= tile {
		out = m.decode(latents, meter)
	} else {
		f := m.Config.scale()
		stride, extent, limit := tile-overlap, overlap*f, (tile-overlap)*f
		var prev, rows []*core.Tensor
		for i := 0; i < hl; i += stride {
			var row, crops []*core.Tensor
			for j := 0; j < wl; j += stride {
				z := sliceAxis(latents, 2, i, min(i+tile, hl))
				z = sliceAxis(z, 3, j, min(j+tile, wl))
				t := m.decode(z, meter)
				if prev != nil {
					t = blendTiles(prev[len(row)], t, extent, 2)
				}
				if len(row) > 0 {
					t = blendTiles(row[len(row)-1], t, extent, 3)
				}
				row = append(row, t)
				t = sliceAxis(t, 2, 0, min(limit, dimOf(t, 2)))
				crops = append(crops, sliceAxis(t, 3, 0, min(limit, dimOf(t, 3))))
			}
			rows = append(rows, core.Concat(crops, core.Attrs{"axis": 3}))
			// Only the row above is blended into the next row; older
			// tiles can go.
			prev = row
		}
		out = core.Concat(rows, core.Attrs{"axis": 2})
		meter.see(out)
	}
	if err := out.Err(); err != nil {
		return nil, fmt.Errorf("diffuse: AutoencoderKL.DecodeTiled: %w", err)
	}
	return out, nil
}

func sliceAxis(x *core.Tensor, axis, start, stop int) *core.Tensor {
	return x.Slice(core.Attrs{"axis": axis, "start": start, "stop": stop})
}

// blendTiles is diffusers' blend_v (axis 2) or blend_h (axis 3): the first
// e = min(extent, a's and b's sides) rows or columns of b become
// a's last e ones · (1 - y/e) + b's · y/e, y = 0 … e-1. The weights are
// float32(1 - y/e) and float32(y/e), the Python floats torch rounds to the
// tensor's dtype.
func blendTiles(a, b *core.Tensor, extent, axis int) *core.Tensor {
	if a.Err() != nil {
		return a
	}
	if b.Err() != nil {
		return b
	}
	na, nb := dimOf(a, axis), dimOf(b, axis)
	e := min(na, nb, extent)
	if e == 0 {
		return b
	}
	wa, wb := make([]float64, e), make([]float64, e)
	for y := range e {
		wb[y] = float64(y) / float64(e)
		wa[y] = 1 - wb[y]
	}
	shape := core.Shape{1, 1, 1, 1}
	shape[axis] = e
	weight := func(v []float64) *core.Tensor {
		return core.FromFloat64s(core.F32, shape, v).Cast(b.DType()).To(b.Device())
	}
	mixed := sliceAxis(a, axis, na-e, na).Mul(weight(wa)).Add(sliceAxis(b, axis, 0, e).Mul(weight(wb)))
	if e == nb {
		return mixed
	}
	return core.Concat([]*core.Tensor{mixed, sliceAxis(b, axis, e, nb)}, core.Attrs{"axis": axis})
}
