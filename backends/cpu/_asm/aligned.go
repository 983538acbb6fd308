package main

import (
	"encoding/binary"
	"flag"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
)

// alignData moves the generated file's constants (every DATA symbol) into
// one table, table, in the text section, each constant at a 64-byte
// boundary. Go's linker aligns a data symbol to at most 32 bytes on amd64,
// so a 64-byte vector constant that an AVX-512 instruction reads straddled
// two cache lines whenever the symbol landed at 32 mod 64 - which the
// code and data before it decided, build by build: every constant of one
// build did, and its tanh ran at 42 GB/s where the build before ran at 54
// (the same kernel, exp and gelu alike). A function's PCALIGN, unlike a
// data symbol, raises its alignment: the table is a function whose body
// is the constants' bytes, never called.
func alignData(table string) {
	path := flag.Lookup("out").Value.String()
	src, err := os.ReadFile(path)
	if err != nil {
		panic(err)
	}
	dataLine := regexp.MustCompile(`^DATA (\w+)<>\+(\d+)\(SB\)/(\d), \$(0x[0-9a-f]+)$`)
	globl := regexp.MustCompile(`^GLOBL (\w+)<>\(SB\), RODATA\|NOPTR, \$(\d+)$`)
	type symbol struct {
		size  int
		bytes map[int][]byte
	}
	syms := map[string]*symbol{}
	var order []string
	var body []string
	get := func(name string) *symbol {
		s := syms[name]
		if s == nil {
			s = &symbol{bytes: map[int][]byte{}}
			syms[name] = s
			order = append(order, name)
		}
		return s
	}
	for _, line := range strings.Split(string(src), "\n") {
		if m := dataLine.FindStringSubmatch(line); m != nil {
			off, _ := strconv.Atoi(m[2])
			size, _ := strconv.Atoi(m[3])
			v, _ := strconv.ParseUint(m[4], 0, 64)
			b := make([]byte, 8)
			binary.LittleEndian.PutUint64(b, v)
			get(m[1]).bytes[off] = b[:size]
			continue
		}
		if m := globl.FindStringSubmatch(line); m != nil {
			get(m[1]).size, _ = strconv.Atoi(m[2])
			continue
		}
		body = append(body, line)
	}
	base := map[string]int{}
	total := 0
	for _, name := range order {
		base[name] = total
		total += (syms[name].size + 63) &^ 63
	}
	data := make([]byte, total)
	for _, name := range order {
		for off, b := range syms[name].bytes {
			copy(data[base[name]+off:], b)
		}
	}
	ref := regexp.MustCompile(`\b(\w+)<>\+(\d+)\(SB\)`)
	out := ref.ReplaceAllStringFunc(strings.Join(body, "\n"), func(s string) string {
		m := ref.FindStringSubmatch(s)
		b, ok := base[m[1]]
		if !ok {
			panic("alignData: a reference to " + m[1] + ", which has no DATA")
		}
		off, _ := strconv.Atoi(m[2])
		return fmt.Sprintf("·%s+%d(SB)", table, b+off)
	})
	var t strings.Builder
	fmt.Fprintf(&t, "\n// %s holds the constants above, each at a 64-byte boundary (see\n", table)
	fmt.Fprintf(&t, "// _asm/aligned.go): data, never called.\nTEXT ·%s(SB), NOSPLIT|NOFRAME, $0-0\n\tPCALIGN $64\n", table)
	for i := 0; i < len(data); i += 8 {
		fmt.Fprintf(&t, "\tQUAD $0x%016x\n", binary.LittleEndian.Uint64(data[i:]))
	}
	if err := os.WriteFile(path, []byte(strings.TrimRight(out, "\n")+"\n"+t.String()), 0o644); err != nil {
		panic(err)
	}
}
