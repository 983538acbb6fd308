package diffuse

import (
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"sort"
	"strings"

	"github.com/webtensor/webtensor/core"
	"github.com/webtensor/webtensor/core/safetensors"
)

// LoRA is a set of low-rank adapters read from a safetensors file: LoRA on
// linear layers and LoCon on convolutions (a k×k down conv to the rank, a
// 1×1 up conv back), each adding scale·up(down(x)) to its layer's output,
// that is scale·up·down to its weight. Two namings load:
//
//   - diffusers/PEFT (save_lora_weights, save_lora_adapter):
//     [component.]module.lora_A.weight (down) and .lora_B.weight (up), with
//     the LoRA config (r, lora_alpha, alpha_pattern, use_rslora) in the
//     header's lora_adapter_metadata entry; without it alpha is the rank,
//     as diffusers assumes;
//   - kohya (sd-scripts): lora_unet_<module with dots as underscores>
//     .lora_down.weight, .lora_up.weight and an optional .alpha scalar.
//
// A layer's scale is alpha/rank (alpha/√rank with use_rslora) times the
// scale the adapter is applied with. Extensions these formats also carry
// (DoRA magnitudes, LoRA biases, LoHa, LoKr, Tucker mid tensors) are
// refused naming the tensor rather than silently dropped.
type LoRA struct {
	// Format is "peft" or "kohya".
	Format string
	// Layers are sorted by component and name.
	Layers []*LoRALayer
}

// LoRALayer is one adapted layer.
type LoRALayer struct {
	// Component is the pipeline component the layer belongs to: "unet",
	// "transformer", "text_encoder", ..., or "" when the file's names carry
	// none (a single model's save_lora_adapter file).
	Component string
	// Name is the layer's module path within the component: dotted for
	// PEFT files; for kohya files underscored as the file has it, and
	// resolved against the model when the LoRA is applied.
	Name string
	// Down is (rank, in) or (rank, in, kh, kw); Up is (out, rank) or
	// (out, rank, 1, 1). Both are float32 on the CPU.
	Down, Up *core.Tensor
	// Alpha is the layer's alpha; its scale is Alpha/Rank (or
	// Alpha/√Rank with RSLoRA).
	Alpha  float64
	RSLoRA bool
}

// Rank is the adapter's inner width.
func (l *LoRALayer) Rank() int { return dimOf(l.Down, 0) }

// Scale is the factor on up·down at adapter scale 1.
func (l *LoRALayer) Scale() float64 {
	if l.RSLoRA {
		return l.Alpha / math.Sqrt(float64(l.Rank()))
	}
	return l.Alpha / float64(l.Rank())
}

// loraComponents are the first name segments diffusers' pipelines prefix
// their LoRA tensors with.
var loraComponents = map[string]bool{"unet": true, "transformer": true, "text_encoder": true,
	"text_encoder_2": true, "text_encoder_3": true, "prior": true, "controlnet": true}

// kohyaComponents maps sd-scripts' name prefixes to diffusers' components.
var kohyaComponents = []struct{ prefix, component string }{
	{"lora_unet_", "unet"}, {"lora_te1_", "text_encoder"}, {"lora_te2_", "text_encoder_2"},
	{"lora_te_", "text_encoder"}, {"lora_transformer_", "transformer"},
}

// LoadLoRA reads a LoRA safetensors file in diffusers/PEFT or kohya naming.
func LoadLoRA(path string) (*LoRA, error) {
	f, err := safetensors.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("diffuse: LoadLoRA: %w", err)
	}
	var l *LoRA
	kohya := false
	for _, name := range f.Names {
		if strings.HasPrefix(name, "lora_") {
			kohya = true
			break
		}
	}
	if kohya {
		l, err = readKohya(f)
	} else {
		l, err = readPEFT(f)
	}
	if err != nil {
		return nil, fmt.Errorf("diffuse: LoadLoRA: %s: %w", path, err)
	}
	sort.Slice(l.Layers, func(i, j int) bool {
		a, b := l.Layers[i], l.Layers[j]
		return a.Component < b.Component || (a.Component == b.Component && a.Name < b.Name)
	})
	return l, nil
}

// loraPair collects a layer's tensors while a file is read.
type loraPair struct {
	down, up *safetensors.Tensor
	alpha    *float64
}

func (p *loraPair) layer(component, name string) (*LoRALayer, error) {
	switch {
	case p.down == nil:
		return nil, fmt.Errorf("layer %s has an up tensor but no down tensor", name)
	case p.up == nil:
		return nil, fmt.Errorf("layer %s has a down tensor but no up tensor", name)
	}
	down, up := p.down.ToTensor(core.CPU).Cast(core.F32), p.up.ToTensor(core.CPU).Cast(core.F32)
	ds, us := down.Shape(), up.Shape()
	conv := len(ds) == 4
	switch {
	case len(ds) != 2 && !conv:
		return nil, fmt.Errorf("layer %s: down has shape %v, want (rank, in) or (rank, in, kh, kw)", name, ds)
	case !conv && (len(us) != 2 || us[1] != ds[0]):
		return nil, fmt.Errorf("layer %s: up has shape %v, want (out, %d) for down %v", name, us, ds[0], ds)
	case conv && (len(us) != 4 || us[1] != ds[0] || us[2] != 1 || us[3] != 1):
		return nil, fmt.Errorf("layer %s: up has shape %v, want (out, %d, 1, 1) for down %v", name, us, ds[0], ds)
	case ds[0] < 1:
		return nil, fmt.Errorf("layer %s: rank 0", name)
	}
	alpha := float64(ds[0])
	if p.alpha != nil {
		alpha = *p.alpha
	}
	return &LoRALayer{Component: component, Name: name, Down: down, Up: up, Alpha: alpha}, nil
}

func readKohya(f *safetensors.File) (*LoRA, error) {
	pairs := map[string]*loraPair{}
	var order []string
	for _, key := range f.Names {
		module, suffix, ok := strings.Cut(key, ".")
		if !ok {
			return nil, fmt.Errorf("tensor %s is not kohya's <module>.lora_down.weight, .lora_up.weight or .alpha", key)
		}
		p := pairs[module]
		if p == nil {
			p = &loraPair{}
			pairs[module] = p
			order = append(order, module)
		}
		st := f.Tensors[key]
		switch suffix {
		case "lora_down.weight":
			p.down = &st
		case "lora_up.weight":
			p.up = &st
		case "alpha":
			v, err := st.ToTensor(core.CPU).Float64s()
			if err != nil || len(v) != 1 {
				return nil, fmt.Errorf("tensor %s has shape %v, want one number", key, st.Shape)
			}
			p.alpha = &v[0]
		default:
			return nil, fmt.Errorf("tensor %s is not supported (webtensor reads LoRA and LoCon: lora_down, lora_up, alpha; not LoHa, LoKr, DoRA or Tucker mid tensors)", key)
		}
	}
	l := &LoRA{Format: "kohya"}
	for _, module := range order {
		component := ""
		name := module
		for _, c := range kohyaComponents {
			if rest, ok := strings.CutPrefix(module, c.prefix); ok {
				component, name = c.component, rest
				break
			}
		}
		if component == "" {
			return nil, fmt.Errorf("module %s has no known kohya prefix (lora_unet_, lora_te_, lora_te1_, lora_te2_, lora_transformer_)", module)
		}
		layer, err := pairs[module].layer(component, name)
		if err != nil {
			return nil, err
		}
		l.Layers = append(l.Layers, layer)
	}
	return l, nil
}

// peftConfig is the part of PEFT's LoraConfig that changes the math.
type peftConfig struct {
	R            *float64           `json:"r"`
	LoraAlpha    *float64           `json:"lora_alpha"`
	AlphaPattern map[string]float64 `json:"alpha_pattern"`
	UseRSLoRA    bool               `json:"use_rslora"`
	UseDoRA      bool               `json:"use_dora"`
	LoraBias     bool               `json:"lora_bias"`
}

// peftConfigs reads lora_adapter_metadata: one LoraConfig per component,
// its keys prefixed "component." in a pipeline's file and bare in a
// model's.
func peftConfigs(meta map[string]string) (map[string]*peftConfig, error) {
	raw, ok := meta["lora_adapter_metadata"]
	if !ok {
		return nil, nil
	}
	var flat map[string]json.RawMessage
	if err := json.Unmarshal([]byte(raw), &flat); err != nil {
		return nil, fmt.Errorf("lora_adapter_metadata: %w", err)
	}
	grouped := map[string]map[string]json.RawMessage{}
	for k, v := range flat {
		component, key := "", k
		if c, rest, ok := strings.Cut(k, "."); ok && loraComponents[c] {
			component, key = c, rest
		}
		if grouped[component] == nil {
			grouped[component] = map[string]json.RawMessage{}
		}
		grouped[component][key] = v
	}
	out := map[string]*peftConfig{}
	for component, g := range grouped {
		b, _ := json.Marshal(g)
		var c peftConfig
		if err := json.Unmarshal(b, &c); err != nil {
			return nil, fmt.Errorf("lora_adapter_metadata (%q): %w", component, err)
		}
		switch {
		case c.UseDoRA:
			return nil, fmt.Errorf("lora_adapter_metadata: use_dora is true (%q); DoRA is not supported", component)
		case c.LoraBias:
			return nil, fmt.Errorf("lora_adapter_metadata: lora_bias is true (%q); LoRA biases are not supported", component)
		}
		out[component] = &c
	}
	return out, nil
}

// alpha is the layer's lora_alpha: alpha_pattern's entry when one matches
// the module path as PEFT matches them ((.*\.)?pattern$), else lora_alpha,
// else the rank.
func (c *peftConfig) alpha(name string, rank int) (float64, error) {
	if c == nil {
		return float64(rank), nil
	}
	var hits []string
	for pattern := range c.AlphaPattern {
		re, err := regexp.Compile(`^(.*\.)?(` + pattern + `)$`)
		if err != nil {
			return 0, fmt.Errorf("alpha_pattern %q: %w", pattern, err)
		}
		if re.MatchString(name) {
			hits = append(hits, pattern)
		}
	}
	sort.Strings(hits)
	switch {
	case len(hits) > 1:
		// PEFT takes the first in the config's order, which JSON does not keep.
		return 0, fmt.Errorf("layer %s matches alpha_pattern entries %q; the file does not say which applies", name, hits)
	case len(hits) == 1:
		return c.AlphaPattern[hits[0]], nil
	case c.LoraAlpha != nil:
		return *c.LoraAlpha, nil
	}
	return float64(rank), nil
}

func readPEFT(f *safetensors.File) (*LoRA, error) {
	cfgs, err := peftConfigs(f.Metadata)
	if err != nil {
		return nil, err
	}
	pairs := map[string]*loraPair{}
	var order []string
	for _, key := range f.Names {
		st := f.Tensors[key]
		p := func(m string) *loraPair {
			if pairs[m] == nil {
				pairs[m] = &loraPair{}
				order = append(order, m)
			}
			return pairs[m]
		}
		switch {
		case strings.HasSuffix(key, ".lora_A.weight"):
			p(strings.TrimSuffix(key, ".lora_A.weight")).down = &st
		case strings.HasSuffix(key, ".lora_B.weight"):
			p(strings.TrimSuffix(key, ".lora_B.weight")).up = &st
		default:
			return nil, fmt.Errorf("tensor %s is not a PEFT LoRA tensor (<module>.lora_A.weight or .lora_B.weight; DoRA magnitudes and LoRA biases are not supported)", key)
		}
	}
	l := &LoRA{Format: "peft"}
	for _, module := range order {
		component, name := "", module
		if c, rest, ok := strings.Cut(module, "."); ok && loraComponents[c] {
			component, name = c, rest
		}
		layer, err := pairs[module].layer(component, name)
		if err != nil {
			return nil, err
		}
		cfg := cfgs[component]
		if layer.Alpha, err = cfg.alpha(name, layer.Rank()); err != nil {
			return nil, err
		}
		layer.RSLoRA = cfg != nil && cfg.UseRSLoRA
		l.Layers = append(l.Layers, layer)
	}
	return l, nil
}
