package cpu

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sync"
	"testing"
)

// The parallel product cuts C into tasks by rows and columns (gemmSplit)
// and runs every k panel inside a task; whatever the cut, each element is
// the same chain of products in k order, so the result equals the serial
// product's bit for bit, and the epilogue sees every element of C exactly
// once, after its last panel. Shapes: a few A slivers (a column split),
// ragged rows and columns, a tall C cut into its gemmMC blocks with 13
// rows over, two column blocks (n > gemmNC) with a partial
// one, k over several panels; 1 to 5 threads.
func TestGemmSplitMatchesSerial(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	shapes := [][3]int{{197, 768, 300}, {13, 1100, 520}, {70, 33, 9}, {400, 1030, 257}, {8, 64, 64}, {1101, 40, 70}}
	for _, d := range shapes {
		m, n, k := d[0], d[1], d[2]
		a, b := randF32(rng, m*k), randF32(rng, k*n)
		want := make([]float32, m*n)
		gemmBlocked(false, false, false, m, n, k, 1, a, k, b, n, 0, want, n)
		for threads := 1; threads <= 5; threads++ {
			t.Run(fmt.Sprintf("%dx%dx%d/threads%d", m, n, k, threads), func(t *testing.T) {
				defer SetNumThreadsForTest(threads)()
				c := make([]float32, m*n)
				var mu sync.Mutex
				seen := make([]int, m*n)
				epi := func(r0, r1, c0, c1 int) {
					mu.Lock()
					defer mu.Unlock()
					for i := r0; i < r1; i++ {
						for j := c0; j < c1; j++ {
							if math.Float32bits(c[i*n+j]) != math.Float32bits(want[i*n+j]) {
								t.Errorf("epilogue of (%d, %d) ran before its product was complete: %v, want %v", i, j, c[i*n+j], want[i*n+j])
							}
							seen[i*n+j]++
						}
					}
				}
				gemmBlockedFinish(true, false, false, m, n, k, 1, a, k, b, n, 0, c, n, epi, nil)
				for i := range c {
					if math.Float32bits(c[i]) != math.Float32bits(want[i]) {
						t.Fatalf("element %d = %v, serial %v", i, c[i], want[i])
					}
					if seen[i] != 1 {
						t.Fatalf("the epilogue saw element (%d, %d) %d times", i/n, i%n, seen[i])
					}
				}
			})
		}
	}
}

// Every task of a split is non-empty where C has room for one, and the
// tasks tile C: rows in whole A slivers, columns in whole B slivers. A
// tall C is cut into its gemmMC blocks (claimed as threads come free),
// none under a block or as long as two.
func TestGemmSplitTilesC(t *testing.T) {
	for _, workers := range []int{1, 2, 3, 8} {
		for _, mn := range [][2]int{{197, 768}, {1, 5000}, {9, 40}, {4096, 32}, {31, 31}, {1024, 384}, {788, 768}, {1101, 24}} {
			s := gemmSplitTasks(workers, mn[0], mn[1])
			tall := workers > 1 && mn[0] >= 2*workers*gemmMC
			if !tall && s.rowParts*s.colParts > max(workers, 1)*2 {
				t.Errorf("%d workers, %v: %d x %d tasks", workers, mn, s.rowParts, s.colParts)
			}
			if tall && (s.rowParts != mn[0]/gemmMC || s.colParts != 1) {
				t.Errorf("%d workers, %v: %d x %d tasks, want one per gemmMC block", workers, mn, s.rowParts, s.colParts)
			}
			covered := 0
			for task := range s.rowParts * s.colParts {
				r0, r1, s0, s1 := s.task(task)
				if r0%gemmMR != 0 || r1 <= r0 || s1 <= s0 {
					t.Fatalf("%d workers, %v: task %d has rows %d..%d, slivers %d..%d", workers, mn, task, r0, r1, s0, s1)
				}
				if tall && (r1-r0 < gemmMC || r1-r0 >= 2*gemmMC) {
					t.Errorf("%d workers, %v: task %d has %d rows, not one gemmMC block", workers, mn, task, r1-r0)
				}
				covered += (r1 - r0) * (min(mn[1], s1*gemmNR) - s0*gemmNR)
			}
			if covered != mn[0]*mn[1] {
				t.Errorf("%d workers, %v: tasks cover %d elements of %d", workers, mn, covered, mn[0]*mn[1])
			}
		}
	}
}
