package main

import (
	"flag"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// clearHighOnReturn rewrites the generated file so that every function
// that used any of the vector registers 16-31 (AVX-512 only: VEX cannot
// name them) zeroes them before each RET. VZEROUPPER leaves zmm16-31
// alone, and while any of them holds a value the CPU counts the upper
// state as in use: every legacy SSE instruction after the kernel - all of
// Go's scalar float code - then pays the SSE/AVX transition. Measured on
// the 2-core Xeon these benchmarks run on, a 64-float Go loop after
// gemmMicro8x32AVX512C took 130-190 ns more than after the same kernel
// with its high registers zeroed. A 128-bit EVEX xor clears the whole
// register and, as a zeroing idiom, costs no execution port. It is done
// on the text rather than in the kernels because naming a physical
// register in an avo function takes it from the register allocator.
func clearHighOnReturn() {
	path := flag.Lookup("out").Value.String()
	src, err := os.ReadFile(path)
	if err != nil {
		panic(err)
	}
	high := regexp.MustCompile(`\b[XYZ](1[6-9]|2[0-9]|3[01])\b`)
	var out []string
	var used []int
	for _, line := range strings.Split(string(src), "\n") {
		if strings.HasPrefix(line, "TEXT ") {
			used = used[:0]
		}
		for _, m := range high.FindAllStringSubmatch(line, -1) {
			n, _ := strconv.Atoi(m[1])
			if !slices.Contains(used, n) {
				used = append(used, n)
			}
		}
		if strings.TrimSpace(line) == "RET" {
			slices.Sort(used)
			for _, n := range used {
				x := "X" + strconv.Itoa(n)
				out = append(out, "\tVPXORD "+x+", "+x+", "+x)
			}
		}
		out = append(out, line)
	}
	if err := os.WriteFile(path, []byte(strings.Join(out, "\n")), 0o644); err != nil {
		panic(err)
	}
}
