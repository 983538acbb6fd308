package cpu

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
)

// A Go allocation larger than the machine's memory is a fatal runtime error,
// not a recoverable panic, so the CPU backend refuses it up front with an
// error that names the size. The limit is the physical memory where the
// platform tells us (Linux), else 1 TiB; WEBTENSOR_CPU_MAX_BYTES overrides it.

var (
	limitOnce sync.Once
	limit     int64
)

func maxAllocBytes() int64 {
	limitOnce.Do(func() {
		limit = 1 << 40
		if v, err := strconv.ParseInt(os.Getenv("WEBTENSOR_CPU_MAX_BYTES"), 10, 64); err == nil && v > 0 {
			limit = v
			return
		}
		if total := memTotal(); total > 0 {
			limit = total
		}
	})
	return limit
}

// memTotal reads MemTotal from /proc/meminfo (0 when unavailable).
func memTotal() int64 {
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) >= 2 && fields[0] == "MemTotal:" {
			kb, err := strconv.ParseInt(fields[1], 10, 64)
			if err == nil {
				return kb * 1024
			}
		}
	}
	return 0
}

func checkAlloc(bytes int) error {
	if int64(bytes) > maxAllocBytes() {
		return fmt.Errorf("cpu: cannot allocate %d bytes: more than the %d bytes of memory available (set WEBTENSOR_CPU_MAX_BYTES to change the limit)", bytes, maxAllocBytes())
	}
	return nil
}
