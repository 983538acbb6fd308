package auto

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"sync"
)

// Setting is one knob an agent may turn: the CPU backend's thread count,
// whether a graph runs fused, how one layer's weights are stored. Values
// are strings from a fixed list of choices, so a policy can only pick among
// what the host offers.
type Setting struct {
	Name    string
	Doc     string
	Choices []string
	Get     func() string
	Set     func(value string) error
	// Default, when set, is the value the setting's owner chose before any
	// agent touched it (a loader's worker count as the user wrote it).
	// Snapshots leave out a setting at its Default, and restoring a
	// snapshot that lacks it puts it back to Default, so a setting
	// registered after earlier decisions (a loader tuned later in the
	// process) neither changes their state hash nor escapes their rollback.
	Default string
}

// Settings is the set of knobs a framework may change; as a Component its
// snapshot is every setting's current value.
type Settings struct {
	mu sync.Mutex
	by map[string]*Setting
}

// NewSettings makes an empty set.
func NewSettings() *Settings { return &Settings{by: map[string]*Setting{}} }

// Add registers s; a name may be registered once.
func (ss *Settings) Add(s Setting) error {
	if s.Name == "" || s.Get == nil || s.Set == nil || len(s.Choices) == 0 {
		return fmt.Errorf("auto: setting %q needs a name, Get, Set and choices", s.Name)
	}
	if s.Default != "" && !slices.Contains(s.Choices, s.Default) {
		return fmt.Errorf("auto: setting %q has default %q, not one of its choices %v", s.Name, s.Default, s.Choices)
	}
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if _, ok := ss.by[s.Name]; ok {
		return fmt.Errorf("auto: setting %q is already registered", s.Name)
	}
	ss.by[s.Name] = &s
	return nil
}

// Has is whether a setting is registered under name.
func (ss *Settings) Has(name string) bool {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	_, ok := ss.by[name]
	return ok
}

// Info describes the settings named (all when none are), in name order.
func (ss *Settings) Info(names ...string) []SettingInfo {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if len(names) == 0 {
		names = keys(ss.by)
	}
	var out []SettingInfo
	for _, n := range names {
		if s, ok := ss.by[n]; ok {
			out = append(out, SettingInfo{Name: n, Doc: s.Doc, Current: s.Get(), Choices: slices.Clone(s.Choices)})
		}
	}
	return out
}

// Current is the value of each named setting.
func (ss *Settings) Current(names []string) (map[string]string, error) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	out := map[string]string{}
	for _, n := range names {
		s, ok := ss.by[n]
		if !ok {
			return nil, fmt.Errorf("auto: no setting %q (have %v)", n, keys(ss.by))
		}
		out[n] = s.Get()
	}
	return out, nil
}

// Check says whether change names known settings with offered values.
func (ss *Settings) Check(change map[string]string) error {
	if len(change) == 0 {
		return fmt.Errorf("auto: the proposal changes nothing")
	}
	ss.mu.Lock()
	defer ss.mu.Unlock()
	for _, n := range keys(change) {
		s, ok := ss.by[n]
		if !ok {
			return fmt.Errorf("auto: no setting %q (have %v)", n, keys(ss.by))
		}
		if !slices.Contains(s.Choices, change[n]) {
			return fmt.Errorf("auto: setting %s has no choice %q (choices: %v)", n, change[n], s.Choices)
		}
	}
	return nil
}

// Apply sets every value of change, in name order so the result does not
// depend on map order.
func (ss *Settings) Apply(change map[string]string) error {
	for _, n := range keys(change) {
		ss.mu.Lock()
		s, ok := ss.by[n]
		ss.mu.Unlock()
		if !ok {
			return fmt.Errorf("auto: no setting %q", n)
		}
		if err := s.Set(change[n]); err != nil {
			return fmt.Errorf("auto: setting %s=%s: %w", n, change[n], err)
		}
	}
	return nil
}

// Name is the component's name in snapshots.
func (*Settings) Name() string { return "settings" }

// Snapshot is the JSON object of every setting's value, less those at
// their Default (keys sorted by encoding/json, so equal settings give
// equal bytes).
func (ss *Settings) Snapshot() ([]byte, error) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	m := map[string]string{}
	for n, s := range ss.by {
		if v := s.Get(); s.Default == "" || v != s.Default {
			m[n] = v
		}
	}
	return json.Marshal(m)
}

// Restore sets every setting back, and those with a Default the snapshot
// lacks to it. A value for a setting not registered here is an error: the
// state would not be the one snapshotted.
func (ss *Settings) Restore(data []byte) error {
	var m map[string]string
	if err := json.Unmarshal(data, &m); err != nil {
		return fmt.Errorf("settings snapshot %.100q: %w", data, err)
	}
	ss.mu.Lock()
	var missing []string
	for n := range m {
		if _, ok := ss.by[n]; !ok {
			missing = append(missing, n)
		}
	}
	all := map[string]string{}
	for n, s := range ss.by {
		if _, ok := m[n]; !ok && s.Default != "" {
			all[n] = s.Default
		}
	}
	ss.mu.Unlock()
	if len(missing) > 0 {
		sort.Strings(missing)
		return fmt.Errorf("snapshot sets %v, which are not registered in this process (tune or register what owns them, under the same name, first)", missing)
	}
	for n, v := range m {
		all[n] = v
	}
	return ss.Apply(all)
}
