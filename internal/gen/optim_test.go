package main

import (
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/webtensor/webtensor/abi"
	"github.com/webtensor/webtensor/nn"
)

// attrList is an abi.AttrList over Go values.
type attrList []abi.Attr

func (l attrList) Len() int                   { return len(l) }
func (l attrList) At(i int) (abi.Attr, error) { return l[i], nil }

// optimAttr is a setting as an SDK passes it, at its default.
func optimAttr(p optimParam) abi.Attr {
	switch p.kind {
	case "bool":
		return abi.Attr{Name: p.name, Kind: abi.AttrBool, I: map[bool]int64{false: 0, true: 1}[p.flag]}
	case "pair":
		return abi.Attr{Name: p.name, Kind: abi.AttrFloats, Floats: p.floats}
	}
	return abi.Attr{Name: p.name, Kind: abi.AttrFloat, F: p.floats[0]}
}

var takes = regexp.MustCompile(`unknown setting "not_a_setting" \(it takes (.*)\)`)

// The library names the settings it takes when it refuses one: the table's
// must be those, in that order, each of the type the SDKs pass.
func TestOptimizerSettingsAreTheLibrarys(t *testing.T) {
	opts, err := loadOptimizers()
	require.NoError(t, err)
	require.Len(t, opts, 5)
	for _, o := range opts {
		var names []string
		attrs := attrList{}
		for _, p := range o.params {
			names = append(names, p.name)
			attrs = append(attrs, optimAttr(p))
		}
		// No parameters: the settings are read, and the unknown one refused,
		// before the optimiser is made.
		_, err := abi.OptimizerNew(o.kind, nil, append(attrs, abi.Attr{Name: "not_a_setting", Kind: abi.AttrInt}))
		require.Error(t, err, o.class)
		m := takes.FindStringSubmatch(err.Error())
		require.NotNil(t, m, "%s: a setting of the table's type was refused: %v", o.class, err)
		assert.Equal(t, strings.Join(names, ", "), m[1], o.class)
	}
}

// Each setting sets the config field its name says (lr: LR, betas: Beta1
// and Beta2), and the defaults are nn's.
func TestOptimizerSettingsNameTheirFields(t *testing.T) {
	opts, err := loadOptimizers()
	require.NoError(t, err)
	for _, o := range opts {
		for _, p := range o.params {
			flat := strings.ReplaceAll(p.name, "_", "")
			if p.kind == "pair" {
				stem := strings.TrimSuffix(flat, "s")
				assert.True(t, strings.EqualFold(p.fields[0], stem+"1") && strings.EqualFold(p.fields[1], stem+"2"),
					"%s.%s sets %v", o.class, p.name, p.fields)
				continue
			}
			assert.True(t, strings.EqualFold(p.fields[0], flat), "%s.%s sets %s", o.class, p.name, p.fields[0])
		}
	}
	sgd, _ := opts[0].param("lr")
	assert.Equal(t, []float64{nn.DefaultSGD().LR}, sgd.floats)
	adamw, _ := opts[2].param("weight_decay")
	assert.Equal(t, []float64{nn.DefaultAdamW().WeightDecay}, adamw.floats)
}

func TestOptimizerTableRefusesWhatNNDoesNotHave(t *testing.T) {
	_, err := optimParams("SGD", nn.DefaultSGD(), []optimSetting{setting("lr", "LR")})
	assert.ErrorContains(t, err, "no setting in internal/gen's optimTable sets nn.SGDConfig.Dampening, Maximize, Momentum, Nesterov, WeightDecay")
	_, err = optimParams("SGD", nn.DefaultSGD(), []optimSetting{setting("lr", "Rate")})
	assert.ErrorContains(t, err, "has no field Rate")
	_, err = optimParams("SGD", nn.DefaultSGD(), []optimSetting{setting("learning_rate", "LR")})
	assert.ErrorContains(t, err, `setting "learning_rate" has no doc`)
}

func TestNumTextIsTheShorterSpelling(t *testing.T) {
	for v, want := range map[float64]string{0: "0", 1e-3: "1e-3", 1e-2: "1e-2", 0.9: "0.9", 0.999: "0.999", 1e-10: "1e-10",
		1: "1", 1e6: "1e6", 0.25: "0.25"} {
		assert.Equal(t, want, numText(v), "%v", v)
	}
}

// Every generated file is owned by its own output's globs and by no other
// output's, so that no output calls another's file stale.
func TestEachOutputOwnsExactlyItsFiles(t *testing.T) {
	r, err := loadRegistry()
	require.NoError(t, err)
	for _, o := range outputs {
		files, err := o.files(r)
		require.NoError(t, err, o.name)
		for _, f := range files {
			for _, other := range outputs {
				matched := false
				for _, glob := range other.owns {
					ok, err := filepath.Match(glob, f.path)
					require.NoError(t, err)
					matched = matched || ok
				}
				if other.name == o.name {
					assert.True(t, matched, "%s writes %s outside its globs", o.name, f.path)
				} else {
					assert.False(t, matched, "%s owns %s, which %s writes", other.name, f.path, o.name)
				}
			}
		}
	}
}
