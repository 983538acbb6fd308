package data

import (
	"fmt"
	"strings"
)

// Spec names a built-in reader and its arguments: what the C ABI and so
// every SDK pass (as JSON) to open a dataset.
type Spec struct {
	// Format is npy, npz, safetensors, parquet or images.
	Format string `json:"format"`
	// Path is the file (the image folder's root); npy takes Paths too,
	// one file per field.
	Path  string   `json:"path,omitempty"`
	Paths []string `json:"paths,omitempty"`
	// Keys selects and orders the arrays (npz, safetensors) or columns
	// (parquet); empty means all, in the file's order.
	Keys []string `json:"keys,omitempty"`
	// Name labels a dataset read from bytes in errors (and names an npy
	// field); the default is the format.
	Name string `json:"name,omitempty"`
	ImageOptions
}

// Open opens the dataset a Spec describes, from files.
func Open(s Spec) (Dataset, error) {
	s.Format = strings.ToLower(s.Format)
	paths := s.Paths
	if s.Path != "" {
		paths = append([]string{s.Path}, paths...)
	}
	if len(paths) == 0 {
		return nil, fmt.Errorf("data: a %s dataset needs a path", s.Format)
	}
	if len(paths) > 1 && s.Format != "npy" {
		return nil, fmt.Errorf("data: a %s dataset reads one file, got %d paths (only npy takes a file per field)", s.Format, len(paths))
	}
	switch s.Format {
	case "npy":
		return NPY(paths...)
	case "npz":
		return NPZ(paths[0], s.Keys...)
	case "safetensors":
		return Safetensors(paths[0], s.Keys...)
	case "parquet":
		return Parquet(paths[0], s.Keys...)
	case "images", "imagefolder":
		return ImageFolder(paths[0], s.ImageOptions)
	}
	return nil, fmt.Errorf("data: unknown dataset format %q (want npy, npz, safetensors, parquet or images)", s.Format)
}

// OpenBytes opens a dataset from one file's bytes: where there is no file
// system (a browser) or the file is already in memory. An image folder,
// being many files, has no such form.
func OpenBytes(s Spec, raw []byte) (Dataset, error) {
	name := s.Name
	if name == "" {
		name = s.Format
	}
	switch strings.ToLower(s.Format) {
	case "npy":
		return NPYBytes(name, raw)
	case "npz":
		return NPZBytes(name, raw, s.Keys...)
	case "safetensors":
		return SafetensorsBytes(name, raw, s.Keys...)
	case "parquet":
		return ParquetBytes(name, raw, s.Keys...)
	case "images", "imagefolder":
		return nil, fmt.Errorf("data: an image folder is many files: open it by path")
	}
	return nil, fmt.Errorf("data: unknown dataset format %q (want npy, npz, safetensors or parquet)", s.Format)
}
