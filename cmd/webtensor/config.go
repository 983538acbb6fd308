package main

import (
	"fmt"
	"os"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/webtensor/webtensor/core/config"
)

func configCmd() *cobra.Command {
	var markdown bool
	cmd := &cobra.Command{
		Use:   "config",
		Short: "List the WEBTENSOR_* environment variables, their defaults and values here",
		Long: `List every environment variable webtensor reads (declared in core/config):
its default, what it does, the API call with the same effect, and its value
in this environment. --markdown prints docs/config.md.`,
		Example: `  webtensor config
  WEBTENSOR_DEVICE=cpu webtensor config
  webtensor config --markdown > docs/config.md`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			out := cmd.OutOrStdout()
			if markdown {
				fmt.Fprint(out, config.Markdown())
				return nil
			}
			w := tabwriter.NewWriter(out, 2, 4, 2, ' ', 0)
			fmt.Fprintln(w, "VARIABLE\tVALUE\tEFFECT")
			for _, v := range config.Vars() {
				val, set := os.LookupEnv(v.Name)
				switch {
				case !set && v.Default != "":
					val = v.Default + " (default)"
				case !set:
					val = "-"
				}
				doc := v.Doc
				if v.ReadBy != "" {
					doc += " [" + v.ReadBy + "]"
				}
				fmt.Fprintf(w, "%s\t%s\t%s\n", v.Name, val, doc)
			}
			return w.Flush()
		},
	}
	cmd.Flags().BoolVar(&markdown, "markdown", false, "print the table as Markdown (docs/config.md)")
	return cmd
}
