package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestABIDeclarationsCoverEveryFunctionOfTheHeaders(t *testing.T) {
	r, err := loadRegistry()
	require.NoError(t, err)
	files, err := abiFiles(r)
	require.NoError(t, err)
	text := map[string]string{}
	for _, f := range files {
		text[filepath.Base(f.path)] = string(f.text)
	}
	require.Greater(t, len(r.abi.funcs), 95, "the headers declare every function of the ABI")
	for _, f := range r.abi.funcs {
		assert.Contains(t, text["_abi.py"], `"`+f.name+`": (`, "Python declares %s", f.name)
		if !abiSkip["ts"][f.name] {
			assert.Contains(t, text["abi_prototypes.gen.ts"], "  "+f.name+": ", "Node declares %s", f.name)
		}
		if !abiSkip["java"][f.name] {
			assert.Contains(t, text["Abi.java"], `Native.fn("`+f.name+`"`, "Java declares %s", f.name)
		}
	}
}

func TestABIDeclarationsSpeakEachFFIsDialect(t *testing.T) {
	r, err := loadRegistry()
	require.NoError(t, err)
	py, err := pyABI(r.abi)
	require.NoError(t, err)
	protos, err := tsABIPrototypes(r.abi)
	require.NoError(t, err)
	java, err := javaABI(r.abi)
	require.NoError(t, err)
	// Handles are int64; a buffer the library fills is bytes to koffi and an
	// output it copies back; const inputs are not.
	assert.Contains(t, string(py), `"wt_op": ([_s, _p(_i64), _i32, _p(Attr), _i32, _p(_i64), _i32, _p(_i32)], _i32),`)
	assert.Contains(t, string(py), `"wt_version": ([], _s),`)
	assert.Contains(t, string(protos), `"int32_t wt_graph_text(int64_t graph, _Out_ uint8_t *buf, size_t cap, _Out_ size_t *needed)"`)
	assert.Contains(t, string(protos), `"const char *wt_last_error()"`)
	assert.Contains(t, string(protos), `"int32_t wt_call(const char *target, int64_t self, const char *args_json, const void *data, size_t nbytes, _Out_ int64_t *out)"`)
	// The borrowed flag is written after the call: a plain address.
	assert.Regexp(t, `wt_tensor_from_host_borrowed\(.*, void \*released, _Out_ int64_t \*out\)`, string(protos))
	// wt_attr's kind is an int32 followed by 4 bytes of padding before i.
	assert.Contains(t, string(java), `JAVA_INT.withName("kind"),
            MemoryLayout.paddingLayout(4),
            JAVA_LONG.withName("i")`)
	assert.Contains(t, string(java), `static final MethodHandle ABI_VERSION_CALL = Native.fn("wt_abi_version", I);`)
	assert.Contains(t, string(java), `static final int ERR_BUFFER_TOO_SMALL = 5;`)
}

func TestReadABIRefusesWhatItCannotDeclare(t *testing.T) {
	root := t.TempDir()
	write := func(name, text string) {
		p := filepath.Join(root, "capi", "include", name)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(text), 0o644))
	}
	attr := "#define WT_OK 0\ntypedef struct {\n  int32_t kind;\n} wt_attr;\n"
	write("webtensor_domains.h", "")
	write("webtensor.h", attr+"int32_t wt_f(float x);\n")
	h, err := readABI(root)
	require.NoError(t, err, "the parser takes the declaration")
	_, err = pyABI(h)
	assert.ErrorContains(t, err, `wt_f: parameter x: no ctypes type for "float"`)

	write("webtensor.h", attr+"int32_t wt_f(int32_t);\n")
	_, err = readABI(root)
	assert.ErrorContains(t, err, `wt_f: parameter "int32_t" has no name`)

	write("webtensor.h", "")
	_, err = readABI(root)
	assert.ErrorContains(t, err, "declare no functions")
}
