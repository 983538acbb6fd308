package lower

import "math"

// NumScalars is the number of scalar attribute slots an expression reads.
const NumScalars = 8

// Scalars are the attribute values an expression reads through pf(k),
// pi(k) and pu(k) instead of baking them into its source, so one compiled
// kernel serves every value. Each slot keeps what was set at full width;
// Words gives WebGPU's 32-bit encoding of it.
type Scalars struct {
	F    [NumScalars]float64
	I    [NumScalars]int64
	U    [NumScalars]uint32
	kind [NumScalars]byte // 'f', 'i', 'u', or 0 when unset
}

// SetF puts a float in slot k (read by pf(k)).
func (s *Scalars) SetF(k int, v float64) { s.F[k], s.kind[k] = v, 'f' }

// SetI puts a signed integer in slot k (read by pi(k)).
func (s *Scalars) SetI(k int, v int64) { s.I[k], s.kind[k] = v, 'i' }

// SetU puts an unsigned integer in slot k (read by pu(k)).
func (s *Scalars) SetU(k int, v uint32) { s.U[k], s.kind[k] = v, 'u' }

// Words encodes the slots as 32-bit words the way WGSL reads them: f32
// bits, two's-complement i32, u32.
func (s *Scalars) Words() [NumScalars]uint32 {
	var w [NumScalars]uint32
	for k, kind := range s.kind {
		switch kind {
		case 'f':
			w[k] = math.Float32bits(float32(s.F[k]))
		case 'i':
			w[k] = uint32(int32(s.I[k]))
		case 'u':
			w[k] = s.U[k]
		}
	}
	return w
}
