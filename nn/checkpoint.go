package nn

import (
	"fmt"
	"sort"
	"strings"

	"github.com/webtensor/webtensor/core"
	"github.com/webtensor/webtensor/core/safetensors"
)

// Checkpoints are safetensors files keyed by state-dict names, so
// safetensors.torch.load_file(path) followed by torch's load_state_dict
// restores the same weights into the equivalent torch module, and files
// written by torch load here.

// Save writes m's state dict to path. The file is written to a temporary
// file in the same directory, synced and renamed into place, so a failed
// save never replaces a good file.
func Save(path string, m Module) error {
	tensors := map[string]safetensors.Tensor{}
	for _, s := range m.StateDict() {
		t, err := safetensors.FromTensor(s.Value.Tensor())
		if err != nil {
			return fmt.Errorf("nn: save %s: %s: %w", path, s.Name, err)
		}
		tensors[s.Name] = t
	}
	if err := safetensors.WriteFile(path, tensors, map[string]string{"format": "pt"}); err != nil {
		return fmt.Errorf("nn: save %s: %w", path, err)
	}
	return nil
}

// Load reads a checkpoint written by Save (or by torch with safetensors)
// into m. Every name, shape and dtype must match m's state dict; otherwise
// nothing is loaded and the error lists every mismatch. Values go to the
// device each parameter or buffer already lives on.
func Load(path string, m Module) error {
	f, err := safetensors.ReadFile(path)
	if err != nil {
		return fmt.Errorf("nn: load: %w", err)
	}
	if err := LoadStateDict(m, f.Tensors); err != nil {
		return fmt.Errorf("nn: load %s: %w", path, err)
	}
	return nil
}

// LoadStateDict sets m's state from named tensors, with the checks of Load.
func LoadStateDict(m Module, tensors map[string]safetensors.Tensor) error {
	state := m.StateDict()
	if err := checkStateDict(state, tensors); err != nil {
		return err
	}
	values := make([]*core.Tensor, len(state))
	for i, s := range state {
		values[i] = tensors[s.Name].ToTensor(s.Value.Tensor().Device())
		if err := values[i].Err(); err != nil {
			return fmt.Errorf("%s: %w", s.Name, err)
		}
	}
	for i, s := range state {
		if err := s.Value.Set(values[i]); err != nil {
			return fmt.Errorf("%s: %w", s.Name, err)
		}
	}
	return nil
}

// checkStateDict lists every missing, unexpected and mismatched entry.
func checkStateDict(state []NamedState, tensors map[string]safetensors.Tensor) error {
	var problems, missing []string
	want := make(map[string]bool, len(state))
	for _, s := range state {
		want[s.Name] = true
		got, ok := tensors[s.Name]
		if !ok {
			missing = append(missing, s.Name)
			continue
		}
		t := s.Value.Tensor()
		if err := t.Err(); err != nil {
			problems = append(problems, fmt.Sprintf("%s: module value: %v", s.Name, err))
			continue
		}
		if !got.Shape.Equal(t.Shape()) {
			problems = append(problems, fmt.Sprintf("%s: shape %v in file, %v in module", s.Name, got.Shape, t.Shape()))
		}
		if got.DType != t.DType() {
			problems = append(problems, fmt.Sprintf("%s: dtype %s in file, %s in module", s.Name, got.DType, t.DType()))
		}
	}
	var unexpected []string
	for name := range tensors {
		if !want[name] {
			unexpected = append(unexpected, name)
		}
	}
	sort.Strings(unexpected)
	if len(missing) > 0 {
		problems = append(problems, "missing from file: "+strings.Join(missing, ", "))
	}
	if len(unexpected) > 0 {
		problems = append(problems, "not in module: "+strings.Join(unexpected, ", "))
	}
	if len(problems) == 0 {
		return nil
	}
	return fmt.Errorf("state dict does not match the module (%d problem(s)):\n  %s", len(problems), strings.Join(problems, "\n  "))
}
