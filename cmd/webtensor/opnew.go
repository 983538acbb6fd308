package main

import (
	"fmt"
	"os/exec"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/webtensor/webtensor/core"
	"github.com/webtensor/webtensor/internal/scaffold"
)

func opCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "op", Short: "Work on the op registry's source (op new scaffolds an op)"}
	cmd.AddCommand(opNewCmd())
	return cmd
}

func opNewCmd() *cobra.Command {
	var spec scaffold.Spec
	var repo string
	var noVectors bool
	cmd := &cobra.Command{
		Use:   "new NAME --formula EXPR",
		Short: "Scaffold an elementwise op from its formula: OpDef, gradient, kernels on every backend, PyTorch reference, vectors, SDK methods, a test",
		Long: `op new writes a new elementwise op into the repository from one formula in Go
syntax over x (and y for a two-input op): + - * /, numbers and the functions
` + strings.Join(scaffold.Functions(), ", ") + `.

It writes core/ops_<category>_<name>.go (the OpDef: its float64 arithmetic, the
same as a GPU expression - every backend derives its kernel from these - and
its gradient, differentiated symbolically and written with registry ops),
core/ops_<category>_<name>_test.go (a test that trains through the op) and the
op's PyTorch reference in conformance/gen/refs/<category>.py, then runs
'make vectors' (PyTorch's reference vectors, then make generate: the Go
method, docs and the Python, JavaScript and Java methods). The shared suites
then check the op against PyTorch on the CPU, WebGPU and CUDA.`,
		Example: `  webtensor op new softsign --formula "x / (1 + abs(x))"
  webtensor op new mish --formula "x * tanh(log1p(exp(x)))" --category activation
  webtensor op new smooth_max --formula "log(exp(x) + exp(y))"
  go test ./backends/cpu ./backends/webgpu -run 'TestOpsMatchReference/softsign|TestGradients.*/softsign'`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			start := time.Now()
			spec.Name = args[0]
			if spec.Formula == "" {
				return fail("op new: --formula is required, e.g. --formula \"x / (1 + abs(x))\"")
			}
			files, err := scaffold.Plan(repo, spec, func(name string) bool { _, ok := core.LookupOp(name); return ok })
			if err != nil {
				return fail("op new: %v", err)
			}
			if err := scaffold.Write(repo, files); err != nil {
				return fail("op new: %v", err)
			}
			out := cmd.OutOrStdout()
			for _, f := range files {
				fmt.Fprintln(out, "wrote", f.Path)
			}
			if noVectors {
				fmt.Fprintln(out, "next: make vectors (PyTorch's reference vectors and make generate)")
				return nil
			}
			fmt.Fprintln(out, "running make vectors (PyTorch's reference vectors, then make generate) ...")
			mk := exec.Command("make", "--no-print-directory", "vectors")
			mk.Dir, mk.Stdout, mk.Stderr = repo, out, cmd.ErrOrStderr()
			if err := mk.Run(); err != nil {
				return fail("op new: make vectors: %v (the files are written; fix the cause and run make vectors again)", err)
			}
			fmt.Fprintf(out, "op %s is ready in %s; test it with\n  go test ./core -run TestTrainThrough%s\n  go test ./backends/cpu ./backends/webgpu -run 'TestOpsMatchReference/%s$|TestGradientsMatchFiniteDifferences/%s$'\n",
				spec.Name, time.Since(start).Round(time.Second), spec.Name, spec.Name, spec.Name)
			return nil
		},
	}
	cmd.Flags().StringVar(&spec.Formula, "formula", "", "the op's formula in Go syntax over x (and y)")
	cmd.Flags().StringVar(&spec.Category, "category", "", "unary (default) or activation for one input; binary for two")
	cmd.Flags().StringVar(&spec.Doc, "doc", "", "the op's doc line (default: the formula)")
	cmd.Flags().StringVar(&repo, "repo", ".", "the repository root")
	cmd.Flags().BoolVar(&noVectors, "no-vectors", false, "write the files only; run make vectors yourself")
	return cmd
}
