package data

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"strings"

	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/schema"

	"github.com/webtensor/webtensor/core"
)

// Parquet columns become fields through Apache Arrow's Go module (its
// parquet/file reader; the Arrow-table layer, pqarrow, would bring gRPC
// into every build of the library): a column of numbers is a scalar
// field, a list column whose rows all have one length a vector field.
// The file is read into memory whole; nulls are refused, a tensor having
// no missing values.

// Parquet reads the columns of a Parquet file (default: all, in schema
// order), a record being a row.
func Parquet(path string, columns ...string) (Dataset, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return readParquet(path, f, columns)
}

// ParquetBytes is Parquet over the file's bytes; source names it in errors.
func ParquetBytes(source string, raw []byte, columns ...string) (Dataset, error) {
	return readParquet(source, bytes.NewReader(raw), columns)
}

func readParquet(source string, r parquet.ReaderAtSeeker, columns []string) (ds Dataset, err error) {
	// Arrow's reader trusts the file's metadata in places (a schema's
	// element count sizes a slice before any is read), so a corrupt or
	// hostile file can panic inside it. The whole file is read here, at
	// open, never in a loader's worker, so one recover turns every such
	// failure into this open's error rather than a crashed process.
	defer func() {
		if p := recover(); p != nil {
			ds, err = nil, fmt.Errorf("%s: not a Parquet file webtensor can read (the reader failed: %v)", source, p)
		}
	}()
	pf, err := file.NewParquetReader(r)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", source, err)
	}
	defer pf.Close()
	sc := pf.MetaData().Schema
	leaves := map[string][]int{} // a top-level column's leaves: one for numbers and lists of them
	var names []string
	for i := 0; i < sc.NumColumns(); i++ {
		top := sc.Column(i).ColumnPath()[0]
		if _, seen := leaves[top]; !seen {
			names = append(names, top)
		}
		leaves[top] = append(leaves[top], i)
	}
	if len(columns) == 0 {
		columns = names
	}
	cols := make([]column, len(columns))
	for k, name := range columns {
		idx, ok := leaves[name]
		if !ok {
			return nil, fmt.Errorf("%s: no column %q (the file has %s)", source, name, strings.Join(names, ", "))
		}
		if len(idx) != 1 {
			return nil, fmt.Errorf("%s: column %q is a struct of %d values; webtensor reads numbers and lists of numbers", source, name, len(idx))
		}
		c, err := readColumn(pf, idx[0])
		if err != nil {
			return nil, fmt.Errorf("%s: column %q: %w", source, name, err)
		}
		c.name = name
		cols[k] = c
	}
	return newArrays(source, cols)
}

// readColumn reads leaf i of every row group into one array.
func readColumn(pf *file.Reader, i int) (column, error) {
	desc := pf.MetaData().Schema.Column(i)
	dtype, err := parquetDType(desc)
	if err != nil {
		return column{}, err
	}
	if desc.MaxRepetitionLevel() > 1 {
		return column{}, fmt.Errorf("lists of lists are not read (a field is one array per row)")
	}
	var raw []byte
	var def, rep []int16
	for g := 0; g < pf.NumRowGroups(); g++ {
		cr, err := pf.RowGroup(g).Column(i)
		if err != nil {
			return column{}, err
		}
		switch r := cr.(type) {
		case *file.BooleanColumnChunkReader:
			raw, def, rep, err = readLeaf(r.ReadBatch, raw, def, rep, func(dst []byte, v bool) []byte {
				if v {
					return append(dst, 1)
				}
				return append(dst, 0)
			})
		case *file.Int32ColumnChunkReader:
			raw, def, rep, err = readLeaf(r.ReadBatch, raw, def, rep, func(dst []byte, v int32) []byte {
				return putInt(dst, dtype, int64(v))
			})
		case *file.Int64ColumnChunkReader:
			raw, def, rep, err = readLeaf(r.ReadBatch, raw, def, rep, func(dst []byte, v int64) []byte {
				return binary.LittleEndian.AppendUint64(dst, uint64(v))
			})
		case *file.Float32ColumnChunkReader:
			raw, def, rep, err = readLeaf(r.ReadBatch, raw, def, rep, func(dst []byte, v float32) []byte {
				return binary.LittleEndian.AppendUint32(dst, math.Float32bits(v))
			})
		case *file.Float64ColumnChunkReader:
			raw, def, rep, err = readLeaf(r.ReadBatch, raw, def, rep, func(dst []byte, v float64) []byte {
				return binary.LittleEndian.AppendUint64(dst, math.Float64bits(v))
			})
		case *file.FixedLenByteArrayColumnChunkReader: // float16: two little-endian bytes
			raw, def, rep, err = readLeaf(r.ReadBatch, raw, def, rep, func(dst []byte, v parquet.FixedLenByteArray) []byte {
				return append(dst, v...)
			})
		default:
			err = fmt.Errorf("column reader %T", cr)
		}
		if err != nil {
			return column{}, fmt.Errorf("row group %d: %w", g, err)
		}
	}
	return shapeColumn(desc, dtype, raw, def, rep)
}

// parquetDType is the dtype a leaf's values become.
func parquetDType(desc *schema.Column) (core.DType, error) {
	lt := desc.LogicalType()
	switch desc.PhysicalType() {
	case parquet.Types.Boolean:
		return core.Bool, nil
	case parquet.Types.Int32:
		if it, ok := lt.(schema.IntLogicalType); ok {
			switch {
			case it.IsSigned() && it.BitWidth() == 8:
				return core.I8, nil
			case it.IsSigned() && it.BitWidth() == 16:
				return core.I16, nil
			case !it.IsSigned() && it.BitWidth() == 8:
				return core.U8, nil
			case !it.IsSigned() && it.BitWidth() == 16:
				return core.U16, nil
			case !it.IsSigned():
				return core.U32, nil
			}
		}
		return core.I32, nil
	case parquet.Types.Int64:
		if it, ok := lt.(schema.IntLogicalType); ok && !it.IsSigned() {
			return core.U64, nil // the int64 bits are the value's
		}
		return core.I64, nil
	case parquet.Types.Float:
		return core.F32, nil
	case parquet.Types.Double:
		return core.F64, nil
	case parquet.Types.FixedLenByteArray:
		if _, ok := lt.(schema.Float16LogicalType); ok {
			return core.F16, nil
		}
	}
	return 0, fmt.Errorf("type %s (%s) has no tensor dtype: webtensor reads numbers, bool and lists of them", desc.PhysicalType(), lt)
}

// putInt appends an int32 column's value in its dtype's width.
func putInt(dst []byte, d core.DType, v int64) []byte {
	switch d.Size() {
	case 1:
		return append(dst, byte(v))
	case 2:
		return binary.LittleEndian.AppendUint16(dst, uint16(v))
	}
	return binary.LittleEndian.AppendUint32(dst, uint32(v))
}

// readLeaf drains one column chunk, appending its values (through put)
// and its definition and repetition levels.
func readLeaf[T any](read func(int64, []T, []int16, []int16) (int64, int, error), raw []byte, def, rep []int16,
	put func([]byte, T) []byte) ([]byte, []int16, []int16, error) {
	const chunk = 8192
	vals := make([]T, chunk)
	d := make([]int16, chunk)
	r := make([]int16, chunk)
	for {
		total, n, err := read(chunk, vals, d, r)
		if err != nil {
			return nil, nil, nil, err
		}
		if total == 0 {
			return raw, def, rep, nil
		}
		for _, v := range vals[:n] {
			raw = put(raw, v)
		}
		def = append(def, d[:total]...)
		rep = append(rep, r[:total]...)
	}
}

// shapeColumn checks the levels (no nulls, lists of one length) and gives
// the column its shape: [rows] or [rows, list length].
func shapeColumn(desc *schema.Column, dtype core.DType, raw []byte, def, rep []int16) (column, error) {
	maxDef, maxRep := desc.MaxDefinitionLevel(), desc.MaxRepetitionLevel()
	row, width, cur := -1, -1, 0
	for k := range def {
		if maxRep == 0 || rep[k] == 0 {
			if row >= 0 && maxRep > 0 {
				if width >= 0 && cur != width {
					return column{}, fmt.Errorf("row %d has %d values, row 0 has %d: lists must have one length", row, cur, width)
				}
				width = cur
			}
			row, cur = row+1, 0
		}
		if def[k] < maxDef {
			return column{}, fmt.Errorf("row %d is null, an empty list or holds a null (a tensor has no missing values)", row)
		}
		cur++
	}
	rows := row + 1
	if maxRep == 0 {
		return column{dtype: dtype, shape: core.Shape{rows}, data: raw}, nil
	}
	if rows > 0 && width >= 0 && cur != width {
		return column{}, fmt.Errorf("row %d has %d values, row 0 has %d: lists must have one length", row, cur, width)
	}
	if width < 0 {
		width = cur
	}
	return column{dtype: dtype, shape: core.Shape{rows, width}, data: raw}, nil
}
