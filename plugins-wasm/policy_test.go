package plugins

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// policyFixture is a module whose manifest declares one policy and whose
// wt_decide runs body (params: policy, ptr, len; result: packed reply).
func policyFixture(t *testing.T, body []byte) []byte {
	t.Helper()
	f := newFixture(uniq("pol"))
	f.manifest = strings.Replace(f.manifest, `"ops": [`,
		`"policies": [{"name": "pick", "doc": "A test policy."}], "ops": [`, 1)
	if body != nil {
		f.extra = append(f.extra, wasmFunc{export: "wt_decide", params: []byte{tI32, tI32, tI32}, results: []byte{tI64}, body: body})
	}
	return f.wasm()
}

func TestHostilePoliciesFailCleanly(t *testing.T) {
	h := hostileHost(t)
	ctx := context.Background()
	cases := map[string]struct {
		body []byte
		want string
	}{
		"infinite loop":      {code(opLoop, blockEmpty, opBr, 0, opEnd, i64c(0)), "deadline"},
		"trap":               {code(opUnreachable, i64c(0)), "unreachable"},
		"reply outside":      {i64c(packed(1<<30, 16)), "not in memory"},
		"reply not json":     {i64c(packed(manifestAt, 5)), "not the JSON expected"},
		"reply too long":     {i64c(packed(0, 2<<20)), "more than"},
		"error with message": {i64c(0), "failed on purpose"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			p, err := h.Load(ctx, name, policyFixture(t, c.body))
			require.NoError(t, err)
			defer p.Close()
			assert.Equal(t, []string{"pick"}, p.Policies())
			pol, err := p.Policy("pick")
			require.NoError(t, err)
			var reply map[string]any
			err = pol.Decide(map[string]int{"x": 1}, &reply)
			require.Error(t, err)
			assert.Contains(t, err.Error(), c.want)
			assert.Contains(t, err.Error(), pol.PolicyName())
			// The module is rebuilt and fails the same way; the host lives on.
			require.Error(t, pol.Decide(map[string]int{"x": 2}, &reply))
		})
	}
	requireUsable(t, h)
}

func TestPolicyManifestRules(t *testing.T) {
	h := hostileHost(t)
	_, err := h.Load(context.Background(), "no decide", policyFixture(t, nil))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "does not export wt_decide")
	p := loadGood(t, h)
	_, err = p.Policy("nope")
	assert.ErrorContains(t, err, `has no policy "nope"`)
	assert.Empty(t, p.Policies())
}
