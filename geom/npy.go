package geom

import (
	"archive/zip"
	"encoding/binary"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"

	"github.com/webtensor/webtensor/core"
)

// NumPy's .npy format (versions 1-3) and .npz archives of them, for loading
// graphs saved from Python (np.savez). Little-endian, C order; the dtypes
// webtensor has.

var npyDTypes = map[string]core.DType{
	"<f4": core.F32, "<f8": core.F64, "<f2": core.F16, "<i8": core.I64, "<i4": core.I32, "<u4": core.U32,
	"<i2": core.I16, "|i1": core.I8, "|u1": core.U8, "|b1": core.Bool,
	"<u2": core.U16, "<u8": core.U64,
}

var (
	npyDescr   = regexp.MustCompile(`'descr':\s*'([^']+)'`)
	npyFortran = regexp.MustCompile(`'fortran_order':\s*(True|False)`)
	npyShape   = regexp.MustCompile(`'shape':\s*\(([^)]*)\)`)
)

// readNPY decodes one .npy file.
func readNPY(r io.Reader, name string, dev ...core.Device) (*core.Tensor, error) {
	var magic [8]byte
	if _, err := io.ReadFull(r, magic[:]); err != nil || string(magic[:6]) != "\x93NUMPY" {
		return nil, fmt.Errorf("%s: not a .npy file", name)
	}
	var hlen int
	switch magic[6] {
	case 1:
		var n uint16
		if err := binary.Read(r, binary.LittleEndian, &n); err != nil {
			return nil, fmt.Errorf("%s: truncated header: %w", name, err)
		}
		hlen = int(n)
	case 2, 3:
		var n uint32
		if err := binary.Read(r, binary.LittleEndian, &n); err != nil {
			return nil, fmt.Errorf("%s: truncated header: %w", name, err)
		}
		hlen = int(n)
	default:
		return nil, fmt.Errorf("%s: .npy version %d is not supported", name, magic[6])
	}
	if hlen > 1<<20 {
		return nil, fmt.Errorf("%s: header of %d bytes is too large", name, hlen)
	}
	head := make([]byte, hlen)
	if _, err := io.ReadFull(r, head); err != nil {
		return nil, fmt.Errorf("%s: truncated header: %w", name, err)
	}
	h := string(head)
	d, f, s := npyDescr.FindStringSubmatch(h), npyFortran.FindStringSubmatch(h), npyShape.FindStringSubmatch(h)
	if d == nil || f == nil || s == nil {
		return nil, fmt.Errorf("%s: unreadable header %q", name, strings.TrimSpace(h))
	}
	dt, ok := npyDTypes[d[1]]
	if !ok {
		return nil, fmt.Errorf("%s: dtype %q is not supported (little-endian floats, ints, unsigned ints, bool)", name, d[1])
	}
	if f[1] == "True" {
		return nil, fmt.Errorf("%s: Fortran-order arrays are not supported; save np.ascontiguousarray(a)", name)
	}
	var shape core.Shape
	for _, p := range strings.Split(s[1], ",") {
		if p = strings.TrimSpace(p); p == "" {
			continue
		}
		n, err := strconv.Atoi(p)
		if err != nil || n < 0 {
			return nil, fmt.Errorf("%s: bad shape %q", name, s[1])
		}
		shape = append(shape, n)
	}
	want := shape.Numel() * dt.Size()
	if want > 1<<34 {
		return nil, fmt.Errorf("%s: %d bytes of data is too large", name, want)
	}
	raw := make([]byte, want)
	if _, err := io.ReadFull(r, raw); err != nil {
		return nil, fmt.Errorf("%s: %d bytes of data expected for shape %v of %s: %w", name, want, shape, dt, err)
	}
	t := core.FromBytes(dt, shape, raw, dev...)
	return t, t.Err()
}

// LoadNPZ reads every array of an .npz archive (np.savez or
// np.savez_compressed) by name, without the ".npy".
func LoadNPZ(path string, dev ...core.Device) (map[string]*core.Tensor, error) {
	z, err := zip.OpenReader(path)
	if err != nil {
		return nil, fmt.Errorf("geom: LoadNPZ: %w", err)
	}
	defer z.Close()
	out := map[string]*core.Tensor{}
	for _, f := range z.File {
		if !strings.HasSuffix(f.Name, ".npy") {
			continue
		}
		rc, err := f.Open()
		if err != nil {
			return nil, fmt.Errorf("geom: LoadNPZ %s: %w", path, err)
		}
		t, err := readNPY(rc, f.Name, dev...)
		rc.Close()
		if err != nil {
			return nil, fmt.Errorf("geom: LoadNPZ %s: %w", path, err)
		}
		out[strings.TrimSuffix(f.Name, ".npy")] = t
	}
	return out, nil
}

// LoadNPZGraph reads a node-classification graph saved as
// np.savez(path, edge_index=[2, E] ints, x=[N, F], y=[N], train_idx=...,
// test_idx=..., edge_weight=[E] optional): PyG's Data fields.
func LoadNPZGraph(path string, dev ...core.Device) (*Dataset, error) {
	arr, err := LoadNPZ(path)
	if err != nil {
		return nil, err
	}
	for _, k := range []string{"edge_index", "x"} {
		if arr[k] == nil {
			return nil, fmt.Errorf("geom: LoadNPZGraph %s: no array %q (need edge_index and x; y, train_idx, test_idx optional)", path, k)
		}
	}
	x := arr["x"]
	if len(x.Shape()) != 2 {
		return nil, fmt.Errorf("geom: LoadNPZGraph %s: x has shape %v, want [N, F]", path, x.Shape())
	}
	g, err := FromEdgeIndex(x.Shape()[0], arr["edge_index"], arr["edge_weight"], dev...)
	if err != nil {
		return nil, fmt.Errorf("geom: LoadNPZGraph %s: %w", path, err)
	}
	d := &Dataset{Graph: g, X: castTo(x, core.F32).To(devOr(dev))}
	toI64 := func(t *core.Tensor) *core.Tensor {
		if t == nil {
			return nil
		}
		return castTo(t, core.I64).To(devOr(dev))
	}
	d.Y, d.Train, d.Test = toI64(arr["y"]), toI64(arr["train_idx"]), toI64(arr["test_idx"])
	if d.Y != nil {
		ys, err := castTo(arr["y"], core.I64).Int64s()
		if err != nil {
			return nil, err
		}
		for _, v := range ys {
			d.NumClasses = max(d.NumClasses, int(v)+1)
		}
	}
	return d, firstErr(d.X, d.Y, d.Train, d.Test)
}

func devOr(dev []core.Device) core.Device {
	if len(dev) > 0 {
		return dev[0]
	}
	return core.DefaultDevice()
}
