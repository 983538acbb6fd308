package config

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Every WEBTENSOR_* name the code reads (Go, the SDKs, scripts, the
// Makefiles) must be declared here, so docs/config.md and doctor know it.
func TestEveryVariableInTheTreeIsDeclared(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	require.NoError(t, err)
	name := regexp.MustCompile(`WEBTENSOR_[A-Z0-9_]*[A-Z0-9]`)
	skipDirs := map[string]bool{".git": true, ".venv": true, "node_modules": true, "build": true, "dist": true, "target": true, ".gl": true}
	exts := map[string]bool{".go": true, ".py": true, ".ts": true, ".js": true, ".mjs": true, ".java": true, ".sh": true, ".mk": true, ".c": true, ".h": true}
	seen := map[string]string{}
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if skipDirs[d.Name()] || strings.HasPrefix(d.Name(), ".") && path != root {
				return filepath.SkipDir
			}
			return nil
		}
		if !exts[filepath.Ext(path)] && d.Name() != "Makefile" && d.Name() != "run" {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, n := range name.FindAllString(string(src), -1) {
			if _, ok := seen[n]; !ok {
				rel, _ := filepath.Rel(root, path)
				seen[n] = rel
			}
		}
		return nil
	})
	require.NoError(t, err)
	require.NotEmpty(t, seen)
	for n, where := range seen {
		if strings.HasSuffix(n, "_H") || n == "WEBTENSOR_VERSION_STRING" || where == filepath.Join("core", "config", "config_test.go") {
			continue // C include guards and macros, and this test's own names
		}
		if prefixOfDeclared(n) {
			continue // a family's prefix in a message: WEBTENSOR_PLUGIN_*
		}
		_, ok := Lookup(n)
		assert.True(t, ok, "%s (in %s) is not declared in core/config", n, where)
	}
}

func prefixOfDeclared(n string) bool {
	for _, v := range Vars() {
		if strings.HasPrefix(v.Name, n+"_") {
			return true
		}
	}
	return false
}

func TestUndeclaredNamePanics(t *testing.T) {
	assert.PanicsWithValue(t, "config: WEBTENSOR_NOPE is not declared in core/config", func() { String("WEBTENSOR_NOPE") })
}

func TestBoolAndDefault(t *testing.T) {
	t.Setenv("WEBTENSOR_CUDA_SYNC", "yes")
	assert.True(t, Bool("WEBTENSOR_CUDA_SYNC"))
	t.Setenv("WEBTENSOR_CUDA_SYNC", "0")
	assert.False(t, Bool("WEBTENSOR_CUDA_SYNC"))
	os.Unsetenv("WEBTENSOR_CTYPES_ONLY")
	assert.Equal(t, "0", String("WEBTENSOR_CTYPES_ONLY"))
}
