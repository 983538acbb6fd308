package main

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/webtensor/webtensor/auto"
	plugins "github.com/webtensor/webtensor/plugins-wasm"
)

// autoCmd runs package auto's kernel and data agents on the built-in
// workloads, lists their decisions and rolls them back. Every subcommand
// opens the same journal folder and registers every built-in workload's
// settings, so a snapshot taken by one invocation restores in another.
func autoCmd() *cobra.Command {
	var o autoOpts
	cmd := &cobra.Command{
		Use:   "auto",
		Short: "Agents that change how workloads run and keep only measured wins",
		Long: `auto runs webtensor's autonomous agents. An agent asks a policy (a sandboxed
WebAssembly module; make plugins builds the default, build/plugins/policy-auto.wasm)
for proposals, measures each A/B on the workload (interleaved runs, medians, a
rank test), keeps it only when it wins by the margin and its canary run confirms
it, and records every decision in a JSON-lines journal with the state hash before
and after. Kept settings go to the kernel cache in the same folder. The data agent
tunes a loader's pipeline (workers, prefetch, a record cache) on the built-in
data-loading workloads, whose datasets it makes under datasets/ in that folder.`,
		Example: `  webtensor auto kernel --workload graph-ew-large
  webtensor auto data --workload data-jpeg-folder
  webtensor auto suite --rollback
  webtensor auto decisions
  webtensor auto rollback d0003
  webtensor auto parallel --run`,
	}
	cmd.PersistentFlags().StringVar(&o.dir, "dir", "", "journal and kernel cache folder (default: auto/ in the cache folder, see WEBTENSOR_CACHE_DIR)")
	cmd.PersistentFlags().StringVar(&o.policy, "policy", "default#kernel", "the kernel agent's policy, module.wasm#policy; default#kernel is build/plugins/policy-auto.wasm")
	cmd.PersistentFlags().StringVar(&o.dataPolicy, "data-policy", "default#data", "the data agent's policy, module.wasm#policy")
	cmd.PersistentFlags().IntVar(&o.runs, "runs", auto.DefaultConfig().Runs, "A/B runs a side per measurement")
	cmd.PersistentFlags().Float64Var(&o.margin, "margin", auto.DefaultConfig().Margin, "relative gain a proposal must reach (0.1 is 10%)")
	cmd.AddCommand(autoWorkloadsCmd(), autoKernelCmd(&o), autoDataCmd(&o), autoSuiteCmd(&o), autoDecisionsCmd(&o), autoRollbackCmd(&o), autoParallelCmd())
	return cmd
}

type autoOpts struct {
	dir, policy, dataPolicy string
	runs                    int
	margin                  float64
}

// session is an opened framework with the kernel and data agents and
// every built-in workload registered and its cached winners applied.
type session struct {
	fw        *auto.Framework
	agent     *auto.KernelAgent
	data      *auto.DataAgent
	workloads map[string]auto.Workload
	loaders   map[string]*auto.LoaderWorkload
	host      *plugins.Host
}

// open opens the session; kernel and data say which agents' policies to
// load (commands that decide nothing load none).
func (o *autoOpts) open(kernel, data bool) (*session, error) {
	dir := o.dir
	if dir == "" {
		var err error
		if dir, err = auto.DefaultDir(); err != nil {
			return nil, err
		}
	}
	cfg := auto.DefaultConfig()
	cfg.Runs, cfg.Margin = o.runs, o.margin
	fw, err := auto.Open(dir, cfg)
	if err != nil {
		return nil, err
	}
	s := &session{fw: fw, workloads: map[string]auto.Workload{}, loaders: map[string]*auto.LoaderWorkload{}}
	var policy, dataPolicy auto.Proposer = noPolicy{}, noPolicy{}
	if kernel || data {
		ctx := context.Background()
		if s.host, err = plugins.NewHost(ctx, plugins.NewConfig()); err != nil {
			return nil, err
		}
		ps := auto.NewPolicies(s.host)
		if kernel {
			if policy, err = ps.Load(ctx, o.policy); err != nil {
				return nil, err
			}
		}
		if data {
			if dataPolicy, err = ps.Load(ctx, o.dataPolicy); err != nil {
				return nil, err
			}
		}
	}
	if s.agent, err = auto.NewKernelAgent(fw, policy); err != nil {
		return nil, err
	}
	if s.data, err = auto.NewDataAgent(fw, dataPolicy); err != nil {
		return nil, err
	}
	for _, name := range auto.BuiltinLoaderNames() {
		w, err := auto.BuiltinLoader(name, dir)
		if err != nil {
			return nil, err
		}
		if _, err := s.data.ApplyCached(w); err != nil {
			return nil, err
		}
		s.loaders[name] = w
	}
	for _, name := range auto.BuiltinNames() {
		w, err := auto.Builtin(name)
		if err != nil {
			return nil, fmt.Errorf("auto: built-in workload %s: %w", name, err)
		}
		if err := s.agent.ApplyCached(w); err != nil {
			return nil, err
		}
		s.workloads[name] = w
	}
	return s, nil
}

func (s *session) close() {
	if s.host != nil {
		_ = s.host.Close(context.Background())
	}
}

// noPolicy stands in where a command decides nothing (list, rollback).
type noPolicy struct{}

func (noPolicy) PolicyName() string { return "none" }
func (noPolicy) Propose(auto.Request) ([]auto.Proposal, error) {
	return nil, fmt.Errorf("auto: this command asks no policy")
}

func autoWorkloadsCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "workloads",
		Short: "List the built-in workloads (the kernel agent's, then the data agent's)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			fmt.Fprintln(cmd.OutOrStdout(), strings.Join(append(auto.BuiltinNames(), auto.BuiltinLoaderNames()...), "\n"))
			return nil
		},
	}
}

func autoKernelCmd(o *autoOpts) *cobra.Command {
	var names []string
	cmd := &cobra.Command{
		Use:   "kernel --workload NAME [--workload NAME...]",
		Short: "Tune kernel settings on built-in workloads (the first is the canary, the rest the rollout)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if len(names) == 0 {
				return fail("auto kernel: name a workload with --workload (webtensor auto workloads lists them)")
			}
			s, err := o.open(true, false)
			if err != nil {
				return err
			}
			defer s.close()
			var ws []auto.Workload
			for _, n := range names {
				w, ok := s.workloads[n]
				if !ok {
					return fail("auto kernel: no built-in workload %q (have %v)", n, auto.BuiltinNames())
				}
				ws = append(ws, w)
			}
			ds, err := s.agent.Tune(ws[0], ws[1:]...)
			printDecisions(cmd, ds)
			return err
		},
	}
	cmd.Flags().StringSliceVar(&names, "workload", nil, "built-in workload; repeat it for a rollout")
	return cmd
}

func autoDataCmd(o *autoOpts) *cobra.Command {
	var names []string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "data --workload NAME [--workload NAME...]",
		Short: "Tune the pipeline of built-in data loaders (workers, prefetch, a record cache) on their own throughput",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if len(names) == 0 {
				return fail("auto data: name a workload with --workload (have %v)", auto.BuiltinLoaderNames())
			}
			s, err := o.open(false, true)
			if err != nil {
				return err
			}
			defer s.close()
			for _, n := range names {
				w, ok := s.loaders[n]
				if !ok {
					return fail("auto data: no built-in data workload %q (have %v)", n, auto.BuiltinLoaderNames())
				}
				r, err := s.data.Tune(w)
				if asJSON {
					b, jerr := json.MarshalIndent(r, "", "  ")
					if jerr != nil {
						return jerr
					}
					fmt.Fprintln(cmd.OutOrStdout(), string(b))
				} else {
					printDecisions(cmd, r.Decisions)
					fmt.Fprintf(cmd.OutOrStdout(), "%s: %.0f samples/s -> %.0f samples/s, pipeline %+v -> %+v\n",
						n, r.SamplesPerSecBefore, r.SamplesPerSecAfter, r.Before, r.After)
				}
				if err != nil {
					return err
				}
			}
			return nil
		},
	}
	cmd.Flags().StringSliceVar(&names, "workload", nil, "built-in data workload (webtensor auto workloads lists them)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print each report as JSON")
	return cmd
}

func autoSuiteCmd(o *autoOpts) *cobra.Command {
	var rollback, asJSON bool
	var agents []string
	cmd := &cobra.Command{
		Use:   "suite",
		Short: "Run the agents on every built-in workload and report against the targets",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			for _, a := range agents {
				if a != "kernel" && a != "data" {
					return fail("auto suite: no agent %q (want kernel or data)", a)
				}
			}
			s, err := o.open(slices.Contains(agents, "kernel"), slices.Contains(agents, "data"))
			if err != nil {
				return err
			}
			defer s.close()
			var jobs []auto.SuiteJob
			if slices.Contains(agents, "kernel") {
				var ws []auto.Workload
				for _, n := range auto.BuiltinNames() {
					ws = append(ws, s.workloads[n])
				}
				jobs = append(jobs, auto.KernelJobs(s.agent, ws)...)
			}
			if slices.Contains(agents, "data") {
				var ls []*auto.LoaderWorkload
				for _, n := range auto.BuiltinLoaderNames() {
					ls = append(ls, s.loaders[n])
				}
				jobs = append(jobs, auto.DataJobs(s.data, ls)...)
			}
			r, err := auto.RunSuite(s.fw, jobs, rollback)
			if asJSON {
				b, jerr := json.MarshalIndent(r, "", "  ")
				if jerr != nil {
					return jerr
				}
				fmt.Fprintln(cmd.OutOrStdout(), string(b))
			} else {
				fmt.Fprint(cmd.OutOrStdout(), r.String())
			}
			return err
		},
	}
	cmd.Flags().BoolVar(&rollback, "rollback", false, "roll every kept decision back at the end, timing each")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the report as JSON")
	cmd.Flags().StringSliceVar(&agents, "agent", []string{"kernel", "data"}, "the agents whose workloads run: kernel, data")
	return cmd
}

func autoDecisionsCmd(o *autoOpts) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "decisions",
		Short: "List the journal's decisions",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			dir := o.dir
			if dir == "" {
				var err error
				if dir, err = auto.DefaultDir(); err != nil {
					return err
				}
			}
			j, err := auto.OpenJournal(dir)
			if err != nil {
				return err
			}
			if asJSON {
				enc := json.NewEncoder(cmd.OutOrStdout())
				for _, d := range j.Decisions() {
					if err := enc.Encode(d); err != nil {
						return err
					}
				}
				return nil
			}
			printDecisions(cmd, j.Decisions())
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the journal's JSON lines")
	return cmd
}

func autoRollbackCmd(o *autoOpts) *cobra.Command {
	return &cobra.Command{
		Use:   "rollback ID",
		Short: "Restore the state from before a kept decision (and undo the kept ones after it)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			s, err := o.open(false, false)
			if err != nil {
				return err
			}
			r, err := s.fw.Rollback(args[0])
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "%s: %s in %.1f ms; state %.12s", r.ID, r.Reason, 1000*r.Seconds, r.StateAfter)
			if len(r.Undid) > 0 {
				fmt.Fprintf(cmd.OutOrStdout(), "; also undid %v", r.Undid)
			}
			fmt.Fprintln(cmd.OutOrStdout())
			return nil
		},
	}
}

func printDecisions(cmd *cobra.Command, ds []auto.Decision) {
	w := cmd.OutOrStdout()
	fmt.Fprintf(w, "%-6s %-7s %-12s %-34s %s\n", "ID", "AGENT", "VERDICT", "PROPOSAL", "REASON")
	for _, d := range ds {
		what := ""
		if d.Proposal != nil {
			what = d.Proposal.What
		}
		if d.Of != "" {
			what = "rollback of " + d.Of
		}
		fmt.Fprintf(w, "%-6s %-7s %-12s %-34s %s\n", d.ID, d.Agent, d.Verdict, what, d.Reason)
	}
}
