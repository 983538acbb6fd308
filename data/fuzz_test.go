package data

import (
	"os"
	"path/filepath"
	"testing"
)

// FuzzOpenBytes feeds each reader arbitrary bytes, as a page or an SDK
// passes a file's contents: every input opens or is refused with an error,
// never a panic, and a dataset that opens reads every record (or refuses
// one) without one either - a corrupt file's shape must not be trusted
// past what its bytes hold. Seeds are the readers' own test files.
func FuzzOpenBytes(f *testing.F) {
	formats := []string{"npy", "npz", "safetensors", "parquet"}
	for i, name := range []string{"x.npy", "xy.npz", "xy.safetensors", "table.parquet", "ragged.parquet", "nulls.parquet"} {
		raw, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(uint8(min(i, 3)), raw)
	}
	f.Fuzz(func(t *testing.T, format uint8, raw []byte) {
		ds, err := OpenBytes(Spec{Format: formats[int(format)%len(formats)]}, raw)
		if err != nil {
			return
		}
		fields := ds.Fields()
		dst := make([][]byte, len(fields))
		total := 0
		for i, fd := range fields {
			if fd.Bytes() < 0 || fd.Shape.Numel() < 0 {
				t.Fatalf("opened with a field whose size overflows: %v", fd)
			}
			if total += fd.Bytes(); total > 64<<20 {
				return // a large record that its bytes may well hold: not this test's business
			}
			dst[i] = make([]byte, fd.Bytes())
		}
		for i := range min(ds.Len(), 1024) {
			if ds.Read(i, dst) != nil {
				return
			}
		}
	})
}
