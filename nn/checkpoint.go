package nn

import (
	"fmt"
	"sort"
	"strconv"
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
	mine := make([]NamedTensor, len(state))
	for i, s := range state {
		mine[i] = NamedTensor{Name: s.Name, Tensor: s.Value.Tensor()}
	}
	given := make([]StateEntry, 0, len(tensors))
	for name, t := range tensors {
		given = append(given, StateEntry{Name: name, Shape: t.Shape, DType: t.DType})
	}
	if err := MatchStateDict(mine, given, "module", "file", true); err != nil {
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

// NamedTensor is a tensor under its state-dict name.
type NamedTensor struct {
	Name   string
	Tensor *core.Tensor
}

// StateEntry is what MatchStateDict compares of a given value: its name,
// shape and dtype.
type StateEntry struct {
	Name  string
	Shape core.Shape
	DType core.DType
}

// MatchStateDict checks given values against a module's state as every
// loader does (nn.Load here, load_state_dict in each SDK through the ABI)
// and lists every problem in one error: names whose shape or dtype
// differs, then, when strict, the names missing from the values and the
// names the module does not have. module and source name the two sides
// in the message ("the Sequential", "state dict" or "file").
func MatchStateDict(state []NamedTensor, given []StateEntry, module, source string, strict bool) error {
	byName := make(map[string]StateEntry, len(given))
	for _, g := range given {
		byName[g.Name] = g
	}
	var problems, missing []string
	want := make(map[string]bool, len(state))
	for _, s := range state {
		want[s.Name] = true
		got, ok := byName[s.Name]
		if !ok {
			missing = append(missing, s.Name)
			continue
		}
		t := s.Tensor
		if err := t.Err(); err != nil {
			problems = append(problems, fmt.Sprintf("%s: module value: %v", s.Name, err))
			continue
		}
		if !got.Shape.Equal(t.Shape()) {
			problems = append(problems, fmt.Sprintf("%s: shape %s in %s, %s in module", s.Name, shapeList(got.Shape), source, shapeList(t.Shape())))
		}
		if got.DType != t.DType() {
			problems = append(problems, fmt.Sprintf("%s: dtype %s in %s, %s in module", s.Name, got.DType, source, t.DType()))
		}
	}
	var unexpected []string
	for name := range byName {
		if !want[name] {
			unexpected = append(unexpected, name)
		}
	}
	sort.Strings(unexpected)
	if strict && len(missing) > 0 {
		problems = append(problems, "missing from "+source+": "+strings.Join(missing, ", "))
	}
	if strict && len(unexpected) > 0 {
		problems = append(problems, "not in module: "+strings.Join(unexpected, ", "))
	}
	if len(problems) == 0 {
		return nil
	}
	return fmt.Errorf("the %s does not match the %s (%d problem(s)):\n  %s", source, module, len(problems), strings.Join(problems, "\n  "))
}

// shapeList writes a shape as every SDK prints one: [4, 3].
func shapeList(s core.Shape) string {
	parts := make([]string, len(s))
	for i, d := range s {
		parts[i] = strconv.Itoa(d)
	}
	return "[" + strings.Join(parts, ", ") + "]"
}
