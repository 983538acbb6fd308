package main

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/webtensor/webtensor/core"
)

func opsCmd() *cobra.Command {
	var asJSON, internal, markdown bool
	var category string
	cmd := &cobra.Command{
		Use:   "ops [name...]",
		Short: "List the ops of the registry (the manifest)",
		Long: `List every op: its category, whether it is differentiable, which backends
implement it, and its doc line. With names, print each op's inputs and
attributes in full. --json prints the machine-readable manifest that the SDK
generators read.`,
		Example: `  webtensor ops
  webtensor ops --category norm
  webtensor ops conv2d softmax
  webtensor ops --json > manifest.json`,
		RunE: func(cmd *cobra.Command, args []string) error {
			m := core.BuildManifest()
			if asJSON {
				enc := json.NewEncoder(cmd.OutOrStdout())
				enc.SetIndent("", "  ")
				return enc.Encode(m)
			}
			if markdown {
				fmt.Fprint(cmd.OutOrStdout(), m.Markdown())
				return nil
			}
			if len(args) > 0 {
				return describeOps(cmd, m, args)
			}
			if category != "" && !slices.Contains(opCategories(), category) {
				return fail("unknown category %q: the categories are %s", category, strings.Join(opCategories(), ", "))
			}
			w := tabwriter.NewWriter(cmd.OutOrStdout(), 2, 4, 2, ' ', 0)
			fmt.Fprintln(w, "OP\tCATEGORY\tGRAD\tBACKENDS\tDOC")
			n := 0
			for _, op := range m.Ops {
				if (op.Internal && !internal) || (category != "" && op.Category != category) {
					continue
				}
				grad := ""
				if op.Differentiable {
					grad = "yes"
				}
				fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\n", op.Name, op.Category, grad, strings.Join(op.Backends, ","), op.Doc)
				n++
			}
			w.Flush()
			fmt.Fprintf(cmd.OutOrStdout(), "\n%d ops (webtensor %s)\n", n, m.Version)
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the manifest as JSON")
	cmd.Flags().BoolVar(&markdown, "markdown", false, "print the op reference as Markdown (docs/ops.md)")
	cmd.Flags().BoolVar(&internal, "internal", false, "include internal helper ops (used by backward rules)")
	cmd.Flags().StringVar(&category, "category", "", "only ops of this category ("+strings.Join(opCategories(), ", ")+")")
	return cmd
}

// opCategories lists, sorted, the categories of the registry's ops: the
// names the op files are grouped by in core, each backend and the
// reference scripts.
func opCategories() []string {
	var cats []string
	for _, d := range core.Ops() {
		if !slices.Contains(cats, d.Category) {
			cats = append(cats, d.Category)
		}
	}
	sort.Strings(cats)
	return cats
}

func describeOps(cmd *cobra.Command, m core.Manifest, names []string) error {
	byName := map[string]core.ManifestOp{}
	for _, op := range m.Ops {
		byName[op.Name] = op
	}
	out := cmd.OutOrStdout()
	for _, n := range names {
		op, ok := byName[n]
		if !ok {
			return fail("unknown op %q: run `webtensor ops` for the list", n)
		}
		fmt.Fprintf(out, "%s (%s): %s\n", op.Name, op.Category, op.Doc)
		for _, in := range op.Inputs {
			flags := []string{}
			if in.Optional {
				flags = append(flags, "optional")
			}
			if in.Variadic {
				flags = append(flags, "variadic")
			}
			if len(in.DTypes) > 0 {
				flags = append(flags, "dtypes "+strings.Join(in.DTypes, "|"))
			}
			fmt.Fprintf(out, "  input %-14s %s\n", in.Name, strings.Join(flags, ", "))
		}
		for _, a := range op.Attrs {
			def := fmt.Sprintf("default %v", a.Default)
			if a.Required {
				def = "required"
			}
			fmt.Fprintf(out, "  attr  %-14s %-7s %s  %s\n", a.Name, a.Kind, def, a.Doc)
		}
		fmt.Fprintf(out, "  differentiable: %v; backends: %s\n\n", op.Differentiable, strings.Join(op.Backends, ", "))
	}
	return nil
}
