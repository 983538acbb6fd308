package diffuse

import (
	"fmt"

	"github.com/webtensor/webtensor/core"
)

// TiledDenoiser runs a conditional model on overlapping tiles of the
// latents and blends the predictions, MultiDiffusion's way of sampling
// latents larger than the model handles at once (for memory: a UNet's
// activations grow with the area, its self-attention with the square of
// it). At every step each Tile×Tile window, Tile - Overlap apart (the last
// row and column of windows moved back to end at the edge, so every
// window is whole), gets its own prediction, and each latent pixel's
// prediction is the weighted mean of the windows covering it. A window's
// weight falls off linearly over the Overlap pixels at each side that
// borders another window (from 1/(Overlap+1) at its edge to 1 inside) and
// stays 1 at the image's edges, so a window's border, where its
// convolutions saw zero padding instead of the neighbouring latents,
// counts least, and the seams blend. Since every step re-blends, the
// tiles agree with each other as the loop proceeds.
//
// It is a CondDenoiser: set it as CondPipeline.Model (with the latents'
// full Height and Width). Inputs no larger than a tile run whole, exactly
// as Model would. The pipeline's cross-attention cache reaches Model
// through it, so the text's keys and values are projected once per run,
// not once per tile and step.
type TiledDenoiser struct {
	Model CondDenoiser
	// Tile is the window's side in latent pixels; it must suit the model
	// (a multiple of 2^(levels-1) for a UNet).
	Tile int
	// Overlap is how many latent pixels neighbouring windows share, at
	// least 1 and less than Tile.
	Overlap int
}

// Forward predicts for sample (B, C, H, W) tile by tile.
func (d *TiledDenoiser) Forward(sample *core.Tensor, t float64, encoderHiddenStates *core.Tensor) (*core.Tensor, error) {
	const op = "diffuse: TiledDenoiser"
	switch {
	case d.Model == nil:
		return nil, fmt.Errorf("%s: Model is nil", op)
	case d.Tile < 1:
		return nil, fmt.Errorf("%s: tile of %d latent pixels, want >= 1", op, d.Tile)
	case d.Overlap < 1 || d.Overlap >= d.Tile:
		return nil, fmt.Errorf("%s: overlap %d, want 1 to %d (less than the tile of %d)", op, d.Overlap, d.Tile-1, d.Tile)
	}
	if err := sample.Err(); err != nil {
		return nil, fmt.Errorf("%s: sample: %w", op, err)
	}
	if sample.Rank() != 4 {
		return nil, fmt.Errorf("%s: sample has shape %v, want (batch, channels, height, width)", op, sample.Shape())
	}
	s := sample.Shape()
	h, w := s[2], s[3]
	if h <= d.Tile && w <= d.Tile {
		return d.Model.Forward(sample, t, encoderHiddenStates)
	}
	rows, cols := tileStarts(h, d.Tile, d.Overlap), tileStarts(w, d.Tile, d.Overlap)
	th, tw := min(d.Tile, h), min(d.Tile, w)
	total := make([]float64, h*w)
	var sum *core.Tensor
	for _, y := range rows {
		wy := tileRamp(y, th, h, d.Overlap)
		for _, x := range cols {
			wx := tileRamp(x, tw, w, d.Overlap)
			weight := make([]float64, th*tw)
			for i, a := range wy {
				for j, b := range wx {
					weight[i*tw+j] = a * b
					total[(y+i)*w+x+j] += a * b
				}
			}
			in := sliceAxis(sliceAxis(sample, 2, y, y+th), 3, x, x+tw)
			out, err := d.Model.Forward(in, t, encoderHiddenStates)
			if err != nil {
				return nil, fmt.Errorf("%s: tile at (%d, %d): %w", op, y, x, err)
			}
			wt := core.FromFloat64s(core.F32, core.Shape{1, 1, th, tw}, weight).Cast(out.DType()).To(out.Device())
			// Pad places the weighted tile on the full canvas (zeros
			// elsewhere): pads are left, right, top, bottom.
			placed := out.Mul(wt).Pad(core.Attrs{"pads": []int{x, w - x - tw, y, h - y - th}})
			if sum == nil {
				sum = placed
			} else {
				sum = sum.Add(placed)
			}
		}
	}
	// Every pixel is covered with a positive weight, so the mean is the
	// weighted sum times the reciprocal of the weights' total.
	for i, v := range total {
		total[i] = 1 / v
	}
	norm := core.FromFloat64s(core.F32, core.Shape{1, 1, h, w}, total).Cast(sum.DType()).To(sum.Device())
	out := sum.Mul(norm)
	if err := out.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	return out, nil
}

// CacheCrossAttention passes the pipeline's cross-attention cache on to
// Model, when it has one; every tile then shares the keys and values.
func (d *TiledDenoiser) CacheCrossAttention() (release func()) {
	if c, ok := d.Model.(interface{ CacheCrossAttention() func() }); ok {
		return c.CacheCrossAttention()
	}
	return func() {}
}

// tileStarts are the first rows (or columns) of the windows along an axis
// of n pixels: every tile-overlap pixels, the last moved back to end at n.
func tileStarts(n, tile, overlap int) []int {
	if n <= tile {
		return []int{0}
	}
	var starts []int
	for p := 0; p+tile < n; p += tile - overlap {
		starts = append(starts, p)
	}
	return append(starts, n-tile)
}

// tileRamp is a window's weight along one axis: for a window of size
// pixels at start on an axis of n, 1 except within overlap pixels of a
// side that is not the axis' edge, where it falls linearly to
// 1/(overlap+1) at the window's outermost pixel.
func tileRamp(start, size, n, overlap int) []float64 {
	r := make([]float64, size)
	for i := range r {
		d := overlap // distance to the nearest inner side, capped
		if start > 0 {
			d = min(d, i)
		}
		if start+size < n {
			d = min(d, size-1-i)
		}
		r[i] = float64(d+1) / float64(overlap+1)
	}
	return r
}
