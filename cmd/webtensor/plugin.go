package main

import (
	"bytes"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"text/template"

	"github.com/spf13/cobra"

	"github.com/webtensor/webtensor/plugins-wasm/sdk"
)

// The templates use <% %> as delimiters: Go composite literals are full of
// {{ and }}, and neither Go, C nor make ever writes <% or %>.
//
//go:embed plugintemplates
var pluginTemplates embed.FS

func pluginCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "plugin",
		Short: "Create WebAssembly plugins that add ops",
		Long: `Plugins add ops to webtensor from sandboxed WebAssembly modules (the
contract is plugins-wasm/ABI.md). Load one from Go with plugins.LoadFile;
its ops are then called like built-in ones.`,
	}
	cmd.AddCommand(pluginNewCmd())
	return cmd
}

func pluginNewCmd() *cobra.Command {
	var lang, dir string
	cmd := &cobra.Command{
		Use:   "new NAME --lang go|c [--dir DIR]",
		Short: "Write a buildable plugin with one example op, its Makefile and a test",
		Long: `Write a new plugin into DIR (default ./NAME): one op, NAME.scale
(factor * x, with a backward rule), a Makefile whose default target builds
NAME.wasm and whose test target tests the kernel natively, and a copy of the
plugin SDK, so the directory builds on its own.

NAME is the plugin's name and the prefix of its ops: lower case letters,
digits and _, starting with a letter.
  go: needs Go 1.24 or newer (GOOS=wasip1 GOARCH=wasm -buildmode=c-shared)
  c:  needs clang and lld (Debian: apt-get install clang lld), no libc`,
		Example: `  webtensor plugin new myops --lang go
  webtensor plugin new fastclip --lang c --dir plugins/fastclip`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if dir == "" {
				dir = args[0]
			}
			files, err := scaffoldPlugin(args[0], lang, dir)
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			fmt.Fprintf(out, "created %s plugin %s in %s:\n", lang, args[0], dir)
			for _, f := range files {
				fmt.Fprintf(out, "  %s\n", f)
			}
			fmt.Fprintf(out, "next: cd %s && make test && make   # builds %s.wasm\n", dir, args[0])
			return nil
		},
	}
	cmd.Flags().StringVar(&lang, "lang", "", "the plugin's language: go or c (required)")
	cmd.Flags().StringVar(&dir, "dir", "", "where to write the plugin (default ./NAME); must be absent or empty")
	_ = cmd.MarkFlagRequired("lang")
	return cmd
}

var pluginNameRE = regexp.MustCompile(`^[a-z][a-z0-9_]{0,62}$`)

// scaffoldPlugin writes plugin name in language lang into dir and returns
// the files written, in the order written.
func scaffoldPlugin(name, lang, dir string) ([]string, error) {
	if !pluginNameRE.MatchString(name) {
		return nil, fail("plugin name %q: use lower case letters, digits and _, starting with a letter "+
			"(it becomes the prefix of the op names, a Go module path and C file names)", name)
	}
	files, err := pluginFiles(name, lang)
	if err != nil {
		return nil, err
	}
	if entries, err := os.ReadDir(dir); err == nil && len(entries) > 0 {
		return nil, fail("%s already exists and is not empty: choose another --dir", dir)
	} else if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fail("cannot use %s: %v", dir, err)
	}
	names := make([]string, 0, len(files))
	for rel := range files {
		names = append(names, rel)
	}
	sort.Strings(names)
	written := make([]string, 0, len(names))
	for _, rel := range names {
		p := filepath.Join(dir, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return written, err
		}
		if err := os.WriteFile(p, files[rel], 0o644); err != nil {
			return written, err
		}
		written = append(written, p)
	}
	return written, nil
}

// pluginFiles renders a language's templates and adds the SDK it builds
// against, keyed by slash-separated path inside the plugin.
func pluginFiles(name, lang string) (map[string][]byte, error) {
	var sdkFiles map[string]string // plugin path -> path in sdk.Files
	var rename map[string]string   // template -> plugin path, where they differ
	switch lang {
	case "go":
		sdkFiles = map[string]string{}
		paths, err := fs.Glob(sdk.Files, "go/wtplugin/*.go")
		if err != nil {
			return nil, err
		}
		for _, p := range paths {
			if !strings.HasSuffix(p, "_test.go") { // the SDK's own tests need testify
				sdkFiles["wtplugin/"+path.Base(p)] = p
			}
		}
	case "c":
		sdkFiles = map[string]string{"wtplugin.h": "c/wtplugin.h"}
		rename = map[string]string{"plugin.c": name + ".c", "plugin_test.c": name + "_test.c"}
	default:
		return nil, fail("--lang %q: want go or c", lang)
	}
	files := map[string][]byte{}
	tmplDir := "plugintemplates/" + lang
	entries, err := pluginTemplates.ReadDir(tmplDir)
	if err != nil {
		return nil, err
	}
	for _, e := range entries {
		src, err := pluginTemplates.ReadFile(tmplDir + "/" + e.Name())
		if err != nil {
			return nil, err
		}
		t, err := template.New(e.Name()).Delims("<%", "%>").Option("missingkey=error").Parse(string(src))
		if err != nil {
			return nil, fmt.Errorf("template %s: %v", e.Name(), err)
		}
		var buf bytes.Buffer
		if err := t.Execute(&buf, struct{ Name string }{name}); err != nil {
			return nil, fmt.Errorf("template %s: %v", e.Name(), err)
		}
		out := strings.TrimSuffix(e.Name(), ".tmpl")
		if r, ok := rename[out]; ok {
			out = r
		}
		files[out] = buf.Bytes()
	}
	for dst, src := range sdkFiles {
		b, err := sdk.Files.ReadFile(src)
		if err != nil {
			return nil, err
		}
		files[dst] = b
	}
	return files, nil
}
