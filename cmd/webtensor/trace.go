package main

import (
	"bytes"
	"fmt"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/webtensor/webtensor/core/config"
	"github.com/webtensor/webtensor/trace"
)

// traceCmd records another webtensor command's op calls as a Chrome trace;
// flameCmd draws a trace as a flame graph. Both are package trace's, so a
// trace from any SDK (wt.profile, WEBTENSOR_TRACE) draws the same way.
func traceCmd() *cobra.Command {
	var out string
	var sync bool
	cmd := &cobra.Command{
		Use:   "trace [flags] -- COMMAND [ARGS...]",
		Short: "Record a webtensor command's op calls as a Chrome trace (Perfetto opens it)",
		Long: `trace runs another webtensor command and records every op call it makes - op,
device, input and output shapes and dtypes, bytes, time and the device's memory -
into a Chrome trace file with the environment (versions, devices, configuration),
for ui.perfetto.dev or chrome://tracing, and for 'webtensor flame'.

Any program can record the same way: wt.profile(path) in Python, wt.profile(fn) in
JavaScript, Webtensor.profile(...) in Java, trace.Start in Go, or WEBTENSOR_TRACE=path
for a whole process.`,
		Example: `  webtensor trace -o run.json -- run --task gnn --steps 20
  webtensor trace --sync -o gpu.json -- run --device webgpu:0 --steps 10
  webtensor flame run.json -o run.svg`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if args[0] == "trace" || args[0] == "flame" {
				return fail("trace: record a command that runs ops (run, ...), not %q", args[0])
			}
			var opts []trace.Option
			if sync {
				opts = append(opts, trace.WithSync())
			}
			rec, err := trace.Start(opts...)
			if err != nil {
				return err
			}
			inner := rootCmd()
			inner.SetArgs(args)
			inner.SetOut(cmd.OutOrStdout())
			inner.SetErr(cmd.ErrOrStderr())
			runErr := inner.Execute()
			t := rec.Stop()
			var buf bytes.Buffer
			if err := t.WriteJSON(&buf); err != nil {
				return err
			}
			if err := os.WriteFile(out, buf.Bytes(), 0o644); err != nil {
				return fail("trace: %v (choose another file with -o)", err)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "trace: %d op calls written to %s (open it in ui.perfetto.dev; draw it with `webtensor flame %s`)\n",
				len(t.Events), out, out)
			return runErr
		},
	}
	cmd.Flags().StringVarP(&out, "output", "o", "trace.json", "the trace file to write")
	cmd.Flags().BoolVar(&sync, "sync", false, "wait for the device after each op, so GPU ops carry their execution time (slower)")
	return cmd
}

// traceFromConfig records the whole command when WEBTENSOR_TRACE names a
// file, as the SDKs do for their processes; the returned func writes it.
func traceFromConfig() (stop func()) {
	path := config.String("WEBTENSOR_TRACE")
	if path == "" {
		return func() {}
	}
	rec, err := trace.Start()
	if err != nil {
		fmt.Fprintln(os.Stderr, "webtensor: WEBTENSOR_TRACE:", err)
		return func() {}
	}
	return func() {
		var buf bytes.Buffer
		err := rec.Stop().WriteJSON(&buf)
		if err == nil {
			err = os.WriteFile(path, buf.Bytes(), 0o644)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "webtensor: could not write the trace WEBTENSOR_TRACE asked for:", err)
		}
	}
}

func flameCmd() *cobra.Command {
	var out, pprof string
	var width int
	cmd := &cobra.Command{
		Use:   "flame TRACE.json",
		Short: "Draw a trace as a flame graph of op time (SVG, and pprof's format)",
		Long: `flame reads a Chrome trace that webtensor wrote (webtensor trace, wt.profile,
WEBTENSOR_TRACE) and draws where the time went: a tower per device, each op called
by the program on it, the ops it ran inside its own work on top, each as wide as
its time; hover a frame for its total and self time and call count. --pprof also
writes pprof's profile format, for 'go tool pprof -top' or '-http'.`,
		Example: `  webtensor flame run.json -o run.svg
  webtensor flame run.json --pprof run.pb.gz && go tool pprof -top run.pb.gz`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			start := time.Now()
			f, err := os.Open(args[0])
			if err != nil {
				return fail("flame: %v (write a trace with `webtensor trace -o %s -- run`)", err, args[0])
			}
			t, err := trace.ReadJSON(f)
			f.Close()
			if err != nil {
				return fail("flame: %s: %v", args[0], err)
			}
			root := trace.Flame(t)
			var svg bytes.Buffer
			if err := root.WriteSVG(&svg, width); err != nil {
				return err
			}
			if err := os.WriteFile(out, svg.Bytes(), 0o644); err != nil {
				return fail("flame: %v", err)
			}
			if pprof != "" {
				var pb bytes.Buffer
				if err := root.WritePprof(&pb); err != nil {
					return err
				}
				if err := os.WriteFile(pprof, pb.Bytes(), 0o644); err != nil {
					return fail("flame: %v", err)
				}
			}
			fmt.Fprintf(cmd.OutOrStdout(), "flame: %d op calls, %s of op time, drawn to %s in %s\n",
				len(t.Events), root.Total, out, time.Since(start).Round(time.Millisecond))
			return nil
		},
	}
	cmd.Flags().StringVarP(&out, "output", "o", "flame.svg", "the SVG file to write")
	cmd.Flags().StringVar(&pprof, "pprof", "", "also write pprof's profile format (gzipped protobuf) to this file")
	cmd.Flags().IntVar(&width, "width", 1200, "the SVG's width in pixels")
	return cmd
}
