package auto

import (
	"encoding/binary"
	"fmt"
	"image"
	"image/color"
	"image/jpeg"
	"image/png"
	"math"
	"math/rand"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/schema"

	"github.com/webtensor/webtensor/data"
)

// The built-in data-loading workloads: each is a dataset in a format
// data reads, made once (seeded, so every machine makes the same files)
// under <dir>/datasets/<name>, and a loader over it set up the way a user
// might have written it - PyTorch's defaults, or workers where they do not
// help. The costs per sample are the formats' own: decoding JPEG photos
// and resizing them, decoding PNG scans, copying records of arrays
// already in memory (NumPy, Parquet).

// builtinLoader makes a workload's files in folder (absent or empty) and
// opens its loader.
type builtinLoader struct {
	make func(folder string) error
	open func(folder string) (*data.Loader, error)
	// batches a run reads; 0: the default (min(16, the epoch's)).
	batches int
}

var builtinLoaders = map[string]builtinLoader{
	// 192 photos, 128x128 JPEG, decoded and resized to 112x112, batch 32:
	// a small image-classification set read with PyTorch's defaults.
	"data-jpeg-folder": {
		make: func(dir string) error { return imageFolder(dir, 3, 64, 128, 128, "jpeg", 1) },
		open: func(dir string) (*data.Loader, error) {
			return imageLoader(dir, data.ImageOptions{Size: []int{112, 112}}, data.Options{BatchSize: 32, Shuffle: true, Seed: 1})
		},
	},
	// 256 grayscale scans, 64x64 PNG, batch 64, with a cache budget the
	// user set below the set's size: only workers can help.
	"data-png-gray": {
		make: func(dir string) error { return imageFolder(dir, 2, 128, 64, 64, "png", 2) },
		open: func(dir string) (*data.Loader, error) {
			return imageLoader(dir, data.ImageOptions{Mode: "gray"}, data.Options{BatchSize: 64, Shuffle: true, Seed: 2, CacheBytes: 512 << 10})
		},
	},
	// CIFAR-sized float images in .npy (4096 x 3x32x32 f32, 48 MiB) with
	// four workers on whatever cores there are.
	"data-npy-cifar": {
		make: func(dir string) error {
			if err := writeNPY(filepath.Join(dir, "x.npy"), "<f4", []int{4096, 3, 32, 32}, 3); err != nil {
				return err
			}
			return writeNPY(filepath.Join(dir, "y.npy"), "<i8", []int{4096}, 4)
		},
		open: func(dir string) (*data.Loader, error) {
			return npyLoader(dir, data.Options{BatchSize: 128, Shuffle: true, Seed: 3, Workers: 4})
		},
	},
	// 16,384 feature vectors (16 f32) and labels in .npy, batch 32, two
	// workers: batches far cheaper than a hand-off between goroutines.
	"data-npy-features": {
		make: func(dir string) error {
			if err := writeNPY(filepath.Join(dir, "x.npy"), "<f4", []int{16384, 16}, 5); err != nil {
				return err
			}
			return writeNPY(filepath.Join(dir, "y.npy"), "<i8", []int{16384}, 6)
		},
		open: func(dir string) (*data.Loader, error) {
			return npyLoader(dir, data.Options{BatchSize: 32, Shuffle: true, Seed: 4, Workers: 2})
		},
		batches: 256, // runs of a few ms: a batch takes microseconds
	},
	// A 16,384-row Parquet table of 12 f64 columns and an i64 label,
	// batch 256, two workers.
	"data-parquet-table": {
		make: func(dir string) error { return writeParquet(filepath.Join(dir, "table.parquet"), 16384, 12, 7) },
		open: func(dir string) (*data.Loader, error) {
			ds, err := data.Parquet(filepath.Join(dir, "table.parquet"))
			if err != nil {
				return nil, err
			}
			return data.NewLoader(ds, data.Options{BatchSize: 256, Shuffle: true, Seed: 5, Workers: 2})
		},
	},
}

// BuiltinLoaderNames lists the built-in data-loading workloads.
func BuiltinLoaderNames() []string {
	out := make([]string, 0, len(builtinLoaders))
	for n := range builtinLoaders {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// BuiltinLoader opens the built-in loader name, making its files under
// dir/datasets/name first when they are missing.
func BuiltinLoader(name, dir string) (*LoaderWorkload, error) {
	b, ok := builtinLoaders[name]
	if !ok {
		return nil, fmt.Errorf("auto: no built-in data workload %q (have %v)", name, BuiltinLoaderNames())
	}
	folder := filepath.Join(dir, "datasets", name)
	if _, err := os.Stat(folder); os.IsNotExist(err) {
		// Made in a temporary folder and renamed into place, so a run cut
		// short leaves no half-made dataset to be read as whole.
		if err := os.MkdirAll(filepath.Dir(folder), 0o755); err != nil {
			return nil, err
		}
		tmp, err := os.MkdirTemp(filepath.Dir(folder), ".tmp-"+name+"-")
		if err != nil {
			return nil, err
		}
		if err := b.make(tmp); err != nil {
			os.RemoveAll(tmp)
			return nil, fmt.Errorf("auto: making the %s dataset: %w", name, err)
		}
		if err := os.Rename(tmp, folder); err != nil {
			os.RemoveAll(tmp)
			return nil, err
		}
	}
	l, err := b.open(folder)
	if err != nil {
		return nil, fmt.Errorf("auto: built-in data workload %s: %w", name, err)
	}
	return NewLoaderWorkload(name, l, LoaderOptions{Batches: min(b.batches, l.Len())})
}

func imageLoader(dir string, img data.ImageOptions, o data.Options) (*data.Loader, error) {
	ds, err := data.ImageFolder(dir, img)
	if err != nil {
		return nil, err
	}
	return data.NewLoader(ds, o)
}

func npyLoader(dir string, o data.Options) (*data.Loader, error) {
	ds, err := data.NPY(filepath.Join(dir, "x.npy"), filepath.Join(dir, "y.npy"))
	if err != nil {
		return nil, err
	}
	return data.NewLoader(ds, o)
}

// imageFolder writes classes x perClass images of w x h as JPEG (quality
// 90, RGB) or PNG (grayscale): smooth shading, a few shapes and sensor
// noise, so they compress and decode like photos rather than flat fills.
func imageFolder(dir string, classes, perClass, w, h int, format string, seed int64) error {
	rng := rand.New(rand.NewSource(seed))
	for c := range classes {
		sub := filepath.Join(dir, fmt.Sprintf("class%d", c))
		if err := os.MkdirAll(sub, 0o755); err != nil {
			return err
		}
		for i := range perClass {
			img := photo(rng, w, h, c)
			path := filepath.Join(sub, fmt.Sprintf("%04d.%s", i, strings.TrimPrefix(format, ".")))
			f, err := os.Create(path)
			if err != nil {
				return err
			}
			if format == "jpeg" {
				err = jpeg.Encode(f, img, &jpeg.Options{Quality: 90})
			} else {
				gray := image.NewGray(img.Bounds())
				for y := range h {
					for x := range w {
						gray.Set(x, y, img.At(x, y))
					}
				}
				err = png.Encode(f, gray)
			}
			if cerr := f.Close(); err == nil {
				err = cerr
			}
			if err != nil {
				return fmt.Errorf("%s: %w", path, err)
			}
		}
	}
	return nil
}

func photo(rng *rand.Rand, w, h, class int) *image.RGBA {
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	base := [3]float64{60 + 50*float64(class%3), 80 + 40*float64(class%2), 120 - 30*float64(class%3)}
	fx, fy := 2+4*rng.Float64(), 2+4*rng.Float64()
	type disc struct{ x, y, r, v float64 }
	discs := make([]disc, 3+rng.Intn(4))
	for i := range discs {
		discs[i] = disc{rng.Float64() * float64(w), rng.Float64() * float64(h), 6 + rng.Float64()*float64(w)/4, 80 * (rng.Float64() - 0.5)}
	}
	for y := range h {
		for x := range w {
			u, v := float64(x)/float64(w), float64(y)/float64(h)
			shade := 40*math.Sin(fx*u+fy*v) + 30*u - 20*v
			for _, d := range discs {
				if dx, dy := float64(x)-d.x, float64(y)-d.y; dx*dx+dy*dy < d.r*d.r {
					shade += d.v
				}
			}
			var px [3]uint8
			for k := range px {
				px[k] = uint8(math.Max(0, math.Min(255, base[k]+shade*(1+0.3*float64(k))+12*rng.NormFloat64())))
			}
			img.SetRGBA(x, y, color.RGBA{px[0], px[1], px[2], 255})
		}
	}
	return img
}

// writeNPY writes a .npy file (format 1.0) of shape, descr "<f4" (normal
// values) or "<i8" (labels 0..9).
func writeNPY(path, descr string, shape []int, seed int64) error {
	dims := make([]string, len(shape))
	n := 1
	for i, d := range shape {
		dims[i] = fmt.Sprint(d)
		n *= d
	}
	tuple := strings.Join(dims, ", ")
	if len(shape) == 1 {
		tuple += ","
	}
	header := fmt.Sprintf("{'descr': '%s', 'fortran_order': False, 'shape': (%s), }", descr, tuple)
	// The magic, version and length take 10 bytes; the header pads with
	// spaces to a multiple of 64 and ends in a newline.
	header += strings.Repeat(" ", (64-(10+len(header)+1)%64)%64) + "\n"
	out := append([]byte("\x93NUMPY\x01\x00"), byte(len(header)), byte(len(header)>>8))
	out = append(out, header...)
	rng := rand.New(rand.NewSource(seed))
	for range n {
		if descr == "<f4" {
			out = binary.LittleEndian.AppendUint32(out, math.Float32bits(float32(rng.NormFloat64())))
		} else {
			out = binary.LittleEndian.AppendUint64(out, uint64(rng.Intn(10)))
		}
	}
	return os.WriteFile(path, out, 0o644)
}

// writeParquet writes rows of cols f64 columns (f0, f1, ...) and an i64
// label, in row groups of 4,096.
func writeParquet(path string, rows, cols int, seed int64) error {
	var fields schema.FieldList
	for c := range cols {
		n, err := schema.NewPrimitiveNode(fmt.Sprintf("f%d", c), parquet.Repetitions.Required, parquet.Types.Double, -1, -1)
		if err != nil {
			return err
		}
		fields = append(fields, n)
	}
	label, err := schema.NewPrimitiveNode("label", parquet.Repetitions.Required, parquet.Types.Int64, -1, -1)
	if err != nil {
		return err
	}
	sc, err := schema.NewGroupNode("schema", parquet.Repetitions.Required, append(fields, label), -1)
	if err != nil {
		return err
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer f.Close()
	w, err := file.NewParquetWriterWithError(f, sc)
	if err != nil {
		return err
	}
	rng := rand.New(rand.NewSource(seed))
	const group = 4096
	for lo := 0; lo < rows; lo += group {
		n := min(group, rows-lo)
		rg, err := w.AppendRowGroupChecked()
		if err != nil {
			return err
		}
		for c := 0; c <= cols; c++ {
			cw, err := rg.NextColumn()
			if err != nil {
				return err
			}
			switch cw := cw.(type) {
			case *file.Float64ColumnChunkWriter:
				v := make([]float64, n)
				for i := range v {
					v[i] = rng.NormFloat64()
				}
				_, err = cw.WriteBatch(v, nil, nil)
			case *file.Int64ColumnChunkWriter:
				v := make([]int64, n)
				for i := range v {
					v[i] = int64(rng.Intn(2))
				}
				_, err = cw.WriteBatch(v, nil, nil)
			default:
				err = fmt.Errorf("column writer %T", cw)
			}
			if err == nil {
				err = cw.Close()
			}
			if err != nil {
				return err
			}
		}
		if err := rg.Close(); err != nil {
			return err
		}
	}
	return w.Close() // closes f too; the deferred Close then does nothing
}
