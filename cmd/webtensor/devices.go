package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/webtensor/webtensor/core"
)

// The CLI names only devices that exist: flags list the backend kinds
// compiled into this binary, and help ends with the devices that open on
// this machine. Nothing is offered from a fixed list (a `cuda:0` on a
// machine without CUDA).

// deviceFlagUsage is the usage of a --device flag; dflt says what an empty
// value means.
func deviceFlagUsage(dflt string) string {
	return fmt.Sprintf("device: %s, with :N for the Nth of a kind (webgpu:1); default: %s (the devices that open here are listed below)",
		orList(core.BackendKinds()), dflt)
}

// orList joins names as "a, b or c".
func orList(names []string) string {
	if len(names) < 2 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}

// devicesHelp says which backends are compiled in and which of them open
// here, opening each (so it is computed only when help is shown).
func devicesHelp() string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "\nDevices:\n  compiled in: %s (best first)\n", strings.Join(core.BackendKinds(), ", "))
	ok, failed := core.Devices()
	names := make([]string, len(ok))
	for i, d := range ok {
		names[i] = d.String()
		if b, err := core.BackendFor(d); err == nil && b.Capabilities().Software {
			names[i] += " (software emulation)"
		}
	}
	fmt.Fprintf(&sb, "  open here:   %s\n", strings.Join(names, ", "))
	for _, k := range core.BackendKinds() {
		if err, absent := failed[k]; absent {
			fmt.Fprintf(&sb, "  absent:      %s: %s\n", k, firstClause(strings.TrimPrefix(err.Error(), k+": ")))
		}
	}
	sb.WriteString("  `webtensor doctor` reports each device in full.\n")
	return sb.String()
}

// firstClause keeps an error's message up to its first parenthesis: the
// reason, without the list of paths searched that doctor prints.
func firstClause(msg string) string {
	if i := strings.Index(msg, " ("); i > 0 {
		return msg[:i]
	}
	return msg
}

// openHere lists the devices that open on this machine, for errors.
func openHere() string {
	ok, _ := core.Devices()
	names := make([]string, len(ok))
	for i, d := range ok {
		names[i] = d.String()
	}
	return strings.Join(names, ", ")
}

// withDevicesHelp makes the help of root, and of every command under it
// with a --device flag, end with devicesHelp.
func withDevicesHelp(root *cobra.Command) {
	help := root.HelpFunc()
	root.SetHelpFunc(func(c *cobra.Command, args []string) {
		help(c, args)
		if c == root || c.Flags().Lookup("device") != nil {
			fmt.Fprint(c.OutOrStdout(), devicesHelp())
		}
	})
}
