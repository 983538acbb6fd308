package conformance

import (
	"crypto/sha256"
	"encoding/hex"

	"github.com/webtensor/webtensor/core"
)

// RunIdentity makes every IdentityCase on dev through the public Go API and
// returns the fingerprints of their bytes (or the error text).
func RunIdentity(dev core.Device) map[string]string {
	out := map[string]string{}
	for _, c := range IdentityCases {
		attrs := core.Attrs{"device": dev.String()}
		for k, v := range c.Attrs {
			attrs[k] = v
		}
		var t *core.Tensor
		if c.Op == "bernoulli" {
			delete(attrs, "device")
			t = core.Call1("bernoulli", attrs, core.Full(core.Shape{64}, 0.3, core.F32, dev))
		} else {
			attrs["shape"] = c.Shape
			t = core.Call1(c.Op, attrs)
		}
		raw, err := t.Bytes()
		if err != nil {
			out[c.Name] = "error: " + err.Error()
			continue
		}
		sum := sha256.Sum256(raw)
		out[c.Name] = hex.EncodeToString(sum[:])
	}
	return out
}
