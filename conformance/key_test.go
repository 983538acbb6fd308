package conformance

import (
	"crypto/sha256"
	"encoding/hex"
	"testing"

	"github.com/stretchr/testify/assert"
)

// A key must fingerprint the samples: one that failed to encode them (NaN
// in JSON) was the hash of nothing for all, any, cast and logsumexp, so
// their stale vectors went unnoticed.
func TestKeysFingerprintTheSamples(t *testing.T) {
	empty := sha256.Sum256(nil)
	nothing := hex.EncodeToString(empty[:12])
	for _, d := range OpsWithSamples() {
		assert.NotEqual(t, nothing, Key(d), "%s: the key is the hash of nothing", d.Name)
	}
}
