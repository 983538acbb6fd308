package auto

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"sync"
)

// Component is one part of the state agents may change - the settings in
// force, the kernel cache on disk, a model's weights - that can be copied
// out byte for byte and put back. The bytes are what the state hash covers,
// so two states hash alike only when every component is identical.
type Component interface {
	Name() string
	Snapshot() ([]byte, error)
	Restore(data []byte) error
}

// Snapshot is every component's bytes, by component name.
type Snapshot map[string][]byte

// Hash is the SHA-256 of the components in name order, each as its name,
// its length and its bytes, so no two different snapshots collide by
// concatenation.
func (s Snapshot) Hash() string {
	names := make([]string, 0, len(s))
	for n := range s {
		names = append(names, n)
	}
	sort.Strings(names)
	h := sha256.New()
	var n [8]byte
	for _, name := range names {
		binary.LittleEndian.PutUint64(n[:], uint64(len(name)))
		h.Write(n[:])
		h.Write([]byte(name))
		binary.LittleEndian.PutUint64(n[:], uint64(len(s[name])))
		h.Write(n[:])
		h.Write(s[name])
	}
	return hex.EncodeToString(h.Sum(nil))
}

// State is the set of components a framework watches.
type State struct {
	mu    sync.Mutex
	comps []Component
}

// Add registers c; a second component of the same name is an error, since
// snapshots are keyed by name.
func (s *State) Add(c Component) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, o := range s.comps {
		if o.Name() == c.Name() {
			return fmt.Errorf("auto: state already has a component named %q", c.Name())
		}
	}
	s.comps = append(s.comps, c)
	return nil
}

// Names lists the registered components.
func (s *State) Names() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]string, len(s.comps))
	for i, c := range s.comps {
		out[i] = c.Name()
	}
	return out
}

// Snapshot copies every component.
func (s *State) Snapshot() (Snapshot, error) {
	s.mu.Lock()
	comps := slices.Clone(s.comps)
	s.mu.Unlock()
	out := Snapshot{}
	for _, c := range comps {
		b, err := c.Snapshot()
		if err != nil {
			return nil, fmt.Errorf("auto: snapshot of %s: %w", c.Name(), err)
		}
		out[c.Name()] = b
	}
	return out, nil
}

// Restore puts every component of snap back. A snapshot naming a component
// this state lacks (a model's weights, rolled back in another process) is
// an error naming it, and nothing is restored: a partial restore would not
// be the earlier state.
func (s *State) Restore(snap Snapshot) error {
	s.mu.Lock()
	comps := slices.Clone(s.comps)
	s.mu.Unlock()
	have := map[string]bool{}
	for _, c := range comps {
		have[c.Name()] = true
		if _, ok := snap[c.Name()]; !ok {
			return fmt.Errorf("auto: the snapshot has no %s component (it holds %v)", c.Name(), keys(snap))
		}
	}
	for name := range snap {
		if !have[name] {
			return fmt.Errorf("auto: the snapshot holds %s, which is not registered in this process (it has %v)", name, s.Names())
		}
	}
	for _, c := range comps {
		if err := c.Restore(snap[c.Name()]); err != nil {
			return fmt.Errorf("auto: restoring %s: %w", c.Name(), err)
		}
	}
	return nil
}

func keys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// FileComponent is a file's bytes, or its absence: the kernel cache on
// disk. A restore writes the old bytes back through a temporary file and a
// rename, so a crash leaves either version, never half of one.
type FileComponent struct {
	Label string
	Path  string
}

// Name is the component's name in snapshots.
func (f FileComponent) Name() string { return f.Label }

// Snapshot is 0 for an absent file, else 1 followed by its bytes.
func (f FileComponent) Snapshot() ([]byte, error) {
	b, err := os.ReadFile(f.Path)
	if errors.Is(err, os.ErrNotExist) {
		return []byte{0}, nil
	}
	if err != nil {
		return nil, err
	}
	return append([]byte{1}, b...), nil
}

// Restore writes the file back, or removes it when it was absent.
func (f FileComponent) Restore(data []byte) error {
	if len(data) == 0 {
		return fmt.Errorf("file snapshot of %s is empty (want a presence byte)", f.Path)
	}
	if data[0] == 0 {
		if err := os.Remove(f.Path); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
		return nil
	}
	return writeAtomic(f.Path, data[1:])
}

func writeAtomic(path string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".tmp-"+filepath.Base(path)+"-*")
	if err != nil {
		return err
	}
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return err
	}
	if err := tmp.Close(); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// encodeSnapshot and decodeSnapshot store a snapshot on disk as JSON
// (bytes in base64): small states, readable keys.
func encodeSnapshot(s Snapshot) ([]byte, error) { return json.Marshal(map[string][]byte(s)) }

func decodeSnapshot(b []byte) (Snapshot, error) {
	var m map[string][]byte
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, err
	}
	return Snapshot(m), nil
}
