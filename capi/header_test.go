package main

import (
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The header is the contract: every function it declares must be defined
// (exported from Go or written in C here), and nothing is exported that the
// header does not document.
func TestHeaderMatchesExports(t *testing.T) {
	pinThread(t)
	var header []byte
	for _, f := range []string{"webtensor.h", "webtensor_domains.h"} { // the second is included by the first
		b, err := os.ReadFile(filepath.Join("include", f))
		require.NoError(t, err)
		header = append(header, b...)
	}
	declared := names(regexp.MustCompile(`(?m)^[a-z_0-9 ]+\*?\s*\*?(wt_[a-z_0-9]+)\(`), string(header))

	defined := map[string]bool{}
	goFiles, _ := filepath.Glob("*.go")
	for _, f := range goFiles {
		src, err := os.ReadFile(f)
		require.NoError(t, err)
		for n := range names(regexp.MustCompile(`(?m)^//export (wt_[a-z_0-9]+)`), string(src)) {
			defined[n] = true
		}
	}
	cFiles, _ := filepath.Glob("*.c")
	for _, f := range cFiles {
		src, err := os.ReadFile(f)
		require.NoError(t, err)
		// Public C definitions start at column 0 without `static`.
		for n := range names(regexp.MustCompile(`(?m)^(?:const )?[a-z_0-9]+\s*\*?\s*(wt_[a-z_0-9]+)\([^;]*\)\s*\{`), string(src)) {
			defined[n] = true
		}
	}
	assert.Equal(t, sorted(declared), sorted(keep(defined, func(n string) bool {
		return !regexp.MustCompile(`^wt_(set_error|internal_)`).MatchString(n)
	})), "functions declared in webtensor.h vs defined in capi/")
}

func names(re *regexp.Regexp, src string) map[string]bool {
	out := map[string]bool{}
	for _, m := range re.FindAllStringSubmatch(src, -1) {
		out[m[1]] = true
	}
	return out
}

func keep(m map[string]bool, ok func(string) bool) map[string]bool {
	out := map[string]bool{}
	for k := range m {
		if ok(k) {
			out[k] = true
		}
	}
	return out
}

func sorted(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
