package layout_test

import (
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	_ "github.com/webtensor/webtensor/backends/cpu"
	_ "github.com/webtensor/webtensor/backends/cuda"
	_ "github.com/webtensor/webtensor/backends/webgpu"
	"github.com/webtensor/webtensor/core"
)

// root is the repository root, from this package's folder.
const root = "../.."

// pluginCategory is the category the plugin host gives every plugin op
// (plugins-wasm); no built-in op has it, but the WebGPU backend's file
// for plugin WGSL kernels is named for it.
const pluginCategory = "plugin"

// categories is the set of op categories in the registry, plus plugin.
func categories(t *testing.T) map[string]bool {
	cats := map[string]bool{pluginCategory: true}
	for _, d := range core.Ops() {
		require.NotEmpty(t, d.Category, "op %s has no category", d.Name)
		require.Regexp(t, `^[a-z]+$`, d.Category, "op %s: a category is one lower-case word, so file names split unambiguously", d.Name)
		cats[d.Category] = true
	}
	return cats
}

// categoryOf is the category a file name is for: name is
// prefix + category + (".ext" or "_suffix.ext"); "" when it names none.
func categoryOf(name, prefix, ext string, cats map[string]bool) string {
	rest, ok := strings.CutPrefix(name, prefix)
	if !ok {
		return ""
	}
	rest, ok = strings.CutSuffix(rest, ext)
	if !ok {
		return ""
	}
	cat, _, _ := strings.Cut(rest, "_")
	if !cats[cat] {
		return ""
	}
	return cat
}

// site is the folder and file name of a registration site.
func site(path string) (dir, file string) {
	path = filepath.ToSlash(path)
	file = filepath.Base(path)
	return filepath.Base(filepath.Dir(path)), file
}

func TestOpDefsAndKernelsLiveUnderTheirCategory(t *testing.T) {
	cats := categories(t)
	kinds := map[string]string{"cpu": "cpu", "webgpu": "webgpu", "cuda": "cuda"}
	for _, d := range core.Ops() {
		dir, file := site(core.RegisteredIn("", d.Name))
		assert.Equal(t, "core", dir, "op %s: OpDef registered outside core (%s)", d.Name, file)
		assert.Equal(t, d.Category, categoryOf(file, "ops_", ".go", cats),
			"op %s (category %s): OpDef registered in core/%s, want core/ops_%s*.go", d.Name, d.Category, file, d.Category)
		for kind, folder := range kinds {
			path := core.RegisteredIn(kind, d.Name)
			if path == "" {
				continue // no kernel of this kind (a view, or a build without the backend)
			}
			dir, file := site(path)
			assert.Equal(t, folder, dir, "op %s: %s kernel registered outside backends/%s (%s)", d.Name, kind, folder, path)
			assert.Equal(t, d.Category, categoryOf(file, "kernels_", ".go", cats),
				"op %s (category %s): %s kernel registered in backends/%s/%s, want kernels_%s*.go",
				d.Name, d.Category, kind, folder, file, d.Category)
		}
	}
}

// refKey is a key of a REFS dict literal, one entry per line.
var refKey = regexp.MustCompile(`^\s+"([A-Za-z0-9_]+)":`)

// refsFiles maps each op with a reference to the file of refs/ that holds it.
func refsFiles(t *testing.T) map[string]string {
	dir := filepath.Join(root, "conformance", "gen", "refs")
	files, err := filepath.Glob(filepath.Join(dir, "*.py"))
	require.NoError(t, err)
	require.NotEmpty(t, files)
	where := map[string]string{}
	for _, path := range files {
		src, err := os.ReadFile(path)
		require.NoError(t, err)
		in := false
		for _, line := range strings.Split(string(src), "\n") {
			switch {
			case strings.HasPrefix(line, "REFS = "):
				in = true
			case in && (line == "}" || line == "})"):
				in = false
			case in:
				if m := refKey.FindStringSubmatch(line); m != nil {
					assert.NotContains(t, where, m[1], "%s has references in two files", m[1])
					where[m[1]] = filepath.Base(path)
				}
			}
		}
	}
	return where
}

func TestReferencesLiveUnderTheirCategory(t *testing.T) {
	cats := categories(t)
	where := refsFiles(t)
	for _, d := range core.Ops() {
		file, ok := where[d.Name]
		if !assert.True(t, ok, "op %s has no entry in a REFS dict of conformance/gen/refs", d.Name) {
			continue
		}
		assert.Equal(t, d.Category, categoryOf(file, "", ".py", cats),
			"op %s (category %s): reference in refs/%s, want refs/%s.py", d.Name, d.Category, file, d.Category)
	}
	for op := range where {
		_, ok := core.LookupOp(op)
		assert.True(t, ok, "refs has a reference for %s, which is no op", op)
	}
}

// names lists the files of dir matching pattern.
func names(t *testing.T, dir, pattern string) []string {
	paths, err := filepath.Glob(filepath.Join(root, dir, pattern))
	require.NoError(t, err)
	var out []string
	for _, p := range paths {
		out = append(out, filepath.Base(p))
	}
	sort.Strings(out)
	return out
}

// TestFilesAreNamedForCategories: a file named like an op file names a real
// category, so a renamed or split category leaves no stale file behind.
func TestFilesAreNamedForCategories(t *testing.T) {
	cats := categories(t)
	for _, dir := range []string{"core"} {
		for _, f := range names(t, dir, "ops_*.go") {
			assert.NotEmpty(t, categoryOf(f, "ops_", ".go", cats), "%s/%s is not named for an op category", dir, f)
		}
	}
	for _, dir := range []string{"backends/cpu", "backends/webgpu", "backends/cuda"} {
		for _, f := range names(t, dir, "kernels_*.go") {
			assert.NotEmpty(t, categoryOf(f, "kernels_", ".go", cats), "%s/%s is not named for an op category", dir, f)
		}
	}
	for _, f := range names(t, "conformance/gen/refs", "*.py") {
		if strings.HasPrefix(f, "_") {
			continue // __init__.py, _util.py: shared, no references
		}
		assert.NotEmpty(t, categoryOf(f, "", ".py", cats), "conformance/gen/refs/%s is not named for an op category", f)
	}
}

// wgslShared are the WGSL templates that serve kernels of many categories
// (wgsl/doc.go says what each is).
var wgslShared = map[string]bool{"body": true, "common": true, "map": true, "map_multi": true, "probe": true, "rows": true}

func TestWGSLFilesAreNamedForCategories(t *testing.T) {
	cats := categories(t)
	for _, f := range names(t, "wgsl", "*.wgsl") {
		if wgslShared[strings.TrimSuffix(f, ".wgsl")] {
			continue
		}
		assert.NotEmpty(t, categoryOf(f, "", ".wgsl", cats), "wgsl/%s is neither named for an op category nor a shared template", f)
	}
}

// TestWebGPUFilesKeepKernelsApartFromInfrastructure holds the WebGPU
// backend's file prefixes (backends/webgpu/doc.go): gpu_ for the device
// machinery, launch_ for what kernels of several categories launch through,
// fused for the IR's fused kernels, kernels_<category> for the kernels.
func TestWebGPUFilesKeepKernelsApartFromInfrastructure(t *testing.T) {
	cats := categories(t)
	for _, f := range names(t, "backends/webgpu", "*.go") {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		ok := f == "backend.go" || f == "doc.go" || strings.HasPrefix(f, "gpu_") || strings.HasPrefix(f, "launch_") ||
			strings.HasPrefix(f, "fused") || categoryOf(f, "kernels_", ".go", cats) != ""
		assert.True(t, ok, "backends/webgpu/%s: name it gpu_*, launch_*, fused* or kernels_<category>* (doc.go)", f)
	}
}
