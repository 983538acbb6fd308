package plugins

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/webtensor/webtensor/core"
)

// The manifest a module returns from wt_manifest (ABI.md, "The manifest"),
// decoded strictly: an unknown field is an error, so a typo ("output" for
// "outputs") fails at load instead of silently dropping a rule.

// ABIVersion is the plugin ABI this host implements.
const ABIVersion = 1

// Limits that keep a hostile manifest from costing the host much.
const (
	maxManifestBytes = 16 << 20
	maxOps           = 1024
	maxOpTensors     = 64 // inputs plus outputs of one op
	maxNameLen       = 128
	maxRank          = 8
)

type manifestJSON struct {
	ABI      *int          `json:"abi"`
	Name     string        `json:"name"`
	Version  string        `json:"version"`
	Ops      []*opJSON     `json:"ops"`
	Policies []*policyJSON `json:"policies,omitempty"`
}

type policyJSON struct {
	Name string `json:"name"`
	Doc  string `json:"doc"`
}

type opJSON struct {
	Name     string            `json:"name"`
	Doc      string            `json:"doc"`
	Inputs   []inputJSON       `json:"inputs"`
	Attrs    []attrJSON        `json:"attrs"`
	Outputs  []outputJSON      `json:"outputs"`
	Backward map[string]string `json:"backward,omitempty"`
	WGSL     string            `json:"wgsl,omitempty"`
}

type inputJSON struct {
	Name     string   `json:"name"`
	DTypes   []string `json:"dtypes,omitempty"`
	Optional bool     `json:"optional,omitempty"`
	NoGrad   bool     `json:"no_grad,omitempty"`
}

type attrJSON struct {
	Name     string          `json:"name"`
	Kind     string          `json:"kind"`
	Default  json.RawMessage `json:"default,omitempty"`
	Required bool            `json:"required,omitempty"`
	Enum     []string        `json:"enum,omitempty"`
	Doc      string          `json:"doc,omitempty"`
}

type outputJSON struct {
	Name  string `json:"name"`
	Shape string `json:"shape"`
	DType string `json:"dtype"`
}

// pluginSpec is a validated manifest.
type pluginSpec struct {
	name     string
	version  string
	ops      []*opSpec
	policies []string // in manifest order: the index wt_decide receives
}

// opSpec is one validated op of a manifest, ready to become a core.OpDef.
type opSpec struct {
	index    int // the op number wt_kernel and wt_infer receive
	name     string
	doc      string
	inputs   []core.InputSpec
	attrs    []core.AttrSpec
	outputs  []outputRule
	backward map[string]string
	wgsl     string
	// key is the canonical JSON of everything that shapes the OpDef (not
	// the WGSL source): a closed plugin's op can be bound again only to a
	// plugin whose manifest declares it identically.
	key        string
	needsInfer bool
}

type shapeRule uint8

const (
	shapeOfInput shapeRule = iota + 1
	shapeBroadcast
	shapeInfer
)

// outputRule says how to find one output's shape and dtype.
type outputRule struct {
	name       string
	shape      shapeRule
	shapeInput int        // for shapeOfInput
	dtypeInput int        // the input whose dtype the output takes, or -1
	dtype      core.DType // when dtypeInput is -1
}

var identRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

func checkIdent(what, s string) error {
	switch {
	case s == "":
		return fmt.Errorf("%s: missing name", what)
	case len(s) > maxNameLen:
		return fmt.Errorf("%s: name of %d bytes is longer than %d", what, len(s), maxNameLen)
	case !identRE.MatchString(s):
		return fmt.Errorf("%s: name %q is not an identifier (letters, digits, _; not starting with a digit)", what, s)
	}
	return nil
}

// parseManifest decodes and validates a manifest.
func parseManifest(raw []byte) (*pluginSpec, error) {
	if len(raw) > maxManifestBytes {
		return nil, fmt.Errorf("manifest of %d bytes is larger than %d", len(raw), maxManifestBytes)
	}
	if !utf8.Valid(raw) {
		return nil, fmt.Errorf("manifest is not valid UTF-8")
	}
	var m manifestJSON
	if err := decodeStrict(raw, &m); err != nil {
		return nil, fmt.Errorf("manifest is not the JSON ABI.md describes: %s", clip(err.Error(), 512))
	}
	if err := checkIdent("manifest", m.Name); err != nil {
		return nil, err
	}
	switch {
	case m.ABI == nil:
		return nil, fmt.Errorf("manifest: missing \"abi\"")
	case *m.ABI != ABIVersion:
		return nil, fmt.Errorf("manifest: abi is %d, this host implements %d", *m.ABI, ABIVersion)
	case m.Version == "":
		return nil, fmt.Errorf("manifest: missing \"version\"")
	case m.Ops == nil && len(m.Policies) == 0:
		return nil, fmt.Errorf("manifest: missing \"ops\"")
	case len(m.Ops) == 0 && len(m.Policies) == 0:
		return nil, fmt.Errorf("manifest: \"ops\" is empty (and there are no \"policies\")")
	case len(m.Policies) > maxOps:
		return nil, fmt.Errorf("manifest: %d policies, more than %d", len(m.Policies), maxOps)
	case len(m.Ops) > maxOps:
		return nil, fmt.Errorf("manifest: %d ops, more than %d", len(m.Ops), maxOps)
	}
	spec := &pluginSpec{name: m.Name, version: m.Version}
	seen := map[string]bool{}
	for i, o := range m.Ops {
		if o == nil {
			return nil, fmt.Errorf("manifest: op %d is null", i)
		}
		op, err := parseOp(m.Name, i, o)
		if err != nil {
			return nil, fmt.Errorf("manifest: op %d (%s): %v", i, clip(o.Name, maxNameLen), err)
		}
		if seen[op.name] {
			return nil, fmt.Errorf("manifest: op %d: %s is declared twice", i, op.name)
		}
		seen[op.name] = true
		spec.ops = append(spec.ops, op)
	}
	for i, pol := range m.Policies {
		switch {
		case pol == nil:
			return nil, fmt.Errorf("manifest: policy %d is null", i)
		case strings.TrimSpace(pol.Doc) == "":
			return nil, fmt.Errorf("manifest: policy %d (%s): missing \"doc\"", i, clip(pol.Name, maxNameLen))
		case slices.Contains(spec.policies, pol.Name):
			return nil, fmt.Errorf("manifest: policy %d: %s is declared twice", i, clip(pol.Name, maxNameLen))
		}
		if err := checkIdent("policy", pol.Name); err != nil {
			return nil, fmt.Errorf("manifest: policy %d: %v", i, err)
		}
		spec.policies = append(spec.policies, pol.Name)
	}
	return spec, nil
}

func decodeStrict(raw []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if dec.More() {
		return errors.New("trailing data after the JSON value")
	}
	return nil
}

func parseOp(plugin string, index int, o *opJSON) (*opSpec, error) {
	short, ok := strings.CutPrefix(o.Name, plugin+".")
	if !ok {
		return nil, fmt.Errorf("name %q must be %q followed by the op's name", clip(o.Name, maxNameLen), plugin+".")
	}
	if err := checkIdent("op", short); err != nil {
		return nil, err
	}
	if strings.TrimSpace(o.Doc) == "" {
		return nil, fmt.Errorf("missing \"doc\"")
	}
	if o.Outputs == nil {
		return nil, fmt.Errorf("missing \"outputs\"")
	}
	if len(o.Outputs) == 0 {
		return nil, fmt.Errorf("\"outputs\" is empty")
	}
	if n := len(o.Inputs) + len(o.Outputs); n > maxOpTensors {
		return nil, fmt.Errorf("%d inputs and outputs, more than %d", n, maxOpTensors)
	}
	op := &opSpec{index: index, name: o.Name, doc: o.Doc, wgsl: o.WGSL}
	names := map[string]string{}
	claim := func(kind, name string) error {
		if prev, dup := names[name]; dup {
			return fmt.Errorf("%s %q has the name of %s", kind, name, prev)
		}
		names[name] = kind + " " + name
		return nil
	}
	for i, in := range o.Inputs {
		s, err := parseInput(in)
		if err != nil {
			return nil, fmt.Errorf("input %d: %v", i, err)
		}
		if err := claim("input", in.Name); err != nil {
			return nil, err
		}
		op.inputs = append(op.inputs, s)
	}
	for i, a := range o.Attrs {
		s, err := parseAttr(a)
		if err != nil {
			return nil, fmt.Errorf("attr %d (%s): %v", i, clip(a.Name, maxNameLen), err)
		}
		if err := claim("attr", a.Name); err != nil {
			return nil, err
		}
		op.attrs = append(op.attrs, s)
	}
	for i, out := range o.Outputs {
		r, err := parseOutput(out, op.inputs)
		if err != nil {
			return nil, fmt.Errorf("output %d (%s): %v", i, clip(out.Name, maxNameLen), err)
		}
		if err := claim("output", out.Name); err != nil {
			return nil, err
		}
		op.outputs = append(op.outputs, r)
		op.needsInfer = op.needsInfer || r.shape == shapeInfer
	}
	// Backward expressions may say grad and grad_<output>; a tensor or
	// attribute of that name would be ambiguous.
	reserved := []string{"grad"}
	for _, out := range o.Outputs {
		reserved = append(reserved, "grad_"+out.Name)
	}
	for _, r := range reserved {
		if prev, taken := names[r]; taken {
			return nil, fmt.Errorf("%s: the name %q is reserved for backward expressions", prev, r)
		}
	}
	for in, src := range o.Backward {
		i := slices.IndexFunc(op.inputs, func(s core.InputSpec) bool { return s.Name == in })
		switch {
		case i < 0:
			return nil, fmt.Errorf("backward names %q, which is not an input", clip(in, maxNameLen))
		case op.inputs[i].NoGrad:
			return nil, fmt.Errorf("backward names input %q, which is marked no_grad", in)
		case strings.TrimSpace(src) == "":
			return nil, fmt.Errorf("backward of input %q is empty", in)
		}
	}
	op.backward = o.Backward
	keyed := *o
	keyed.WGSL = ""
	key, err := json.Marshal(keyed)
	if err != nil {
		return nil, err
	}
	op.key = string(key)
	return op, nil
}

func parseInput(in inputJSON) (core.InputSpec, error) {
	if err := checkIdent("input", in.Name); err != nil {
		return core.InputSpec{}, err
	}
	s := core.InputSpec{Name: in.Name, Optional: in.Optional, NoGrad: in.NoGrad}
	if in.DTypes == nil {
		return s, nil
	}
	if len(in.DTypes) == 0 {
		return s, fmt.Errorf("%s: \"dtypes\" is empty (leave it out to accept every dtype)", in.Name)
	}
	for _, name := range in.DTypes {
		d, err := parseDTypeName(name)
		if err != nil {
			return s, fmt.Errorf("%s: %v", in.Name, err)
		}
		if slices.Contains(s.DTypes, d) {
			return s, fmt.Errorf("%s: dtype %s listed twice", in.Name, name)
		}
		s.DTypes = append(s.DTypes, d)
	}
	return s, nil
}

// parseDTypeName accepts only webtensor's own dtype names, the ones ABI.md
// lists, not the NumPy spellings core.ParseDType also takes.
func parseDTypeName(name string) (core.DType, error) {
	for _, d := range core.AllDTypes {
		if d.String() == name && int(d) < len(abiDType) && abiDType[d] != 0 {
			return d, nil
		}
	}
	return core.Invalid, fmt.Errorf("unknown dtype %q (want one of f32 f16 bf16 f64 i64 i32 u32 i16 i8 u8 bool; ABI version 1 has no u16 or u64)", clip(name, 32))
}

var attrKinds = map[string]core.AttrKind{"int": core.AttrInt, "float": core.AttrFloat, "bool": core.AttrBool,
	"string": core.AttrString, "ints": core.AttrInts, "floats": core.AttrFloats, "dtype": core.AttrDType}

func parseAttr(a attrJSON) (core.AttrSpec, error) {
	if err := checkIdent("attr", a.Name); err != nil {
		return core.AttrSpec{}, err
	}
	kind, ok := attrKinds[a.Kind]
	if !ok {
		return core.AttrSpec{}, fmt.Errorf("kind %q is not one of int float bool string ints floats dtype", clip(a.Kind, 32))
	}
	s := core.AttrSpec{Name: a.Name, Kind: kind, Required: a.Required, Doc: a.Doc}
	if len(a.Enum) > 0 {
		if kind != core.AttrString {
			return s, fmt.Errorf("\"enum\" is only for string attributes, this one is %s", a.Kind)
		}
		s.Enum = slices.Clone(a.Enum)
	}
	raw := bytes.TrimSpace(a.Default)
	if len(raw) == 0 || string(raw) == "null" {
		return s, nil
	}
	if a.Required {
		return s, fmt.Errorf("a required attribute cannot have a default")
	}
	v, err := attrDefault(kind, raw)
	if err != nil {
		return s, fmt.Errorf("default %s: %v", clip(string(raw), 64), err)
	}
	if kind == core.AttrString && len(s.Enum) > 0 && !slices.Contains(s.Enum, v.(string)) {
		return s, fmt.Errorf("default %q is not in the enum %s", clip(v.(string), 64), clip(fmt.Sprint(s.Enum), 256))
	}
	s.Default = v
	return s, nil
}

// attrDefault decodes a default into the canonical Go type core.Attrs uses.
func attrDefault(kind core.AttrKind, raw []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	wrong := fmt.Errorf("is not a valid %s", kind)
	switch kind {
	case core.AttrInt:
		return jsonInt(v)
	case core.AttrFloat:
		return jsonFloat(v)
	case core.AttrBool:
		if b, ok := v.(bool); ok {
			return b, nil
		}
	case core.AttrString:
		if s, ok := v.(string); ok {
			return s, nil
		}
	case core.AttrDType:
		if s, ok := v.(string); ok {
			return parseDTypeName(s)
		}
	case core.AttrInts, core.AttrFloats:
		list, ok := v.([]any)
		if !ok {
			return nil, wrong
		}
		ints, floats := make([]int, len(list)), make([]float64, len(list))
		for i, e := range list {
			var err error
			if kind == core.AttrInts {
				ints[i], err = jsonInt(e)
			} else {
				floats[i], err = jsonFloat(e)
			}
			if err != nil {
				return nil, fmt.Errorf("element %d: %v", i, err)
			}
		}
		if kind == core.AttrInts {
			return ints, nil
		}
		return floats, nil
	}
	return nil, wrong
}

func jsonInt(v any) (int, error) {
	n, ok := v.(json.Number)
	if !ok {
		return 0, fmt.Errorf("%s is not a number", clip(fmt.Sprint(v), 64))
	}
	if i, err := strconv.ParseInt(string(n), 10, 64); err == nil {
		return int(i), nil
	}
	f, err := strconv.ParseFloat(string(n), 64)
	if err != nil || f != math.Trunc(f) || math.Abs(f) >= 1<<62 {
		return 0, fmt.Errorf("%s is not an integer", clip(string(n), 64))
	}
	return int(f), nil
}

func jsonFloat(v any) (float64, error) {
	n, ok := v.(json.Number)
	if !ok {
		return 0, fmt.Errorf("%s is not a number", clip(fmt.Sprint(v), 64))
	}
	f, err := strconv.ParseFloat(string(n), 64)
	if err != nil {
		return 0, fmt.Errorf("%s is not a finite float", clip(string(n), 64))
	}
	return f, nil
}

func parseOutput(o outputJSON, inputs []core.InputSpec) (outputRule, error) {
	r := outputRule{name: o.Name, dtypeInput: -1}
	if err := checkIdent("output", o.Name); err != nil {
		return r, err
	}
	switch {
	case o.Shape == "":
		return r, fmt.Errorf("missing \"shape\" (want \"input:N\", \"broadcast\" or \"infer\")")
	case o.Shape == "broadcast":
		if len(inputs) == 0 {
			return r, fmt.Errorf("shape rule \"broadcast\" needs at least one input")
		}
		r.shape = shapeBroadcast
	case o.Shape == "infer":
		r.shape = shapeInfer
	default:
		n, err := inputRule(o.Shape, inputs)
		if err != nil {
			return r, fmt.Errorf("shape rule: %v (want \"input:N\", \"broadcast\" or \"infer\")", err)
		}
		r.shape, r.shapeInput = shapeOfInput, n
	}
	if o.DType == "" {
		return r, fmt.Errorf("missing \"dtype\" (want \"input:N\" or a dtype name)")
	}
	if strings.HasPrefix(o.DType, "input:") {
		n, err := inputRule(o.DType, inputs)
		if err != nil {
			return r, fmt.Errorf("dtype rule: %v", err)
		}
		r.dtypeInput = n
		return r, nil
	}
	d, err := parseDTypeName(o.DType)
	if err != nil {
		return r, fmt.Errorf("dtype rule: %v", err)
	}
	r.dtype = d
	return r, nil
}

// inputRule reads "input:N" and checks N names an input.
func inputRule(rule string, inputs []core.InputSpec) (int, error) {
	digits, ok := strings.CutPrefix(rule, "input:")
	if !ok {
		return 0, fmt.Errorf("%q is not a rule", clip(rule, 64))
	}
	n, err := strconv.Atoi(digits)
	if err != nil || n < 0 || strconv.Itoa(n) != digits {
		return 0, fmt.Errorf("%q: %q is not an input number", clip(rule, 64), clip(digits, 32))
	}
	if n >= len(inputs) {
		return 0, fmt.Errorf("%q names input %d, the op has %d input(s)", rule, n, len(inputs))
	}
	return n, nil
}
