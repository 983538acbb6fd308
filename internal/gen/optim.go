package main

import (
	"cmp"
	"fmt"
	"reflect"
	"sort"
	"strconv"
	"strings"

	"github.com/webtensor/webtensor/nn"
)

// The optimisers' settings in every SDK (Java's Options records, the
// TypeScript XOptions interfaces, Python's keyword arguments), written from
// one table so that a name, a default or a doc is changed in one place. The
// defaults are not in the table: they are read from nn's Default* functions
// by reflection over the config structs, so a default changed in Go changes
// every SDK at the next make generate, and a config field the table does not
// name stops the generator. The names are the attributes abi/settings.go
// reads; optim_test.go checks them against the library.

// optimSetting is one of an optimiser's settings.
type optimSetting struct {
	name   string   // the attribute the library reads (torch's keyword): "weight_decay"
	fields []string // the nn config fields it sets: one, or two for a pair (Adam's betas)
}

func setting(name string, fields ...string) optimSetting { return optimSetting{name, fields} }

// optimDef is one optimiser as the table writes it.
type optimDef struct {
	class     string         // the class in every SDK: torch's name
	kind      string         // wt_optimizer_new's kind
	base      string         // the class it extends, sharing its settings (AdamW: Adam), or ""
	defaults  func() any     // nn's Default*: every SDK's defaults
	settings  []optimSetting // in torch's positional order; nil: the base's
	doc       string         // what it is (setting names in snake case: each SDK respells them)
	math      string         // the update, one equation a line, or ""
	rejects   string         // the settings the library refuses (Java's constructor documents them); "": the base's
	shortcuts [][]string     // Java's convenience constructors: the settings each takes after params
	example   string         // Java: a line of use, or ""
}

var optimTable = []optimDef{
	{
		class: "SGD", kind: "sgd", defaults: func() any { return nn.DefaultSGD() },
		settings: []optimSetting{setting("lr", "LR"), setting("momentum", "Momentum"), setting("dampening", "Dampening"),
			setting("weight_decay", "WeightDecay"), setting("nesterov", "Nesterov"), setting("maximize", "Maximize")},
		doc: "torch.optim.SGD, term for term:",
		math: `g   = grad (negated when maximising) + weight_decay * p
buf = g on the first step, then momentum * buf + (1 - dampening) * g
g   = g + momentum * buf with Nesterov, else buf   (when momentum != 0)
p   = p - lr * g`,
		rejects:   "a negative (or NaN) lr, momentum or weight decay, or Nesterov without momentum",
		shortcuts: [][]string{{"lr"}, {"lr", "momentum"}},
		example:   "var opt = new SGD(model.parameters(), SGD.defaults().withLr(0.1).withMomentum(0.9).withNesterov(true));",
	},
	{
		class: "Adam", kind: "adam", defaults: func() any { return nn.DefaultAdam() },
		settings: []optimSetting{setting("lr", "LR"), setting("betas", "Beta1", "Beta2"), setting("eps", "Eps"),
			setting("weight_decay", "WeightDecay"), setting("amsgrad", "AMSGrad"), setting("maximize", "Maximize")},
		doc: "torch.optim.Adam, with torch's single-tensor equations term for term:",
		math: `g  = grad (negated when maximising) + weight_decay * p      (AdamW: p = p * (1 - lr * weight_decay) instead)
m  = lerp(m, g, 1 - beta1)        (from the nearer end, as torch's kernel)
v  = beta2 * v + (1 - beta2) * g^2
v^ = max(v^, v) with amsgrad, else v
p  = p - lr / (1 - beta1^t) * m / (sqrt(v^) / sqrt(1 - beta2^t) + eps)`,
		rejects:   "a negative lr, eps or weight decay, or a beta outside [0, 1)",
		shortcuts: [][]string{{"lr"}, {"lr", "betas", "eps"}},
		example:   "var opt = new Adam(model.parameters(), Adam.defaults().withLr(0.05).withAmsgrad(true));",
	},
	{
		class: "AdamW", kind: "adamw", base: "Adam", defaults: func() any { return nn.DefaultAdamW() },
		doc: "torch.optim.AdamW: Adam with decoupled weight decay (p = p * (1 - lr * weight_decay) before the " +
			"update, instead of an L2 term in the gradient); the weight decay defaults to 0.01.",
		shortcuts: [][]string{{"lr"}},
	},
	{
		class: "RMSprop", kind: "rmsprop", defaults: func() any { return nn.DefaultRMSprop() },
		settings: []optimSetting{setting("lr", "LR"), setting("alpha", "Alpha"), setting("eps", "Eps"),
			setting("weight_decay", "WeightDecay"), setting("momentum", "Momentum"), setting("centered", "Centered"),
			setting("maximize", "Maximize")},
		doc: "torch.optim.RMSprop, with torch's single-tensor equations:",
		math: `g   = grad (negated when maximising) + weight_decay * p
v   = alpha * v + (1 - alpha) * g^2
avg = sqrt(v - gAvg^2) with gAvg = lerp(gAvg, g, 1 - alpha) when centered, else sqrt(v); avg += eps
buf = momentum * buf + g / avg;  p = p - lr * buf      (momentum > 0)
p   = p - lr * g / avg                                 (otherwise)`,
		rejects:   "a negative lr, alpha, eps, momentum or weight decay",
		shortcuts: [][]string{{"lr"}},
	},
	{
		class: "Adagrad", kind: "adagrad", defaults: func() any { return nn.DefaultAdagrad() },
		settings: []optimSetting{setting("lr", "LR"), setting("lr_decay", "LRDecay"), setting("weight_decay", "WeightDecay"),
			setting("initial_accumulator_value", "InitialAccumulatorValue"), setting("eps", "Eps"), setting("maximize", "Maximize")},
		doc: "torch.optim.Adagrad, with torch's single-tensor equations:",
		math: `g   = grad (negated when maximising) + weight_decay * p
sum = sum + g^2                       (starting at initial_accumulator_value)
p   = p - lr / (1 + (t - 1) * lr_decay) * g / (sqrt(sum) + eps)`,
		rejects:   "a negative setting",
		shortcuts: [][]string{{"lr"}},
	},
}

// optimDocs says what each setting does, whichever optimiser takes it.
var optimDocs = map[string]string{
	"lr":                        "the learning rate",
	"momentum":                  "the momentum factor (0: no momentum buffer)",
	"dampening":                 "how much of the new gradient the momentum buffer leaves out",
	"weight_decay":              "the weight decay (an L2 penalty; AdamW's is decoupled from the gradient)",
	"nesterov":                  "use Nesterov momentum (needs a momentum and no dampening)",
	"maximize":                  "ascend the gradient instead",
	"betas":                     "the decay rates of the running averages of the gradient and of its square",
	"eps":                       "added to the denominator, for numerical stability",
	"amsgrad":                   "keep the running maximum of v (Reddi et al.'s AMSGrad)",
	"alpha":                     "the decay rate of the running average of the squared gradient",
	"centered":                  "normalise by the variance (the second moment less the squared mean) instead",
	"lr_decay":                  "the learning rate's decay per step",
	"initial_accumulator_value": "where each parameter's sum of squared gradients starts",
}

// optimParam is a setting with its type, default and doc.
type optimParam struct {
	name   string
	fields []string
	kind   string    // "float", "bool" or "pair" (two floats)
	floats []float64 // the default of a float (one) or a pair (two)
	flag   bool      // the default of a bool
	doc    string
}

// optimizer is a table row with its settings resolved against nn.
type optimizer struct {
	optimDef
	params   []optimParam
	extended bool // another optimiser extends it (Java: not final, a constructor taking the kind)
}

// loadOptimizers resolves the table: each row's settings (its base's where
// it has none), their kinds and defaults from nn's config struct.
func loadOptimizers() ([]optimizer, error) {
	byClass := map[string]*optimDef{}
	for i := range optimTable {
		byClass[optimTable[i].class] = &optimTable[i]
	}
	var out []optimizer
	for _, d := range optimTable {
		settings := d.settings
		if d.base != "" {
			b, ok := byClass[d.base]
			if !ok || b.base != "" {
				return nil, fmt.Errorf("optimiser %s: base %q is not a table row without a base", d.class, d.base)
			}
			settings = b.settings
			d.rejects = cmp.Or(d.rejects, b.rejects)
		}
		params, err := optimParams(d.class, d.defaults(), settings)
		if err != nil {
			return nil, err
		}
		extended := false
		for _, e := range optimTable {
			extended = extended || e.base == d.class
		}
		out = append(out, optimizer{d, params, extended})
	}
	return out, nil
}

// optimParams reads each setting's kind and default from cfg, one of nn's
// config structs, and fails for a field no setting names (a setting an SDK
// would not have).
func optimParams(class string, cfg any, settings []optimSetting) ([]optimParam, error) {
	v := reflect.ValueOf(cfg)
	if v.Kind() != reflect.Struct {
		return nil, fmt.Errorf("optimiser %s: defaults are a %T, not an nn config struct", class, cfg)
	}
	used := map[string]bool{}
	var out []optimParam
	for _, s := range settings {
		p := optimParam{name: s.name, fields: s.fields, doc: optimDocs[s.name]}
		if p.doc == "" {
			return nil, fmt.Errorf("optimiser %s: setting %q has no doc in optimDocs", class, s.name)
		}
		for _, f := range s.fields {
			fv := v.FieldByName(f)
			if !fv.IsValid() || used[f] {
				return nil, fmt.Errorf("optimiser %s: setting %q: %s has no field %s, or another setting has it", class, s.name, v.Type(), f)
			}
			used[f] = true
			switch fv.Kind() {
			case reflect.Float64:
				p.floats = append(p.floats, fv.Float())
			case reflect.Bool:
				p.flag = fv.Bool()
			default:
				return nil, fmt.Errorf("optimiser %s: %s.%s is a %s: the SDKs take numbers and bools", class, v.Type(), f, fv.Kind())
			}
		}
		switch {
		case len(p.fields) == 1 && len(p.floats) == 1:
			p.kind = "float"
		case len(p.fields) == 1:
			p.kind = "bool"
		case len(p.fields) == 2 && len(p.floats) == 2:
			p.kind = "pair"
		default:
			return nil, fmt.Errorf("optimiser %s: setting %q sets %d fields: one, or a pair of numbers", class, s.name, len(p.fields))
		}
		out = append(out, p)
	}
	var missing []string
	for i := range v.NumField() {
		if f := v.Type().Field(i); f.IsExported() && !used[f.Name] {
			missing = append(missing, f.Name)
		}
	}
	if len(missing) > 0 {
		sort.Strings(missing)
		return nil, fmt.Errorf("optimiser %s: no setting in internal/gen's optimTable sets %s.%s", class, v.Type(),
			strings.Join(missing, ", "))
	}
	return out, nil
}

// param is the setting called name.
func (o optimizer) param(name string) (optimParam, bool) {
	for _, p := range o.params {
		if p.name == name {
			return p, true
		}
	}
	return optimParam{}, false
}

// camelText respells the settings' snake_case names in text as camelCase,
// as Java and TypeScript name them.
func (o optimizer) camelText(text string) string {
	for _, p := range o.params {
		text = strings.ReplaceAll(text, p.name, camel(p.name))
	}
	return text
}

// numText is a number as Java and TypeScript write a literal: the shorter of
// the positional and the scientific spelling ("0.9", "1e-3"), 0 as "0".
func numText(f float64) string {
	pos := strconv.FormatFloat(f, 'f', -1, 64)
	sci := strconv.FormatFloat(f, 'e', -1, 64)
	mant, exp, _ := strings.Cut(sci, "e")
	n, _ := strconv.Atoi(exp)
	sci = mant + "e" + strconv.Itoa(n)
	if len(sci) < len(pos) || (len(sci) == len(pos) && n < 0) {
		return sci
	}
	return pos
}

// fill joins items after open, breaking the line before an item that
// would pass width and indenting the lines after the first by indent.
func fill(open string, items []string, closing string, indent string, width int) []string {
	var lines []string
	line := open
	for i, it := range items {
		sep := ", "
		if i == len(items)-1 {
			sep = closing
		}
		if i > 0 && len(line)+len(it)+len(sep) > width {
			lines = append(lines, strings.TrimRight(line, " "))
			line = indent
		}
		line += it + sep
	}
	if len(items) == 0 {
		line += closing
	}
	return append(lines, line)
}

// optimFiles writes each SDK's optimiser classes.
func optimFiles(*registry) ([]file, error) {
	opts, err := loadOptimizers()
	if err != nil {
		return nil, err
	}
	files, err := javaOptimizers(opts)
	if err != nil {
		return nil, err
	}
	return append(files, tsOptimizers(opts), pyOptimizers(opts)), nil
}
