package diffuse

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/webtensor/webtensor/internal/strictconfig"
)

// The reading and the checks every model config shares (UNet2DModel's,
// UNet2DConditionModel's, ControlNetModel's, AutoencoderKL's and
// DiTTransformer2DModel's).

// parseModelConfig reads a diffusers config.json over the defaults c with
// keys and then validates it, naming model (the diffusers class) in its
// errors.
func parseModelConfig[C any](model string, data []byte, c C, keys map[string]strictconfig.Key[C], validate func(*C) error) (C, error) {
	if err := strictconfig.Parse(data, &c, keys, nil); err != nil {
		var zero C
		return zero, fmt.Errorf("diffuse: %s config: %w", model, err)
	}
	// validate may complete c (expand per-block keys, fill defaults that
	// depend on others), so c is returned after it.
	err := validate(&c)
	return c, err
}

// diffusersKeys adds to keys the bookkeeping keys every diffusers model
// config carries: _class_name, which must be model, and where and by
// which diffusers version it was saved, which change nothing.
func diffusersKeys[C any](model string, keys map[string]strictconfig.Key[C]) map[string]strictconfig.Key[C] {
	keys["_class_name"] = strictconfig.Only[C](strconv.Quote(model))
	keys["_diffusers_version"] = strictconfig.Ignore[C]
	keys["_name_or_path"] = strictconfig.Ignore[C]
	return keys
}

// configFailure makes a validation error naming the config key at fault.
type configFailure func(key, format string, args ...any) error

// failIn is the configFailure of model's config.
func failIn(model string) configFailure {
	return func(key, format string, args ...any) error {
		return fmt.Errorf("diffuse: %s config: %s: "+format, append([]any{model, key}, args...)...)
	}
}

// checkLevels checks the layout the UNets and the VAE share: at least one
// level, one down and one up block type per level (an entry of
// block_out_channels), and at least one input and output channel.
func checkLevels(fail configFailure, blockOut []int, down, up []string, in, out int) error {
	n := len(blockOut)
	switch {
	case n == 0:
		return fail("block_out_channels", "empty")
	case len(down) != n:
		return fail("down_block_types", "%d types for %d block_out_channels", len(down), n)
	case len(up) != n:
		return fail("up_block_types", "%d types for %d block_out_channels", len(up), n)
	}
	return checkCounts(fail, count{"in_channels", in, false}, count{"out_channels", out, false})
}

// count is a config value that must be at least one; orNull also allows
// the zero that stands for JSON's null (the model's default).
type count struct {
	key    string
	value  int
	orNull bool
}

// checkCounts fails on the first of counts, in order, below its minimum:
// the order decides which error a config with several faults gets.
func checkCounts(fail configFailure, counts ...count) error {
	for _, c := range counts {
		switch {
		case c.orNull && c.value < 0:
			return fail(c.key, "%d, want >= 1 or null", c.value)
		case !c.orNull && c.value < 1:
			return fail(c.key, "%d, want >= 1", c.value)
		}
	}
	return nil
}

// checkGroupMultiples checks that each level's width splits into the
// group norms' groups.
func checkGroupMultiples(fail configFailure, blockOut []int, groups int) error {
	for i, ch := range blockOut {
		if ch < 1 || ch%groups != 0 {
			return fail("block_out_channels", "%v: entry %d is not a positive multiple of norm_num_groups %d", blockOut, i, groups)
		}
	}
	return nil
}

// checkBlockTypes refuses a down or up block type webtensor does not
// implement (those it does: downOK and upOK).
func checkBlockTypes(fail configFailure, down, up, downOK, upOK []string) error {
	for _, k := range []struct {
		key       string
		types, ok []string
	}{{"down_block_types", down, downOK}, {"up_block_types", up, upOK}} {
		for i, t := range k.types {
			if !slices.Contains(k.ok, t) {
				return fail(k.key, "%q (entry %d) is not supported (webtensor implements %s)", t, i, strings.Join(k.ok, " and "))
			}
		}
	}
	return nil
}

// unetOptions are the options of the ResNet, mid and down blocks both
// UNets (and so the ControlNet) read the same way.
type unetOptions struct {
	normGroups     int     // norm_num_groups
	normEps        float64 // norm_eps
	midScale       float64 // mid_block_scale_factor
	timeEmbedDim   int     // time_embedding_dim, 0 for null
	downPadding    int     // downsample_padding
	timeScaleShift string  // resnet_time_scale_shift
}

func (o unetOptions) check(fail configFailure) error {
	switch {
	case o.normGroups < 1:
		return fail("norm_num_groups", "%d, want >= 1", o.normGroups)
	case o.normEps <= 0:
		return fail("norm_eps", "%v, want > 0", o.normEps)
	case o.midScale == 0:
		return fail("mid_block_scale_factor", "0 divides by zero")
	case o.timeEmbedDim < 0:
		return fail("time_embedding_dim", "%d, want >= 1 or null", o.timeEmbedDim)
	case o.downPadding < 0:
		return fail("downsample_padding", "%d, want >= 0", o.downPadding)
	case o.timeScaleShift != "default" && o.timeScaleShift != "scale_shift":
		return fail("resnet_time_scale_shift", "%q is not supported (webtensor implements default and scale_shift)", o.timeScaleShift)
	}
	return nil
}
