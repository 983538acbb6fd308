package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/webtensor/webtensor/auto"
	plugins "github.com/webtensor/webtensor/plugins-wasm"
)

// autoCmd runs package auto's kernel agent on the built-in workloads,
// lists its decisions and rolls them back. Every subcommand opens the same
// journal folder and registers every built-in workload's settings, so a
// snapshot taken by one invocation restores in another.
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
and after. Kept kernel settings go to the kernel cache in the same folder.`,
		Example: `  webtensor auto kernel --workload graph-ew-large
  webtensor auto suite --rollback
  webtensor auto decisions
  webtensor auto rollback d0003`,
	}
	cmd.PersistentFlags().StringVar(&o.dir, "dir", "", "journal and kernel cache folder (default: auto/ in the cache folder, see WEBTENSOR_CACHE_DIR)")
	cmd.PersistentFlags().StringVar(&o.policy, "policy", "default#kernel", "policy module.wasm#policy; default#kernel is build/plugins/policy-auto.wasm")
	cmd.PersistentFlags().IntVar(&o.runs, "runs", auto.DefaultConfig().Runs, "A/B runs a side per measurement")
	cmd.PersistentFlags().Float64Var(&o.margin, "margin", auto.DefaultConfig().Margin, "relative gain a proposal must reach (0.1 is 10%)")
	cmd.AddCommand(autoWorkloadsCmd(), autoKernelCmd(&o), autoSuiteCmd(&o), autoDecisionsCmd(&o), autoRollbackCmd(&o))
	return cmd
}

type autoOpts struct {
	dir, policy string
	runs        int
	margin      float64
}

// session is an opened framework with the kernel agent and every
// built-in workload registered and its cached winners applied.
type session struct {
	fw        *auto.Framework
	agent     *auto.KernelAgent
	workloads map[string]auto.Workload
	host      *plugins.Host
}

func (o *autoOpts) open(withPolicy bool) (*session, error) {
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
	s := &session{fw: fw, workloads: map[string]auto.Workload{}}
	var policy auto.Proposer = noPolicy{}
	if withPolicy {
		ctx := context.Background()
		if s.host, err = plugins.NewHost(ctx, plugins.NewConfig()); err != nil {
			return nil, err
		}
		if policy, err = auto.LoadPolicy(ctx, s.host, o.policy); err != nil {
			return nil, err
		}
	}
	if s.agent, err = auto.NewKernelAgent(fw, policy); err != nil {
		return nil, err
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
		Short: "List the built-in workloads",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			fmt.Fprintln(cmd.OutOrStdout(), strings.Join(auto.BuiltinNames(), "\n"))
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
			s, err := o.open(true)
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

func autoSuiteCmd(o *autoOpts) *cobra.Command {
	var rollback, asJSON bool
	cmd := &cobra.Command{
		Use:   "suite",
		Short: "Run the kernel agent on every built-in workload and report against the targets",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			s, err := o.open(true)
			if err != nil {
				return err
			}
			defer s.close()
			var ws []auto.Workload
			for _, n := range auto.BuiltinNames() {
				ws = append(ws, s.workloads[n])
			}
			r, err := auto.RunSuite(s.agent, ws, rollback)
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
			s, err := o.open(false)
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
