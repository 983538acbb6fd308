package gcpace

import (
	"bytes"
	"testing"
)

// Copy is copy: lengths past the shorter side left alone, and a move down
// within one buffer over several steps (as the ONNX importer aligns a
// weight in place) equal to the one memmove.
func TestCopyIsCopy(t *testing.T) {
	n := 3*copyStep + copyStep/2 + 5
	src := make([]byte, n)
	for i := range src {
		src[i] = byte(i*7 + i>>11)
	}
	for _, c := range []struct{ dst, src int }{{n, n}, {n - 9, n}, {n, 100}, {0, n}} {
		want, got := make([]byte, c.dst), make([]byte, c.dst)
		copy(want, src[:c.src])
		Copy(got, src[:c.src])
		if !bytes.Equal(want, got) {
			t.Fatalf("dst %d, src %d: differs from copy", c.dst, c.src)
		}
	}
	for _, d := range []int{1, 3, 7} {
		want, got := append([]byte{}, src...), append([]byte{}, src...)
		copy(want, want[d:])
		Copy(got, got[d:])
		if !bytes.Equal(want, got) {
			t.Fatalf("a move down by %d differs from copy's", d)
		}
	}
}
