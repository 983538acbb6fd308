package diffuse

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
)

// Config holds the options of a scheduler, spelled as diffusers'
// scheduler_config.json spells them. Start from Defaults (diffusers'
// defaults differ per class: set_alpha_to_one is true for DDIM and false for
// PNDM, timestep_spacing is "leading" for DDPM and "linspace" for Euler) or
// from ParseConfig, change fields, then call New.
type Config struct {
	// Class is the diffusers class the options belong to (the file's
	// _class_name); New refuses a Config of another class, For converts.
	Class string

	NumTrainTimesteps int       // num_train_timesteps
	BetaStart         float64   // beta_start
	BetaEnd           float64   // beta_end
	BetaSchedule      string    // beta_schedule: linear, scaled_linear, squaredcos_cap_v2
	TrainedBetas      []float64 // trained_betas: overrides the schedule when set
	PredictionType    string    // prediction_type: epsilon, v_prediction, sample
	TimestepSpacing   string    // timestep_spacing: linspace, leading, trailing
	StepsOffset       int       // steps_offset

	ClipSample      bool    // clip_sample (DDPM, DDIM)
	ClipSampleRange float64 // clip_sample_range (DDPM, DDIM)
	SetAlphaToOne   bool    // set_alpha_to_one (DDIM, PNDM)
	VarianceType    string  // variance_type: DDPM fixed_small, fixed_small_log or fixed_large; DPM-Solver null only
	SkipPRKSteps    bool    // skip_prk_steps (PNDM)
	// Eta is DDIM's eta, an argument of diffusers' step rather than a
	// config key: 0 is deterministic DDIM, 1 DDPM-like noise. ParseConfig
	// reads it from the key "eta", webtensor's own.
	Eta float64

	UseKarrasSigmas bool   // use_karras_sigmas (LMS, Euler, DPM-Solver)
	FinalSigmasType string // final_sigmas_type: zero or sigma_min (Euler, DPM-Solver)
	SolverOrder     int    // solver_order: 1, 2 or 3 (DPM-Solver)
	AlgorithmType   string // algorithm_type: dpmsolver++ or sde-dpmsolver++
	SolverType      string // solver_type: midpoint or heun
	LowerOrderFinal bool   // lower_order_final
	EulerAtFinal    bool   // euler_at_final
}

// Names lists the scheduler classes New builds, in diffusers' spelling.
func Names() []string {
	return []string{"DDPMScheduler", "DDIMScheduler", "PNDMScheduler", "LMSDiscreteScheduler",
		"EulerDiscreteScheduler", "EulerAncestralDiscreteScheduler", "DPMSolverMultistepScheduler"}
}

func unknownClass(name string) error {
	return fmt.Errorf("diffuse: unknown scheduler %q (known: %s)", name, strings.Join(Names(), ", "))
}

// Defaults returns diffusers' default options of the class name.
func Defaults(name string) (Config, error) {
	if !slices.Contains(Names(), name) {
		return Config{}, unknownClass(name)
	}
	c := Config{Class: name, NumTrainTimesteps: 1000, BetaStart: 0.0001, BetaEnd: 0.02,
		BetaSchedule: "linear", PredictionType: "epsilon", TimestepSpacing: "linspace",
		ClipSampleRange: 1, SolverOrder: 2, AlgorithmType: "dpmsolver++",
		SolverType: "midpoint", LowerOrderFinal: true, FinalSigmasType: "zero"}
	switch name {
	case "DDPMScheduler":
		c.TimestepSpacing, c.ClipSample, c.VarianceType = "leading", true, "fixed_small"
	case "DDIMScheduler":
		c.TimestepSpacing, c.ClipSample, c.SetAlphaToOne = "leading", true, true
	case "PNDMScheduler":
		c.TimestepSpacing = "leading"
	}
	return c, nil
}

// An option is one config key: which classes take it and the field it
// sets. A key webtensor knows but does not implement (field nil) is
// accepted only at its diffusers default (def), so a file written by
// save_pretrained loads and a file that asks for the missing feature fails
// naming it.
type option struct {
	classes string            // letters of the classes that take it: see classKey
	field   func(*Config) any // a pointer to the field
	def     string            // for unimplemented keys: the only accepted value, as JSON
}

// classKey maps a class to the letter the option table uses for it.
var classKey = map[string]string{"DDPMScheduler": "P", "DDIMScheduler": "I", "PNDMScheduler": "N",
	"LMSDiscreteScheduler": "L", "EulerDiscreteScheduler": "E", "EulerAncestralDiscreteScheduler": "A",
	"DPMSolverMultistepScheduler": "D"}

const all = "PINLEAD"

var options = map[string]option{
	"num_train_timesteps": {all, func(c *Config) any { return &c.NumTrainTimesteps }, ""},
	"beta_start":          {all, func(c *Config) any { return &c.BetaStart }, ""},
	"beta_end":            {all, func(c *Config) any { return &c.BetaEnd }, ""},
	"beta_schedule":       {all, func(c *Config) any { return &c.BetaSchedule }, ""},
	"trained_betas":       {all, func(c *Config) any { return &c.TrainedBetas }, ""},
	"prediction_type":     {all, func(c *Config) any { return &c.PredictionType }, ""},
	"timestep_spacing":    {all, func(c *Config) any { return &c.TimestepSpacing }, ""},
	"steps_offset":        {all, func(c *Config) any { return &c.StepsOffset }, ""},
	"clip_sample":         {"PI", func(c *Config) any { return &c.ClipSample }, ""},
	"clip_sample_range":   {"PI", func(c *Config) any { return &c.ClipSampleRange }, ""},
	"set_alpha_to_one":    {"IN", func(c *Config) any { return &c.SetAlphaToOne }, ""},
	"variance_type":       {"PD", func(c *Config) any { return &c.VarianceType }, ""},
	"skip_prk_steps":      {"N", func(c *Config) any { return &c.SkipPRKSteps }, ""},
	"eta":                 {"I", func(c *Config) any { return &c.Eta }, ""},
	"use_karras_sigmas":   {"LED", func(c *Config) any { return &c.UseKarrasSigmas }, ""},
	"final_sigmas_type":   {"ED", func(c *Config) any { return &c.FinalSigmasType }, ""},
	"solver_order":        {"D", func(c *Config) any { return &c.SolverOrder }, ""},
	"algorithm_type":      {"D", func(c *Config) any { return &c.AlgorithmType }, ""},
	"solver_type":         {"D", func(c *Config) any { return &c.SolverType }, ""},
	"lower_order_final":   {"D", func(c *Config) any { return &c.LowerOrderFinal }, ""},
	"euler_at_final":      {"D", func(c *Config) any { return &c.EulerAtFinal }, ""},

	// Known to diffusers, not implemented here: only the default loads.
	"thresholding":               {"PID", nil, "false"},
	"dynamic_thresholding_ratio": {"PID", nil, "0.995"},
	"sample_max_value":           {"PID", nil, "1"},
	"rescale_betas_zero_snr":     {"PIEAD", nil, "false"},
	"use_exponential_sigmas":     {"LED", nil, "false"},
	"use_beta_sigmas":            {"LED", nil, "false"},
	"interpolation_type":         {"E", nil, `"linear"`},
	"timestep_type":              {"E", nil, `"discrete"`},
	"sigma_min":                  {"E", nil, "null"},
	"sigma_max":                  {"E", nil, "null"},
	"use_lu_lambdas":             {"D", nil, "false"},
	"use_flow_sigmas":            {"D", nil, "false"},
	"flow_shift":                 {"D", nil, "1"},
	"lambda_min_clipped":         {"D", nil, `"-Infinity"`},
	"use_dynamic_shifting":       {"D", nil, "false"},
	"time_shift_type":            {"D", nil, `"exponential"`},
}

func takes(o option, class string) bool { return strings.Contains(o.classes, classKey[class]) }

// keysOf lists the keys class takes, sorted, for error messages.
func keysOf(class string) []string {
	var ks []string
	for k, o := range options {
		if takes(o, class) {
			ks = append(ks, k)
		}
	}
	sort.Strings(ks)
	return ks
}

// ParseConfig reads a diffusers scheduler_config.json. Its _class_name
// names the scheduler; keys starting with "_" (_class_name,
// _diffusers_version, _use_default_values) are otherwise ignored. A key the
// class does not take is an error naming the key and the class.
func ParseConfig(data []byte) (Config, error) {
	var head struct {
		Class string `json:"_class_name"`
	}
	if err := json.Unmarshal(pythonJSON(data), &head); err != nil {
		return Config{}, fmt.Errorf("diffuse: scheduler config: %w", err)
	}
	if head.Class == "" {
		return Config{}, fmt.Errorf("diffuse: scheduler config has no _class_name; use ParseConfigFor(name, data)")
	}
	return ParseConfigFor(head.Class, data)
}

// ParseConfigFor reads a scheduler config as the options of class name,
// whatever its _class_name says.
func ParseConfigFor(name string, data []byte) (Config, error) {
	c, err := Defaults(name)
	if err != nil {
		return c, err
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(pythonJSON(data), &raw); err != nil {
		return Config{}, fmt.Errorf("diffuse: %s config: %w", name, err)
	}
	keys := make([]string, 0, len(raw))
	for k := range raw {
		keys = append(keys, k)
	}
	sort.Strings(keys) // the first bad key in a stable order
	for _, k := range keys {
		if strings.HasPrefix(k, "_") {
			continue
		}
		if err := c.setKey(k, raw[k]); err != nil {
			return Config{}, err
		}
	}
	return c, nil
}

func (c *Config) setKey(k string, v json.RawMessage) error {
	o, ok := options[k]
	if !ok || !takes(o, c.Class) {
		return fmt.Errorf("diffuse: %s has no option %q (its options: %s)", c.Class, k, strings.Join(keysOf(c.Class), ", "))
	}
	if o.field == nil {
		if !sameJSON(v, o.def) {
			return fmt.Errorf("diffuse: %s option %s=%s is not supported by webtensor (only %s)", c.Class, k, v, o.def)
		}
		return nil
	}
	if string(v) == "null" {
		if k == "trained_betas" {
			c.TrainedBetas = nil
		}
		return nil // variance_type: null and the like keep the default
	}
	if err := json.Unmarshal(v, o.field(c)); err != nil {
		return fmt.Errorf("diffuse: %s option %s=%s: %w", c.Class, k, v, err)
	}
	return nil
}

// For converts the options to another class, as diffusers' from_config does
// when a pipeline swaps its scheduler: every option both classes take
// carries over, the rest take the new class's defaults.
func (c Config) For(name string) (Config, error) {
	out, err := Defaults(name)
	if err != nil {
		return out, err
	}
	if c.Class == "" {
		return out, fmt.Errorf("diffuse: Config.For(%q): the config has no Class", name)
	}
	for _, o := range options {
		if o.field != nil && takes(o, c.Class) && takes(o, name) {
			b, err := json.Marshal(o.field(&c))
			if err == nil {
				err = json.Unmarshal(b, o.field(&out))
			}
			if err != nil {
				return out, err
			}
		}
	}
	return out, nil
}

// sameJSON compares two JSON values (1 and 1.0 are the same number).
func sameJSON(a json.RawMessage, b string) bool {
	var x, y any
	if json.Unmarshal(pythonJSON(a), &x) != nil || json.Unmarshal(pythonJSON([]byte(b)), &y) != nil {
		return false
	}
	return fmt.Sprint(x) == fmt.Sprint(y)
}

// pythonJSON rewrites the non-standard numbers Python's json module writes
// (Infinity, -Infinity, NaN: diffusers saves lambda_min_clipped = -inf that
// way) as strings, outside string literals, so encoding/json reads them.
func pythonJSON(b []byte) []byte {
	if !bytes.Contains(b, []byte("Infinity")) && !bytes.Contains(b, []byte("NaN")) {
		return b
	}
	var out []byte
	inStr := false
	for i := 0; i < len(b); i++ {
		ch := b[i]
		if inStr {
			out = append(out, ch)
			if ch == '\\' && i+1 < len(b) {
				i++
				out = append(out, b[i])
			} else if ch == '"' {
				inStr = false
			}
			continue
		}
		matched := false
		for _, w := range []string{"-Infinity", "Infinity", "NaN"} {
			if bytes.HasPrefix(b[i:], []byte(w)) {
				out = append(out, '"')
				out = append(out, w...)
				out = append(out, '"')
				i += len(w) - 1
				matched = true
				break
			}
		}
		if !matched {
			out = append(out, ch)
			inStr = ch == '"'
		}
	}
	return out
}
