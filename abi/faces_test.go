package abi

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The ABI has two faces over this package: the C header (capi, whose own
// test holds its exports equal to the header) and the browser bridge
// (sdk/js/wasm, which builds only for js/wasm). These tests read both from
// source, so they run without a browser.

var (
	// webtensor.h includes the domain libraries' part, webtensor_domains.h.
	headerPaths = []string{filepath.Join("..", "capi", "include", "webtensor.h"), filepath.Join("..", "capi", "include", "webtensor_domains.h")}
	tablePath   = filepath.Join("..", "sdk", "js", "wasm", "table.go")
	wasmTSPath  = filepath.Join("..", "sdk", "js", "src", "wasm.ts")
)

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	return string(b)
}

// headerFunctions are the functions webtensor.h declares.
func headerFunctions(t *testing.T) []string {
	re := regexp.MustCompile(`(?m)^[a-z_0-9 ]+\*?\s*\*?(wt_[a-z_0-9]+)\(`)
	var out []string
	var header string
	for _, p := range headerPaths {
		header += readFile(t, p)
	}
	for _, m := range re.FindAllStringSubmatch(header, -1) {
		out = append(out, m[1])
	}
	sort.Strings(out)
	return slices.Compact(out)
}

// bridgeTable reads table.go's top-level variables: the string keys of a
// map literal, the elements of a slice literal.
func bridgeTable(t *testing.T) map[string][]string {
	f, err := parser.ParseFile(token.NewFileSet(), tablePath, nil, 0)
	require.NoError(t, err)
	out := map[string][]string{}
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.VAR {
			continue
		}
		for _, spec := range g.Specs {
			vs := spec.(*ast.ValueSpec)
			for i, name := range vs.Names {
				lit, ok := vs.Values[i].(*ast.CompositeLit)
				if !ok {
					continue
				}
				var names []string
				for _, e := range lit.Elts {
					if kv, ok := e.(*ast.KeyValueExpr); ok {
						e = kv.Key
					}
					if bl, ok := e.(*ast.BasicLit); ok && bl.Kind == token.STRING {
						s, err := strconv.Unquote(bl.Value)
						require.NoError(t, err)
						names = append(names, s)
					}
				}
				sort.Strings(names)
				out[name.Name] = names
			}
		}
	}
	for _, v := range []string{"calls", "asyncTwins", "browserOnly", "omitted"} {
		require.Contains(t, out, v, "table.go declares %s", v)
	}
	return out
}

func TestBrowserBridgeHasTheHeaderFunctions(t *testing.T) {
	header := headerFunctions(t)
	require.Greater(t, len(header), 50, "the header parsed")
	table := bridgeTable(t)
	var want []string
	for _, f := range header {
		if !slices.Contains(table["omitted"], f) {
			want = append(want, f)
		}
	}
	assert.Equal(t, want, table["calls"], "sdk/js/wasm/table.go's calls vs webtensor.h's functions less omitted")
	for _, f := range table["omitted"] {
		assert.Contains(t, header, f, "omitted %s is not in the header", f)
	}
	for _, f := range table["asyncTwins"] {
		assert.Contains(t, table["calls"], f, "async twin of %s, which is not a call", f)
	}
	for _, f := range table["browserOnly"] {
		assert.NotContains(t, header, f, "%s is browser-only but in the header", f)
	}
}

// wasm.ts, the binding over the bridge, calls only functions it exports.
func TestBrowserBindingCallsExportedFunctions(t *testing.T) {
	table := bridgeTable(t)
	exported := slices.Concat(table["calls"], table["browserOnly"])
	for _, f := range table["asyncTwins"] {
		exported = append(exported, f+"_async")
	}
	used := regexp.MustCompile(`\bwt_[a-z_0-9]+\b`).FindAllString(readFile(t, wasmTSPath), -1)
	require.NotEmpty(t, used)
	for _, f := range used {
		assert.Contains(t, exported, f, "wasm.ts uses %s, which sdk/js/wasm does not export", f)
	}
}

// The header's codes are this package's.
func TestHeaderConstants(t *testing.T) {
	header := readFile(t, headerPaths[0])
	define := func(name string) int {
		m := regexp.MustCompile(`(?m)^#define ` + name + ` (\d+)`).FindStringSubmatch(header)
		require.NotNil(t, m, "webtensor.h defines %s", name)
		n, _ := strconv.Atoi(m[1])
		return n
	}
	enum := func(name string) int {
		m := regexp.MustCompile(`\b` + name + ` = (\d+)`).FindStringSubmatch(header)
		require.NotNil(t, m, "webtensor.h declares %s", name)
		n, _ := strconv.Atoi(m[1])
		return n
	}
	assert.Equal(t, Version, define("WT_ABI_VERSION"))
	for name, s := range map[string]Status{"WT_OK": StatusOK, "WT_ERR_INVALID": StatusInvalid,
		"WT_ERR_HANDLE": StatusHandle, "WT_ERR_UNSUPPORTED": StatusUnsupported,
		"WT_ERR_OUT_OF_MEMORY": StatusOutOfMemory, "WT_ERR_BUFFER_TOO_SMALL": StatusBufferTooSmall,
		"WT_ERR_INTERNAL": StatusInternal, "WT_ERR_IO": StatusIO} {
		assert.Equal(t, int(s), define(name), name)
	}
	for name, k := range map[string]AttrKind{"WT_ATTR_INT": AttrInt, "WT_ATTR_FLOAT": AttrFloat,
		"WT_ATTR_BOOL": AttrBool, "WT_ATTR_STRING": AttrString, "WT_ATTR_INTS": AttrInts,
		"WT_ATTR_FLOATS": AttrFloats, "WT_ATTR_DTYPE": AttrDType} {
		assert.Equal(t, int(k), enum(name), name)
	}
	assert.Regexp(t, `ndim is 0\.\.`+strconv.Itoa(MaxRank)+`;`, header, "the header's rank limit")
}
