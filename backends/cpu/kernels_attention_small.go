package cpu

import "math"

// Attention with narrow heads - the 8- and 16-wide heads of a small
// diffusion UNet's 32- and 64-channel levels, over 1024 latent positions -
// spent most of its time around the products rather than in them: each
// 64-row block packed its query rows and the head's keys, wrote a 64 x S
// score block, and for P V transposed that block into the packing of
// Pᵀ (the product has only Ev rows), which alone took as long as the
// products' arithmetic. attentionTile16 instead scores sixteen queries at
// once, one per vector lane, against the keys read in place: the scores
// go to a small scratch in the layout the weighting pass reads back, and
// P V is accumulated in registers, so nothing is packed or transposed.
// BenchmarkAttentionF32Forward/bh8_l1024_e8 (8 heads of 8 over 1024
// positions, 2 threads on a loaded 2-core machine, medians of 8
// interleaved runs) went 18.2 -> 5.9 ms, and the small UNet's forward
// (diffuse's BenchmarkUNet2DConditionForward) lost about a third.
// The tile is bound by vector instructions, so its weights are powers of
// two: the queries come scaled by log2(e) too, and 2^x takes 10
// instructions where e^x took 17 (bh8_l1024_e8 2.3 -> 1.7 ms at 2
// threads, the UNet's forward 5% less).

// attentionTileQueries is how many queries one tile scores: a vector's
// lanes.
const attentionTileQueries = 16

// attentionTile16, where the CPU has one (nil elsewhere), computes
// out[e*16+lane] for e < ev: the attention output of the sixteen queries
// in qt (qt[e*16+lane], e < width e) over s keys k (rows ldk apart, width
// e) and values v (rows ldv apart, width ev), weighing key j by 2^(q·k_j)
// normalised, with the queries scaled by scale2 = scale·log2(e) as the
// tile loads them: that is softmax(scale·q·k) with the exponential in
// base 2, which the tile computes in fewer instructions. bias, when not
// nil, holds s floats added to the keys' scores (a key-padding mask times
// log2(e)). e and ev are 8 or 16, or both 32, and scores holds s*16 floats
// of scratch.
var attentionTile16 func(qt []float32, e int, k []float32, ldk int, v []float32, ldv, ev, s int, scale2 float32, scores, out, bias []float32)

// smallHeads reports whether at takes the tile path: no causal cut (the
// tile scores every key), no mask or one that depends on the key alone (a
// padding mask), and heads of 8 or 16, or of 32 for both queries and
// values (in two passes each: a 64-channel UNet level's heads and
// MiniLM's).
func (at *attentionF32) smallHeads() bool {
	narrow := func(w int) bool { return w == 8 || w == 16 }
	heads := (narrow(at.E) && narrow(at.Ev)) || (at.E == 32 && at.Ev == 32)
	keyMask := at.mask == nil || (at.mask.strideL == 0 && at.mask.strideS == 1)
	return attentionTile16 != nil && keyMask && !at.causal && heads && at.S > 0
}

// keyBias writes entry b's key-padding mask times log2(e) into bias (the
// tiles score in base 2) and reports whether any key is left to attend to
// (a mask of -inf hides a key; a finite one, however large, does not: an
// exporter's float32 minimum stays finite, so a row masked by it
// everywhere averages every key, as the unscaled scores do).
func (at *attentionF32) keyBias(b int, bias []float32) bool {
	m := at.mask.add[at.mask.base[b]:][:len(bias)]
	visible := false
	for j, v := range m {
		bias[j] = v * math.Log2E
		if hidden := math.IsInf(float64(v), -1); !hidden {
			visible = true
			bias[j] = max(bias[j], -math.MaxFloat32)
		}
	}
	return visible
}

// forwardTiles is forward through attentionTile16, in parallel over
// (batch entry, tile of queries).
func (at *attentionF32) forwardTiles(out []float32) {
	L, S, E, Ev := at.L, at.S, at.E, at.Ev
	const q = attentionTileQueries
	tiles := (L + q - 1) / q
	tasks := at.batch * tiles
	workers := max(1, min(NumThreads(), tasks))
	// A multi-head layer's keys and values are rows heads·E apart, one
	// cache line of each 256 bytes for 16-wide heads: every tile of a head
	// rereads them, and the spatial prefetcher fetches the neighbouring
	// heads' lines with them, so the tiles read twice the memory the head
	// needs. Such heads are copied into dense rows once per worker and head
	// (the small UNet's 4096-position self-attention 64 -> 45 ms a layer).
	packed := at.k.ld != E || at.v.ld != Ev
	per := q*E + q*Ev + q*S // transposed queries, output tile, scores
	if at.mask != nil {
		per += S // the entry's key bias
	}
	if packed {
		per += S * (E + Ev)
	}
	scratch := tempF32(workers * per)
	keys := at.keysToScore() // kernels_attention_keys.go: the keys past the last live one left out
	chunk := (tasks + workers - 1) / workers
	parallelFor(workers, chunk*q*S*(E+Ev)*2, func(lo, hi int) {
		for w := lo; w < hi; w++ {
			buf := scratch[w*per : (w+1)*per]
			qt, ot, scores := buf[:q*E], buf[q*E:q*(E+Ev)], buf[q*(E+Ev):q*(E+Ev+S)]
			rest := buf[q*(E+Ev+S):]
			var bias []float32 // the entry's key bias; nil without a mask
			if at.mask != nil {
				bias, rest = rest[:S], rest[S:]
			}
			var kb, vb []float32 // entry b's rows, ldk and ldv apart
			ldk, ldv, head, visible, width := at.k.ld, at.v.ld, -1, true, S
			for t := w * chunk; t < min(tasks, (w+1)*chunk); t++ {
				b := t / tiles
				if b != head {
					head, width = b, S
					if keys != nil {
						// A left-out key's weight is 2^-150 rounded: exactly
						// 0, its term in the sum and in P V too (keysToScore
						// checks V finite), and the tile adds the keys in
						// order, so the sums are those of all S.
						width = keys[b]
					}
					kb, vb = at.k.at(b, 0), at.v.at(b, 0)
					if packed {
						kb, vb = packRows(kb, at.k.ld, width, E, rest[:S*E]), packRows(vb, at.v.ld, width, Ev, rest[S*E:])
						ldk, ldv = E, Ev
					}
					if bias != nil {
						visible = at.keyBias(b, bias)
					}
				}
				if !visible { // every key masked: zeros, as the safe softmax gives
					at.zeroTile(b, (t%tiles)*q, out)
					continue
				}
				if width < S {
					attentionKeysSkipped.Add(int64(min(q, L-(t%tiles)*q) * (S - width)))
				}
				at.forwardTile(b, (t%tiles)*q, width, qt, ot, scores, out, kb, ldk, vb, ldv, bias)
			}
		}
	})
}

// packRows copies n rows of width w, ld apart in src, into dst as dense rows.
func packRows(src []float32, ld, n, w int, dst []float32) []float32 {
	for i := range n {
		copy(dst[i*w:(i+1)*w], src[i*ld:i*ld+w])
	}
	return dst[:n*w]
}

// forwardTile writes output rows i0.. (at most 16) of batch entry b over
// its first width keys, whose keys and values are the rows of k and v,
// ldk and ldv apart.
func (at *attentionF32) forwardTile(b, i0, width int, qt, ot, scores, out, k []float32, ldk int, v []float32, ldv int, bias []float32) {
	L, E, Ev := at.L, at.E, at.Ev
	const q = attentionTileQueries
	n := min(q, L-i0)
	if n < q {
		clear(qt) // lanes past the last query score zeros, and are dropped
	}
	qs, ldq := at.q.at(b, i0), at.q.ld
	// A whole tile's rows are transposed eight at a time (the kernel
	// scales them as it loads them); a partial one element by element.
	if n < q || transpose8Vec(qt, q, qs, ldq, E) < E || transpose8Vec(qt[8:], q, qs[8*ldq:], ldq, E) < E {
		for r := range n {
			for e, x := range qs[r*ldq : r*ldq+E] {
				qt[e*q+r] = x
			}
		}
	}
	if bias != nil {
		bias = bias[:width]
	}
	attentionTile16(qt, E, k, ldk, v, ldv, Ev, width, at.scale*math.Log2E, scores, ot, bias)
	base, ld := at.outRows(b, i0)
	if n == q && transposeTileOut(out[base:], ld, ot, Ev) {
		return
	}
	for r := range n {
		row := out[base+r*ld : base+r*ld+Ev]
		for e := range row {
			row[e] = ot[e*q+r]
		}
	}
}

// outRows is where output row i0 of entry b starts in the output, and
// how far apart its rows are.
func (at *attentionF32) outRows(b, i0 int) (base, ld int) {
	if at.heads > 0 { // entry b is head b%heads of item b/heads: rows heads*Ev apart
		return ((b/at.heads*at.L+i0)*at.heads + b%at.heads) * at.Ev, at.heads * at.Ev
	}
	return (b*at.L + i0) * at.Ev, at.Ev
}

// zeroTile clears output rows i0.. (at most 16) of entry b.
func (at *attentionF32) zeroTile(b, i0 int, out []float32) {
	base, ld := at.outRows(b, i0)
	for r := range min(attentionTileQueries, at.L-i0) {
		clear(out[base+r*ld : base+r*ld+at.Ev])
	}
}

// transposeTileOut writes a whole tile's outputs ot (ot[e*16+r], e < ev)
// as sixteen rows of dst, ld apart, eight values of each row at a time;
// false without the vector transposition.
func transposeTileOut(dst []float32, ld int, ot []float32, ev int) bool {
	const q = attentionTileQueries
	for e0 := 0; e0 < ev; e0 += 8 {
		if transpose8Vec(dst[e0:], ld, ot[e0*q:], q, q) < q {
			return false // the caller writes every row
		}
	}
	return true
}
