package data

import (
	"archive/zip"
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"github.com/webtensor/webtensor/core"
)

// NumPy's .npy format (numpy.lib.format, versions 1 to 3): a magic string,
// a header that is a Python dict literal (descr, fortran_order, shape),
// then the elements. .npz is a zip archive of .npy members.

var npyMagic = []byte("\x93NUMPY")

// npyDTypes are the descr strings webtensor reads: little-endian (or
// byte-order free) numbers of the dtypes core has.
var npyDTypes = map[string]core.DType{
	"<f8": core.F64, "<f4": core.F32, "<f2": core.F16, "<i8": core.I64, "<i4": core.I32,
	"<u4": core.U32, "<i2": core.I16, "|i1": core.I8, "|u1": core.U8, "|b1": core.Bool,
	"<u2": core.U16, "<u8": core.U64,
}

var (
	npyDescr   = regexp.MustCompile(`'descr'\s*:\s*'([^']*)'`)
	npyFortran = regexp.MustCompile(`'fortran_order'\s*:\s*(True|False)`)
	npyShape   = regexp.MustCompile(`'shape'\s*:\s*\(([^)]*)\)`)
)

// parseNPY reads one .npy file's bytes into a column named name; source
// names the file in errors.
func parseNPY(source, name string, raw []byte) (column, error) {
	fail := func(format string, args ...any) (column, error) {
		return column{}, fmt.Errorf("%s: not a .npy file NumPy wrote: "+format, append([]any{source}, args...)...)
	}
	if len(raw) < 10 || !bytes.Equal(raw[:6], npyMagic) {
		return fail("no \\x93NUMPY magic at the start")
	}
	var hlen, start int
	switch raw[6] {
	case 1:
		hlen, start = int(binary.LittleEndian.Uint16(raw[8:10])), 10
	case 2, 3:
		if len(raw) < 12 {
			return fail("truncated header")
		}
		hlen, start = int(binary.LittleEndian.Uint32(raw[8:12])), 12
	default:
		return fail("format version %d.%d (webtensor reads 1 to 3)", raw[6], raw[7])
	}
	if hlen > len(raw)-start {
		return fail("the header says %d bytes, the file has %d after the prefix", hlen, len(raw)-start)
	}
	header := string(raw[start : start+hlen])
	d := npyDescr.FindStringSubmatch(header)
	f := npyFortran.FindStringSubmatch(header)
	s := npyShape.FindStringSubmatch(header)
	if d == nil || f == nil || s == nil {
		return fail("header %q lacks descr, fortran_order or shape", clipText(header))
	}
	dtype, ok := npyDTypes[d[1]]
	if !ok {
		return column{}, fmt.Errorf("%s: dtype %q is not one webtensor reads (little-endian f8 f4 f2 i8 i4 u8 u4 u2 i2 i1 u1 b1)", source, d[1])
	}
	var shape core.Shape
	for _, part := range strings.Split(s[1], ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		n, err := strconv.Atoi(part)
		if err != nil || n < 0 {
			return fail("shape (%s) has a dim %q that is not a size", s[1], part)
		}
		shape = append(shape, n)
	}
	if f[1] == "True" && len(shape) > 1 {
		return column{}, fmt.Errorf("%s: Fortran-ordered (column-major) arrays are not read: save with np.ascontiguousarray", source)
	}
	body := raw[start+hlen:]
	if want := shape.Numel() * dtype.Size(); len(body) != want {
		return column{}, fmt.Errorf("%s: shape %v of %s needs %d bytes of data, the file has %d", source, shape, dtype, want, len(body))
	}
	return column{name: name, dtype: dtype, shape: shape, data: body}, nil
}

func clipText(s string) string {
	if len(s) > 120 {
		return s[:120] + "..."
	}
	return s
}

// stem is a file's name without folder and extension: a .npy file's
// field name.
func stem(path string) string {
	b := filepath.Base(path)
	return strings.TrimSuffix(b, filepath.Ext(b))
}

// NPY reads .npy files, one field per file named by the file's stem
// (x.npy is field "x"); record i is row i of every file. The files are
// read into memory whole.
func NPY(paths ...string) (Dataset, error) {
	if len(paths) == 0 {
		return nil, fmt.Errorf("data: NPY needs at least one .npy file")
	}
	cols := make([]column, len(paths))
	for i, p := range paths {
		raw, err := os.ReadFile(p)
		if err != nil {
			return nil, err
		}
		if cols[i], err = parseNPY(p, stem(p), raw); err != nil {
			return nil, err
		}
	}
	return newArrays(strings.Join(paths, ", "), cols)
}

// NPYBytes is NPY over one file's bytes, the field named name.
func NPYBytes(name string, raw []byte) (Dataset, error) {
	c, err := parseNPY(name, name, raw)
	if err != nil {
		return nil, err
	}
	return newArrays(name, []column{c})
}

// NPZ reads the arrays keys of a .npz archive (np.savez's, compressed or
// not), in that order; no keys means every array, in archive order.
func NPZ(path string, keys ...string) (Dataset, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return NPZBytes(path, raw, keys...)
}

// NPZBytes is NPZ over the archive's bytes; source names it in errors.
func NPZBytes(source string, raw []byte, keys ...string) (Dataset, error) {
	zr, err := zip.NewReader(bytes.NewReader(raw), int64(len(raw)))
	if err != nil {
		return nil, fmt.Errorf("%s: not a .npz (zip) archive: %w", source, err)
	}
	members := map[string]*zip.File{}
	var order []string
	for _, f := range zr.File {
		key := strings.TrimSuffix(f.Name, ".npy")
		members[key] = f
		order = append(order, key)
	}
	if len(keys) == 0 {
		keys = order
	}
	cols := make([]column, len(keys))
	for i, k := range keys {
		f, ok := members[k]
		if !ok {
			return nil, fmt.Errorf("%s: no array %q (the archive has %s)", source, k, strings.Join(order, ", "))
		}
		rc, err := f.Open()
		if err != nil {
			return nil, fmt.Errorf("%s: array %q: %w", source, k, err)
		}
		body, err := io.ReadAll(rc)
		rc.Close()
		if err != nil {
			return nil, fmt.Errorf("%s: array %q: %w", source, k, err)
		}
		if cols[i], err = parseNPY(source+":"+f.Name, k, body); err != nil {
			return nil, err
		}
	}
	return newArrays(source, cols)
}
