//go:build js

package abi

// The auto-agents journal to a folder and run their policies on the plugin
// host, neither of which the browser build has (auto.go): their targets
// exist there to say so, by name, rather than as unknown targets.

// autoCalls is made by a variable's initialiser, which runs before any
// init function (calls_domains.go's registers it).
var autoCalls = unsupportedAutoCalls()

func unsupportedAutoCalls() map[string]method {
	m := map[string]method{}
	for _, name := range []string{"tune_loader", "tune_graph", "journal", "rollback", "parallel_plan"} {
		m["auto."+name] = method{"nothing: an error", func(c *CallArgs) func() (any, error) {
			for k := range c.raw {
				c.read[k] = true // whatever the options, the answer is the same
			}
			return func() (any, error) {
				return nil, Errorf(StatusUnsupported, "%s: the auto-agents are not in the browser build: they journal "+
					"to a folder and run their policies on the plugin host, which a page has not", c.Target)
			}
		}}
	}
	return m
}
