package lower

import (
	"fmt"
	"math"
	"strconv"
)

// FloatToInt is numerics.FloatToInt in the dialect: float v of compute type ft
// becomes a value in [lo, hi] of integer compute type ct: NaN gives 0,
// other values truncate toward zero and saturate at the ends of the range.
// The bounds are tested in ft (lo and hi+1 are exact there for every
// integer dtype: 0, 1 or powers of two), so a conversion never sees a
// value it would have to clamp, which WGSL does short of 2^31-1 and C++
// leaves undefined.
func FloatToInt(v, ft, ct string, lo, hi int64) string {
	return fmt.Sprintf("select(select(select(%[1]s, %[2]s, %[3]s < %[4]s), %[5]s, %[3]s >= %[6]s), %[7]s, %[8]s)",
		Conv(v, ft, ct), intLiteral(ct, lo), v, floatLiteral(ft, float64(lo)),
		intLiteral(ct, hi), floatLiteral(ft, float64(hi)+1), Zero(ct), IsNaN(v, ft))
}

// intLiteral writes n in integer type ct, typed (an untyped -2^31 or
// 2^32-1 is not an i32 or u32 everywhere).
func intLiteral(ct string, n int64) string {
	switch {
	case ct == U32:
		return strconv.FormatUint(uint64(n), 10) + "u"
	case n == math.MinInt64:
		return "(" + ct + "(-9223372036854775807) - " + ct + "(1))"
	}
	return ct + "(" + strconv.FormatInt(n, 10) + ")"
}

// floatLiteral writes a whole number exactly representable in ft.
func floatLiteral(ft string, f float64) string {
	return ft + "(" + strconv.FormatFloat(f, 'f', 1, 64) + ")"
}
