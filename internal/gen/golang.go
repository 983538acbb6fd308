package main

import (
	"bytes"
	"fmt"
	"go/format"
	"strings"
)

// goHandWritten are Tensor methods and package functions that core defines
// by hand (accessors, and conveniences core itself relies on).
var goHandWritten = map[string]bool{
	"Shape": true, "Strides": true, "Offset": true, "DType": true, "Rank": true, "Numel": true,
	"Storage": true, "Backend": true, "Device": true, "Meta": true, "IsContiguous": true, "String": true,
	"Release": true, "Bytes": true, "Float64s": true, "Float32s": true, "Int64s": true, "Item": true,
	"To": true, "Err": true, "RequiresGrad": true, "SetRequiresGrad": true, "IsLeaf": true, "Grad": true,
	"SetGrad": true, "ZeroGrad": true, "Detach": true, "Backward": true,
	"Contiguous": true, "Cast": true, "Reshape": true, "Add": true,
	"Zeros": true, "Ones": true, "Full": true, "ZerosLike": true, "OnesLike": true,
}

var goInitialisms = map[string]string{"fft": "FFT", "ifft": "IFFT", "rfft": "RFFT", "irfft": "IRFFT",
	"fftn": "FFTN", "ifftn": "IFFTN", "rfftn": "RFFTN", "irfftn": "IRFFTN", "hfft": "HFFT", "ihfft": "IHFFT",
	"fftfreq": "FFTFreq", "rfftfreq": "RFFTFreq", "fftshift": "FFTShift", "ifftshift": "IFFTShift",
	"spmm": "SpMM", "sddmm": "SDDMM", "nll": "NLL", "mse": "MSE", "rms": "RMS", "l1": "L1", "elu": "ELU",
	"gelu": "GELU", "silu": "SiLU", "relu": "ReLU", "nan": "NaN"}

// goName turns an op name into an exported Go identifier.
func goName(op string) string {
	var b strings.Builder
	for _, part := range strings.Split(op, "_") {
		if part == "" {
			continue
		}
		if s, ok := goInitialisms[part]; ok {
			b.WriteString(s)
			continue
		}
		b.WriteString(strings.ToUpper(part[:1]) + part[1:])
	}
	return b.String()
}

func goParam(name string) string {
	switch name {
	case "type", "func", "range", "map", "var", "len":
		return name + "_"
	}
	return name
}

// goMethods writes core/methods_gen.go: one typed Go function or Tensor
// method per public op, so Go users call x.Softmax(...) rather than
// Call("softmax", ...).
func goMethods(r *registry) ([]file, error) {
	var b bytes.Buffer
	b.WriteString("// " + header + "\n\npackage core\n\n")
	for _, d := range r.all {
		if d.Internal {
			continue
		}
		name := goName(d.Name)
		if goHandWritten[name] {
			continue
		}
		multi := multiOutput(d)
		ret, body := "*Tensor", "return Call1(%q, mergeAttrs(attrs), %s)"
		if multi {
			ret, body = "([]*Tensor, error)", "return Call(%q, []*Tensor{%s}, mergeAttrs(attrs))"
		}
		var params, args []string
		receiver := ""
		for i, in := range d.Inputs {
			p := goParam(in.Name)
			switch {
			case in.Variadic:
				params = append(params, p+" []*Tensor")
				args = append(args, p+"...")
			case i == 0:
				receiver = p
				args = append(args, p)
			default:
				params = append(params, p+" *Tensor")
				args = append(args, p)
			}
		}
		params = append(params, "attrs ...Attrs")
		argList := strings.Join(args, ", ")
		if len(d.Inputs) > 0 && d.Inputs[len(d.Inputs)-1].Variadic {
			// Variadic ops take the tensors as one slice.
			fixed := args[:len(args)-1]
			v := strings.TrimSuffix(args[len(args)-1], "...")
			argList = fmt.Sprintf("append([]*Tensor{%s}, %s...)...", strings.Join(fixed, ", "), v)
			if multi {
				body = "return Call(%q, %s, mergeAttrs(attrs))"
			}
			if len(fixed) == 0 {
				argList = v + "..."
				if multi {
					argList = v
				}
			}
		}
		doc := fmt.Sprintf("// %s: %s", name, d.Doc)
		if len(d.Attrs) > 0 {
			names := make([]string, len(d.Attrs))
			for i, a := range d.Attrs {
				names[i] = a.Name
			}
			doc += "\n// Attributes: " + strings.Join(names, ", ") + "."
		}
		b.WriteString(doc + "\n")
		if receiver != "" {
			fmt.Fprintf(&b, "func (%s *Tensor) %s(%s) %s {\n", receiver, name, strings.Join(params, ", "), ret)
		} else {
			fmt.Fprintf(&b, "func %s(%s) %s {\n", name, strings.Join(params, ", "), ret)
		}
		fmt.Fprintf(&b, "\t"+body+"\n}\n\n", d.Name, argList)
	}
	src, err := format.Source(b.Bytes())
	if err != nil {
		return nil, err
	}
	return []file{{"core/methods_gen.go", src}}, nil
}
