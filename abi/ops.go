package abi

import (
	"encoding/json"
	"strings"

	"github.com/webtensor/webtensor/core"
)

// Op is wt_op: it calls the registry op name on the input handles (0 for
// an absent optional input) with the decoded attributes. name may view the
// caller's memory (capi passes the C string as is): it is not kept. The
// outputs get handles only when the caller registers them.
func Op(name string, inputHandles []int64, attrs AttrList, noGrad bool) (Outputs, error) {
	in, err := resolveInputs(inputHandles)
	if err != nil {
		return Outputs{}, Prefix(err, "%s", name)
	}
	a, err := decodeAttrs(attrs)
	if err != nil {
		return Outputs{}, Prefix(err, "%s", name)
	}
	def, found := core.LookupOp(name)
	if !found { // core.Call says why, with suggestions; it may keep the name, so copy it
		_, err := core.Call(strings.Clone(name), in.ts, a)
		return Outputs{}, err
	}
	outs, err := core.CallDef(def, detachedIf(noGrad, in.ts), a)
	if err != nil {
		return Outputs{}, err
	}
	return Outputs{ts: outs, readOnly: in.readOnly}, nil
}

// ManifestJSON is wt_manifest_json: every op, its inputs, attributes,
// dtypes and backends.
func ManifestJSON() (string, error) {
	m, err := json.Marshal(core.BuildManifest())
	return string(m), err
}

// TensorSetRequiresGrad is wt_tensor_set_requires_grad.
func TensorSetRequiresGrad(h int64, on bool) error {
	t, err := TensorOf(h)
	if err != nil {
		return err
	}
	return t.SetRequiresGrad(on).Err()
}

// TensorRequiresGrad is wt_tensor_requires_grad.
func TensorRequiresGrad(h int64) (bool, error) {
	t, err := TensorOf(h)
	if err != nil {
		return false, err
	}
	return t.RequiresGrad(), nil
}

// Backward is wt_backward: grad is the gradient of h, or 0 for none (h
// then holds one element).
func Backward(h, grad int64) error {
	t, err := TensorOf(h)
	if err != nil {
		return err
	}
	if grad == 0 {
		return t.Backward()
	}
	g, err := TensorOf(grad)
	if err != nil {
		return Prefix(err, "wt_backward: gradient")
	}
	return t.Backward(g)
}

// TensorGrad is wt_tensor_grad: a new handle of the accumulated gradient,
// or 0 when there is none.
func TensorGrad(h int64) (int64, error) {
	t, err := TensorOf(h)
	if err != nil {
		return 0, err
	}
	g := t.Grad()
	if g == nil {
		return 0, nil
	}
	return NewOutput(g)
}

// TensorZeroGrad is wt_tensor_zero_grad.
func TensorZeroGrad(h int64) error {
	t, err := TensorOf(h)
	if err != nil {
		return err
	}
	t.ZeroGrad()
	return nil
}

// TensorDetach is wt_tensor_detach: it shares the data, so a read-only
// import stays read-only.
func TensorDetach(h int64) (int64, error) {
	t, readOnly, err := Lookup(h)
	if err != nil {
		return 0, err
	}
	return NewHandle(t.Detach(), readOnly), nil
}
