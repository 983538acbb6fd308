package strictconfig

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"sort"
	"strings"
)

// Key reads one config.json key into a config of type C, or refuses its
// value.
type Key[C any] func(c *C, raw json.RawMessage) error

// Field reads a key into the field p points at. JSON null would leave the
// default in place silently, so it is refused: use Into or NullableInt for
// keys whose None means something.
func Field[C any](p func(*C) any) Key[C] {
	return func(c *C, raw json.RawMessage) error {
		if isNull(raw) {
			return fmt.Errorf("value null is not supported")
		}
		return json.Unmarshal(raw, p(c))
	}
}

// Into reads a key into a typed field; null keeps the default (for keys
// whose None in the reference library means its default).
func Into[C, T any](p func(*C) *T) Key[C] {
	return func(c *C, raw json.RawMessage) error { return json.Unmarshal(raw, p(c)) }
}

// NullableInt reads an int key where null means 0 (Python's None).
func NullableInt[C any](p func(*C) *int) Key[C] {
	return func(c *C, raw json.RawMessage) error {
		var v *int
		if err := json.Unmarshal(raw, &v); err != nil {
			return err
		}
		*p(c) = 0
		if v != nil {
			*p(c) = *v
		}
		return nil
	}
}

// Optional reads a key into the field p points at; null (Python's None
// for "not set") leaves the default in place, whatever the field's type.
func Optional[C any](p func(*C) any) Key[C] {
	return func(c *C, raw json.RawMessage) error {
		if isNull(raw) {
			return nil
		}
		return json.Unmarshal(raw, p(c))
	}
}

// Tagged returns a key for every field of C tagged `json:"name"`, read by
// read (Field, or Optional where null means the default), together with
// extra: the keys with rules of their own (accepted only at some values,
// aliases, ignored, or read into untagged fields). The struct tags are the
// one place a config's spelling is written, so a field and its key cannot
// drift apart. A name both tagged and in extra panics: each key has one
// reader.
func Tagged[C any](read func(p func(*C) any) Key[C], extra map[string]Key[C]) map[string]Key[C] {
	t := reflect.TypeFor[C]()
	keys := make(map[string]Key[C], t.NumField()+len(extra))
	for _, f := range reflect.VisibleFields(t) {
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "" || name == "-" || !f.IsExported() {
			continue
		}
		index := f.Index
		keys[name] = read(func(c *C) any { return reflect.ValueOf(c).Elem().FieldByIndex(index).Addr().Interface() })
	}
	for k, r := range extra {
		if _, dup := keys[k]; dup {
			panic(fmt.Sprintf("strictconfig: key %q is both a tagged field of %s and an extra key", k, t))
		}
		keys[k] = r
	}
	return keys
}

// Within lifts the named keys of an inner config's keys onto an outer
// config C whose field p points at the inner one (a legacy spelling that
// puts a nested config's keys at the top level).
func Within[C, I any](p func(*C) *I, inner map[string]Key[I], names ...string) map[string]Key[C] {
	keys := make(map[string]Key[C], len(names))
	for _, k := range names {
		read, ok := inner[k]
		if !ok {
			panic(fmt.Sprintf("strictconfig: Within: no inner key %q", k))
		}
		keys[k] = func(c *C, raw json.RawMessage) error { return read(p(c), raw) }
	}
	return keys
}

// Only accepts a key at the values webtensor implements, given as JSON
// literals (`"silu"`, `false`, `null`).
func Only[C any](want ...string) Key[C] {
	return func(_ *C, raw json.RawMessage) error { return OnlyValue(raw, want...) }
}

// OnlyValue is Only's check of one raw value.
func OnlyValue(raw json.RawMessage, want ...string) error {
	got := string(bytes.TrimSpace(raw))
	if slices.Contains(want, got) {
		return nil
	}
	return fmt.Errorf("value %s is not supported (supported: %s)", got, strings.Join(want, ", "))
}

// Ignore accepts any value: a key that does not change what webtensor
// computes (bookkeeping, training-only switches).
func Ignore[C any](*C, json.RawMessage) error { return nil }

// Parse reads data's keys into c in sorted order (so the first bad key is
// the same every time). A key missing from keys fails as `unknown key "k"`
// unless skip (which may be nil) accepts it; a refused value fails as
// `key "k": why`. Callers prefix the model's name.
func Parse[C any](data []byte, c *C, keys map[string]Key[C], skip func(key string) bool) error {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(data, &raw); err != nil {
		return err
	}
	names := make([]string, 0, len(raw))
	for k := range raw {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		read, ok := keys[k]
		if !ok {
			if skip != nil && skip(k) {
				continue
			}
			return fmt.Errorf("unknown key %q", k)
		}
		if err := read(c, raw[k]); err != nil {
			return fmt.Errorf("key %q: %w", k, err)
		}
	}
	return nil
}

func isNull(raw json.RawMessage) bool { return string(bytes.TrimSpace(raw)) == "null" }
