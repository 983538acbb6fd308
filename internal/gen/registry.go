package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/webtensor/webtensor/core"
)

// registry is the op registry as the generators see it.
type registry struct {
	// manifest is core's, with its Go values (the op reference prints them).
	manifest core.Manifest
	// all is every op of the manifest, public and internal, by name, read
	// back from the manifest's JSON as every SDK reads it: an attribute
	// default is what the wire carries (numbers as json.Number, lists as []any).
	all []core.ManifestOp
	// categories holds the public ops by category, both sorted by name.
	categories []category
	// abi is the C ABI's headers, read from the repository the generator
	// runs in (the SDKs' FFI declarations come from them).
	abi *abiHeader
}

type category struct {
	name string
	ops  []core.ManifestOp
}

func loadRegistry() (*registry, error) {
	built := core.BuildManifest()
	raw, err := json.Marshal(built)
	if err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var m core.Manifest
	if err := dec.Decode(&m); err != nil {
		return nil, fmt.Errorf("reading the manifest back: %w", err)
	}
	root, err := findRoot()
	if err != nil {
		return nil, err
	}
	abi, err := readABI(root)
	if err != nil {
		return nil, fmt.Errorf("reading the C ABI: %w", err)
	}
	r := &registry{manifest: built, all: m.Ops, abi: abi}
	byCat := map[string][]core.ManifestOp{}
	for _, op := range m.Ops {
		if !op.Internal && !strings.HasPrefix(op.Name, "_") {
			byCat[op.Category] = append(byCat[op.Category], op)
		}
	}
	for name, ops := range byCat {
		sort.Slice(ops, func(i, j int) bool { return ops[i].Name < ops[j].Name })
		r.categories = append(r.categories, category{name, ops})
	}
	sort.Slice(r.categories, func(i, j int) bool { return r.categories[i].name < r.categories[j].name })
	return r, nil
}

// public lists the public ops sorted by name.
func (r *registry) public() []core.ManifestOp {
	var out []core.ManifestOp
	for _, c := range r.categories {
		out = append(out, c.ops...)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// multiOutput reports whether the op returns a list of tensors: more than
// one output, or a variable number ("pieces...").
func multiOutput(op core.ManifestOp) bool {
	for _, o := range op.Outputs {
		if strings.HasSuffix(o, "...") {
			return true
		}
	}
	return len(op.Outputs) > 1
}

// jsonText is v as JSON, as JavaScript's JSON.stringify writes it.
func jsonText(v any) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		panic(err) // values decoded from JSON encode again
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// camel turns snake_case into camelCase ("log_softmax" -> "logSoftmax").
func camel(s string) string {
	var b strings.Builder
	up := false
	for _, c := range s {
		if c == '_' {
			up = b.Len() > 0
			continue
		}
		if up {
			b.WriteString(strings.ToUpper(string(c)))
		} else {
			b.WriteRune(c)
		}
		up = false
	}
	return b.String()
}

// pascal is camel with the first letter upper case.
func pascal(s string) string {
	c := camel(s)
	if c == "" {
		return c
	}
	return strings.ToUpper(c[:1]) + c[1:]
}
