package kernelkit

import "fmt"

// CheckSegmentIDs is the rule for segment ids: each in [0, segments) and,
// where the caller promised sorted ids, none below the one before it. It
// returns the first problem, or nil.
func CheckSegmentIDs[T ~int | ~int64](ids []T, segments int, sorted bool) error {
	for i, s := range ids {
		if s < 0 || int64(s) >= int64(segments) {
			return fmt.Errorf("segment_ids[%d] = %d is outside [0, %d)", i, s, segments)
		}
		if sorted && i > 0 && s < ids[i-1] {
			return fmt.Errorf("sorted is true but segment_ids[%d] = %d follows %d", i, s, ids[i-1])
		}
	}
	return nil
}

// CheckCSR is the rule for a CSR structure of numCols columns: indptr
// (one more entry than rows) starts at 0, never decreases and ends at the
// number of entries; each column index is in [0, numCols). It returns the
// first problem, or nil.
func CheckCSR[T ~int | ~int64](indptr, indices []T, numCols int) error {
	rows := len(indptr) - 1
	if rows < 0 {
		return fmt.Errorf("indptr is empty; it has one entry more than the rows")
	}
	if indptr[0] != 0 {
		return fmt.Errorf("indptr[0] is %d, want 0", indptr[0])
	}
	if int64(indptr[rows]) != int64(len(indices)) {
		return fmt.Errorf("indptr[%d] is %d, want the number of entries %d", rows, indptr[rows], len(indices))
	}
	for r := range rows {
		if indptr[r+1] < indptr[r] {
			return fmt.Errorf("indptr decreases at %d: %d after %d", r+1, indptr[r+1], indptr[r])
		}
	}
	for e, c := range indices {
		if c < 0 || int64(c) >= int64(numCols) {
			return fmt.Errorf("indices[%d] = %d is outside [0, %d)", e, c, numCols)
		}
	}
	return nil
}
