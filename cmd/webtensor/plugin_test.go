package main

import (
	"bytes"
	"context"
	"go/format"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/webtensor/webtensor/core"
	plugins "github.com/webtensor/webtensor/plugins-wasm"
)

// runPluginCmd runs `plugin args...` on the subcommand alone, so the tests do
// not depend on where rootCmd wires it in.
func runPluginCmd(args ...string) (string, error) {
	root := &cobra.Command{Use: "webtensor", SilenceUsage: true}
	root.AddCommand(pluginCmd())
	var out bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&out)
	root.SetArgs(append([]string{"plugin"}, args...))
	err := root.Execute()
	return out.String(), err
}

func TestPluginNewWritesAPlugin(t *testing.T) {
	want := map[string][]string{
		"go": {"Makefile", "README.md", "go.mod", "main.go", "main_test.go",
			"wtplugin/attrs.go", "wtplugin/call.go", "wtplugin/doc.go", "wtplugin/exports_wasip1.go",
			"wtplugin/policy.go", "wtplugin/run.go", "wtplugin/spec.go", "wtplugin/tensor.go"},
		"c": {"Makefile", "README.md", "myops.c", "myops_test.c", "wtplugin.h"},
	}
	for lang, files := range want {
		dir := filepath.Join(t.TempDir(), "p")
		out, err := runPluginCmd("new", "myops", "--lang", lang, "--dir", dir)
		require.NoError(t, err, out)
		assert.Contains(t, out, "created "+lang+" plugin myops in "+dir)
		var got []string
		require.NoError(t, filepath.Walk(dir, func(p string, info os.FileInfo, err error) error {
			if err == nil && !info.IsDir() {
				rel, _ := filepath.Rel(dir, p)
				got = append(got, filepath.ToSlash(rel))
				b, _ := os.ReadFile(p)
				assert.NotContains(t, string(b), "<%", "%s: a template action was left unrendered", rel)
				if strings.HasSuffix(p, ".go") {
					formatted, err := format.Source(b)
					require.NoError(t, err, rel)
					assert.Equal(t, string(formatted), string(b), "%s is not gofmt-clean", rel)
				}
			}
			return err
		}))
		assert.ElementsMatch(t, files, got, lang)
	}
	// The copied SDK is the SDK: the header byte for byte.
	dir := filepath.Join(t.TempDir(), "c")
	_, err := scaffoldPlugin("myops", "c", dir)
	require.NoError(t, err)
	copied, _ := os.ReadFile(filepath.Join(dir, "wtplugin.h"))
	original, _ := os.ReadFile(filepath.Join("..", "..", "plugins-wasm", "sdk", "c", "wtplugin.h"))
	assert.Equal(t, string(original), string(copied))
}

func TestPluginNewRefusesBadRequests(t *testing.T) {
	dir := t.TempDir()
	_, err := runPluginCmd("new", "MyOps", "--lang", "go", "--dir", filepath.Join(dir, "a"))
	assert.ErrorContains(t, err, `plugin name "MyOps": use lower case letters`)
	_, err = runPluginCmd("new", "my.ops", "--lang", "go", "--dir", filepath.Join(dir, "a"))
	assert.ErrorContains(t, err, `plugin name "my.ops"`)
	_, err = runPluginCmd("new", "myops", "--lang", "rust", "--dir", filepath.Join(dir, "a"))
	assert.ErrorContains(t, err, `--lang "rust": want go or c`)
	_, err = runPluginCmd("new", "myops", "--dir", filepath.Join(dir, "a"))
	assert.ErrorContains(t, err, `required flag(s) "lang" not set`)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "keep.txt"), []byte("mine"), 0o644))
	_, err = runPluginCmd("new", "myops", "--lang", "c", "--dir", dir)
	assert.ErrorContains(t, err, dir+" already exists and is not empty")
	b, _ := os.ReadFile(filepath.Join(dir, "keep.txt"))
	assert.Equal(t, "mine", string(b), "nothing was overwritten")
}

// TestPluginRoundTrip is what a plugin author does: scaffold, `make test`,
// `make`, then load the module with the host and call its op (forward and
// backward) from Go. It logs the seconds each step took.
func TestPluginRoundTrip(t *testing.T) {
	if testing.Short() {
		t.Skip("builds WebAssembly modules; skipped with -short")
	}
	if _, err := exec.LookPath("make"); err != nil {
		t.Skip("make is not installed")
	}
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("the go command is not on PATH")
	}
	ctx := context.Background()
	h, err := plugins.NewHost(ctx, plugins.NewConfig())
	require.NoError(t, err)
	defer h.Close(ctx)

	for _, lang := range []string{"go", "c"} {
		t.Run(lang, func(t *testing.T) {
			if lang == "c" {
				for _, tool := range []string{"clang", "cc"} {
					if _, err := exec.LookPath(tool); err != nil {
						t.Skipf("%s is not installed: apt-get install clang lld (or make plugins-toolchain)", tool)
					}
				}
				if _, err := exec.LookPath("wasm-ld-14"); err != nil {
					if _, err := exec.LookPath("wasm-ld"); err != nil {
						t.Skip("wasm-ld is not installed: apt-get install lld")
					}
				}
			}
			name := "roundtrip" + lang // op names are process-wide: one per language
			dir := filepath.Join(t.TempDir(), name)
			start := time.Now()
			step := func(what string) {
				t.Logf("%s %-22s %5.2fs", lang, what, time.Since(start).Seconds())
				start = time.Now()
			}
			_, err := scaffoldPlugin(name, lang, dir)
			require.NoError(t, err)
			step("scaffold")
			runMake := func(target string) {
				cmd := exec.Command("make", "-C", dir, target, "GO="+goTool)
				out, err := cmd.CombinedOutput()
				require.NoError(t, err, "make %s:\n%s", target, out)
			}
			runMake("test")
			step("make test (native)")
			runMake("build")
			step("make (build .wasm)")
			p, err := h.LoadFile(ctx, filepath.Join(dir, name+".wasm"))
			require.NoError(t, err)
			assert.Equal(t, []string{name + ".scale"}, p.Ops())
			step("load")

			x := core.FromSlice([]float32{1, -2, 0.5}, core.Shape{3}).SetRequiresGrad(true)
			outs, err := core.Call(name+".scale", []*core.Tensor{x}, core.Attrs{"factor": 3.0})
			require.NoError(t, err)
			y, err := outs[0].Float32s()
			require.NoError(t, err)
			assert.Equal(t, []float32{3, -6, 1.5}, y)
			require.NoError(t, outs[0].Backward(core.FromSlice([]float32{1, 10, 100}, core.Shape{3})))
			dx, err := x.Grad().Float32s()
			require.NoError(t, err)
			assert.Equal(t, []float32{3, 30, 300}, dx, "the backward rule is mul(grad, factor)")
			step("call + backward")
		})
	}
}
