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

type tagged struct {
	Size   int      `json:"size"`
	Names  []string `json:"names"`
	Inner  inner
	hidden int
}

type inner struct {
	Limit int `json:"limit"`
}

// Tagged reads every json-tagged field with the given reader, adds the
// extra keys, and panics when a key has two readers; Within lifts an inner
// config's keys to the top.
func TestTagged(t *testing.T) {
	innerKeys := Tagged(Optional[inner], nil)
	keys := Tagged(Field[tagged], map[string]Key[tagged]{"mode": Only[tagged](`"fast"`)})
	for k, r := range Within(func(c *tagged) *inner { return &c.Inner }, innerKeys, "limit") {
		keys[k] = r
	}
	c := tagged{Names: []string{"a"}, Inner: inner{Limit: 7}}
	require.NoError(t, Parse([]byte(`{"size": 2, "mode": "fast", "limit": null}`), &c, keys, nil))
	require.Equal(t, tagged{Size: 2, Names: []string{"a"}, Inner: inner{Limit: 7}}, c)
	require.NoError(t, Parse([]byte(`{"names": ["b"], "limit": 3}`), &c, keys, nil))
	require.Equal(t, tagged{Size: 2, Names: []string{"b"}, Inner: inner{Limit: 3}}, c)

	for doc, want := range map[string]string{
		`{"names": null}`: `key "names": value null is not supported`,
		`{"hidden": 1}`:   `unknown key "hidden"`,
		`{"Inner": {}}`:   `unknown key "Inner"`,
	} {
		require.ErrorContains(t, Parse([]byte(doc), &tagged{hidden: 1}, keys, nil), want, doc)
	}
	require.Panics(t, func() { Tagged(Field[tagged], map[string]Key[tagged]{"size": Ignore[tagged]}) })
	require.Panics(t, func() { Within(func(c *tagged) *inner { return &c.Inner }, innerKeys, "nope") })
}
