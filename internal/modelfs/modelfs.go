// Package modelfs is where the model loaders of diffuse and multimodal
// read a saved model's files: a folder on disk, or a folder inside an
// fs.FS, such as a zip archive of a saved pipeline opened with OpenZip
// (the browser has no file system, so a page hands the runtime the
// archive's bytes). One Dir type serves both, so each loader has one code
// path, and errors name the file the same way either way.
package modelfs

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
)

// Dir is a folder of model files: an OS folder (OS), or a slash-separated
// folder inside an fs.FS (In).
type Dir struct {
	fsys fs.FS  // nil: the operating system's files
	path string // an OS path, or a valid fs path ("." is the root)
}

// OS is the folder at an operating-system path.
func OS(dir string) Dir { return Dir{path: dir} }

// In is the folder dir inside fsys: a slash-separated path as fs.ValidPath
// takes it ("" and "." are the root). A path fs.ValidPath refuses
// (absolute, or with empty, . or .. elements) is an error naming it.
func In(fsys fs.FS, dir string) (Dir, error) {
	if fsys == nil {
		return Dir{}, errors.New("modelfs: In: the fs.FS is nil")
	}
	if dir == "" {
		dir = "."
	}
	if !fs.ValidPath(dir) {
		return Dir{}, fmt.Errorf("modelfs: folder %q is not a valid path inside the file system (slash-separated, relative, without . or .. elements)", dir)
	}
	return Dir{fsys: fsys, path: dir}, nil
}

// OnDisk reports whether the folder is an operating-system folder, whose
// files can be opened (and memory-mapped) by path.
func (d Dir) OnDisk() bool { return d.fsys == nil }

// FS is the file system the folder is in; nil for an OS folder.
func (d Dir) FS() fs.FS { return d.fsys }

// Sub is the folder name inside d.
func (d Dir) Sub(name string) Dir {
	return Dir{fsys: d.fsys, path: d.Path(name)}
}

// Path is the path of d's file name: what errors show, and for an OS
// folder what the file opens as.
func (d Dir) Path(name string) string {
	if d.fsys == nil {
		return filepath.Join(d.path, name)
	}
	return path.Join(d.path, name)
}

// String is the folder's path.
func (d Dir) String() string { return d.path }

// ReadFile reads d's file name. The error names the file's path; a
// missing file's error satisfies errors.Is(err, fs.ErrNotExist).
func (d Dir) ReadFile(name string) ([]byte, error) {
	if d.fsys == nil {
		return os.ReadFile(d.Path(name))
	}
	return fs.ReadFile(d.fsys, d.Path(name))
}

// Exists reports whether d has a file or folder name; errors other than
// its absence are returned.
func (d Dir) Exists(name string) (bool, error) {
	var err error
	if d.fsys == nil {
		_, err = os.Stat(d.Path(name))
	} else {
		_, err = fs.Stat(d.fsys, d.Path(name))
	}
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, fs.ErrNotExist):
		return false, nil
	}
	return false, err
}
