package multimodal

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/webtensor/webtensor/backends/webgpu/webgputest"
	"github.com/webtensor/webtensor/core"
)

// resampleTol bounds the absolute error against torchaudio on signals of
// amplitude below 0.6: both build the taps in float32 steps (sine and
// cosine may differ by an ulp) and sum up to a few hundred float32
// products per sample in their own order. The largest error measured is
// 1.2e-7, on the CPU and WebGPU. Float64 waveforms meet float64 taps.
const resampleTol, resampleTol64 = 5e-7, 1e-12

func checkResample(t *testing.T, dev core.Device) {
	r := loadConformerRefs(t)
	require.NotEmpty(t, r.Resample)
	for _, c := range r.Resample {
		x := r.Get(t, "resample/"+c.Name+"/input", dev)
		got, err := Resample(x, c.From, c.To)
		require.NoError(t, err, c.Name)
		require.Equal(t, dev, got.Device())
		e := maxAbsErr(t, got, r.Get(t, "resample/"+c.Name+"/output", core.CPU))
		t.Logf("%s: %v -> %v: max error %.2g", c.Name, x.Shape(), got.Shape(), e)
		require.Less(t, e, resampleTol, c.Name)
		if dev == core.CPU { // WebGPU has no float64
			got, err = Resample(x.Cast(core.F64), c.From, c.To)
			require.NoError(t, err, c.Name)
			e = maxAbsErr(t, got, r.Get(t, "resample/"+c.Name+"/output_f64", core.CPU))
			t.Logf("%s: float64: max error %.2g", c.Name, e)
			require.Less(t, e, resampleTol64, c.Name)
		}
	}
}

func TestResampleMatchesTorchaudio(t *testing.T) { checkResample(t, core.CPU) }

func TestResampleOnWebGPU(t *testing.T) {
	webgputest.Need(t)
	checkResample(t, webgputest.Device)
}

func TestResampleErrors(t *testing.T) {
	x := core.FromSlice([]float32{1, 2, 3}, core.Shape{3})
	same, err := Resample(x, 16000, 16000)
	require.NoError(t, err)
	require.Same(t, x, same)
	// The reduced rates and the filter: 44100:16000 is 441:160, 17 taps
	// of margin (ceil(6 · 441 / (160 · 0.99))).
	k, width := resampleKernel(441, 160, true)
	require.Equal(t, 17, width)
	require.Len(t, k, 160*(2*17+441))

	_, err = Resample(x, 0, 16000)
	require.ErrorContains(t, err, "rates must be positive, got 0 Hz to 16000 Hz")
	_, err = Resample(core.FromSlice([]int32{1, 2}, core.Shape{2}), 8000, 16000)
	require.ErrorContains(t, err, "the waveform has dtype i32; want a float dtype")
	_, err = Resample(core.Scalar(1, core.F32, core.CPU), 8000, 16000)
	require.ErrorContains(t, err, "the waveform has shape []; want (..., time)")
	_, err = Resample(x, 44101, 16000)
	require.ErrorContains(t, err, "44101 Hz to 16000 Hz reduces to 44101:16000, whose filter bank would hold")
	_, err = Resample(nil, 8000, 16000)
	require.ErrorContains(t, err, "the waveform is nil")
}
