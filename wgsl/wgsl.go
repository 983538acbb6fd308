package wgsl

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"fmt"
	"strings"
	"sync"
	"text/template"
)

//go:embed *.wgsl
var files embed.FS

var (
	parseOnce sync.Once
	tmpl      *template.Template
	parseErr  error
)

func parsed() (*template.Template, error) {
	parseOnce.Do(func() {
		tmpl, parseErr = template.New("wgsl").Option("missingkey=error").Funcs(funcs).ParseFS(files, "*.wgsl")
	})
	return tmpl, parseErr
}

// funcs are the template helpers: add and mul for binding numbers and
// unrolled indices, operand for the first uniform slot of operand k's
// descriptor (see common.wgsl).
var funcs = template.FuncMap{
	"add":     func(a, b int) int { return a + b },
	"mul":     func(a, b int) int { return a * b },
	"operand": func(k int) int { return OperandSlot(k) },
	"loc":     LocCall,
}

// LocCall is WGSL for common.wgsl's loc(i, rank, shp, d) when the rank is
// known as the kernel is built (rank >= 0): straight code for ranks 0 to 3.
// A negative rank reads it from the uniform slot rankSlot at run time.
func LocCall(rank int, i, shp, d, rankSlot string) string {
	switch rank {
	case 0:
		return "pi(" + d + ")"
	case 1:
		return "loc1(" + i + ", " + d + ")"
	case 2, 3, 4:
		return fmt.Sprintf("loc%d(%s, %s, %s)", rank, i, shp, d)
	}
	return "loc(" + i + ", pu(" + rankSlot + "), " + shp + ", " + d + ")"
}

// Uniform slot layout shared with common.wgsl.
const (
	SlotScalars = 0  // 8 scalar attributes
	SlotN       = 8  // element count
	SlotRank    = 9  // rank of the iteration shape
	SlotShape   = 10 // 8 dims
	MaxRank     = 8
	ParamSlots  = 256 // u32 slots in the uniform block
)

// OperandSlot is the first slot of operand k's descriptor: its element
// offset, then MaxRank strides.
func OperandSlot(k int) int { return 18 + k*(MaxRank+1) }

// Names lists the kernel files, for tests and `webtensor doctor`.
func Names() []string {
	ents, _ := files.ReadDir(".")
	out := make([]string, 0, len(ents))
	for _, e := range ents {
		out = append(out, strings.TrimSuffix(e.Name(), ".wgsl"))
	}
	return out
}

// Render fills the template of one family (file name without .wgsl) with
// data and prepends the shared prelude (common.wgsl). The result is complete
// WGSL source.
func Render(family string, data any) (string, error) {
	t, err := parsed()
	if err != nil {
		return "", fmt.Errorf("wgsl templates: %w", err)
	}
	var buf bytes.Buffer
	if err := t.ExecuteTemplate(&buf, "common.wgsl", data); err != nil {
		return "", fmt.Errorf("wgsl prelude: %w", err)
	}
	if err := t.ExecuteTemplate(&buf, family+".wgsl", data); err != nil {
		return "", fmt.Errorf("wgsl kernel %s: %w", family, err)
	}
	return buf.String(), nil
}

// Fingerprint identifies this set of kernels: measurements made with other
// kernels (an older build) must not steer this one.
func Fingerprint() string {
	h := sha256.New()
	ents, _ := files.ReadDir(".")
	for _, e := range ents {
		b, _ := files.ReadFile(e.Name())
		h.Write([]byte(e.Name()))
		h.Write(b)
	}
	return fmt.Sprintf("%x", h.Sum(nil)[:8])
}
