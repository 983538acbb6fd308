package strictconfig

import (
	"testing"

	"github.com/stretchr/testify/require"
)

type cfg struct {
	Size  int
	Act   string
	Heads int
	Bias  bool
}

var keys = map[string]Key[cfg]{
	"size":  Field(func(c *cfg) any { return &c.Size }),
	"act":   Into(func(c *cfg) *string { return &c.Act }),
	"heads": NullableInt(func(c *cfg) *int { return &c.Heads }),
	"mode":  Only[cfg](`"fast"`, `null`),
	"note":  Ignore[cfg],
}

// Keys are read in sorted order; unknown keys, refused values, null where
// it is not allowed and malformed JSON each fail naming the key.
func TestParse(t *testing.T) {
	c := cfg{Act: "gelu", Heads: 4}
	require.NoError(t, Parse([]byte(`{"size": 3, "act": null, "heads": null, "mode": "fast", "note": [1]}`), &c, keys, nil))
	require.Equal(t, cfg{Size: 3, Act: "gelu", Heads: 0}, c)

	for doc, want := range map[string]string{
		`{"size": null}`:              `key "size": value null is not supported`,
		`{"mode": "slow"}`:            `key "mode": value "slow" is not supported (supported: "fast", null)`,
		`{"zeta": 1, "alpha": 2}`:     `unknown key "alpha"`,
		`{"size": "three"}`:           `key "size": json: cannot unmarshal string`,
		`{"size": 1`:                  `unexpected end of JSON input`,
		`{"extra": 1, "size": "bad"}`: `key "size"`,
	} {
		err := Parse([]byte(doc), &cfg{}, keys, func(k string) bool { return k == "extra" })
		require.ErrorContains(t, err, want, doc)
	}
}
