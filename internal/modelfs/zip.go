package modelfs

import (
	"archive/zip"
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// maxDeflateRatio bounds what a deflated entry may declare: deflate
// cannot expand its input by more than about 1032 to 1 (a 258-byte match
// in at least 2 bits), so a larger declared size is a lie, which a zip
// bomb tells to make a reader allocate. deflateSlack covers the few bytes
// any stream takes however little it holds.
const (
	maxDeflateRatio = 1032
	deflateSlack    = 64
)

// Zip is a zip archive of a saved model held in memory, as an fs.FS
// (with fs.ReadFileFS and fs.StatFS) whose entries were all checked when
// it opened (OpenZip). Reading a file allocates its declared size, which
// the checks bound, and archive/zip fails a file whose data decompresses
// to anything else or fails its CRC-32.
type Zip struct {
	r     *zip.Reader
	files map[string]*zip.File // regular files by their path
	total int64                // the files' declared uncompressed bytes
}

var (
	_ fs.ReadFileFS = (*Zip)(nil)
	_ fs.StatFS     = (*Zip)(nil)
)

// OpenZip opens the zip archive data without copying it (data must stay
// unchanged while the Zip is read). Every entry is checked before any is
// read, and the first problem is the error, naming the entry: a path that
// would leave the archive's root (absolute, "..", a backslash, a drive
// letter), a name given twice, a symbolic link, a compression method other
// than stored or deflated, a declared size that the entry's compressed
// bytes cannot hold (a zip bomb), data past the archive's end (a truncated
// archive), or, over all files, more than maxBytes declared uncompressed
// bytes (the reader's memory bound).
func OpenZip(data []byte, maxBytes int64) (*Zip, error) {
	if len(data) == 0 {
		return nil, errors.New("zip archive: empty (0 bytes)")
	}
	r, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		return nil, fmt.Errorf("zip archive: not a zip archive, or a truncated one (%d bytes): %w", len(data), err)
	}
	z := &Zip{r: r, files: map[string]*zip.File{}}
	seen := map[string]bool{}
	for _, f := range r.File {
		if err := z.check(f, seen, int64(len(data)), maxBytes); err != nil {
			return nil, fmt.Errorf("zip archive: %w", err)
		}
	}
	return z, nil
}

// check holds one entry to OpenZip's rules and records it.
func (z *Zip) check(f *zip.File, seen map[string]bool, size, maxBytes int64) error {
	name := f.Name
	isDir := strings.HasSuffix(name, "/")
	clean := strings.TrimSuffix(name, "/")
	switch {
	case name == "" || clean == "":
		return fmt.Errorf("an entry has an empty name")
	case strings.Contains(name, `\`) || (len(name) > 1 && name[1] == ':'):
		return fmt.Errorf("entry %q: a backslash or drive letter in a path could leave the archive's root; zip paths use /", name)
	case !fs.ValidPath(clean):
		return fmt.Errorf("entry %q: the path leaves the archive's root or is not clean (absolute, or with empty, . or .. elements)", name)
	case seen[clean]:
		return fmt.Errorf("entry %q: the archive holds it twice", name)
	case f.Mode()&fs.ModeSymlink != 0:
		return fmt.Errorf("entry %q: a symbolic link (the archive must hold its files themselves)", name)
	}
	seen[clean] = true
	if isDir || f.Mode().IsDir() {
		if f.UncompressedSize64 != 0 {
			return fmt.Errorf("entry %q: a folder that declares %d bytes of data", name, f.UncompressedSize64)
		}
		return nil
	}
	comp, full := f.CompressedSize64, f.UncompressedSize64
	if f.Method != zip.Store && f.Method != zip.Deflate {
		return fmt.Errorf("entry %q: compression method %d is not supported (only stored, 0, and deflated, 8)", name, f.Method)
	}
	off, err := f.DataOffset()
	if err != nil {
		return fmt.Errorf("entry %q: its local header is unreadable (a truncated archive?): %w", name, err)
	}
	// Written so that no sum can overflow: comp is the archive's to declare.
	if off < 0 || off > size || comp > uint64(size-off) {
		return fmt.Errorf("entry %q: its %d bytes of data run past the archive's end at %d bytes (a truncated archive?)", name, comp, size)
	}
	// comp is now at most the archive's size, so the product cannot overflow.
	if f.Method == zip.Store && full != comp {
		return fmt.Errorf("entry %q: stored (not compressed) but declares %d bytes in %d", name, full, comp)
	}
	if f.Method == zip.Deflate && full > comp*maxDeflateRatio+deflateSlack {
		return fmt.Errorf("entry %q: declares %d bytes from %d compressed, more than deflate can expand to (a zip bomb?)", name, full, comp)
	}
	if full > uint64(maxBytes-z.total) {
		return fmt.Errorf("entry %q: the files declare more than %d bytes uncompressed in all, the limit", name, maxBytes)
	}
	z.total += int64(full)
	z.files[clean] = f
	return nil
}

// Bytes is the files' declared uncompressed size in all.
func (z *Zip) Bytes() int64 { return z.total }

// missingError is a file the archive does not hold.
type missingError struct{ name string }

func (e *missingError) Error() string { return fmt.Sprintf("the zip archive has no %s", e.name) }
func (e *missingError) Unwrap() error { return fs.ErrNotExist }

// Open opens a file or folder of the archive (folders need no entry of
// their own: a file's path implies them).
func (z *Zip) Open(name string) (fs.File, error) {
	if !fs.ValidPath(name) {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrInvalid}
	}
	f, err := z.r.Open(name)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, &missingError{name}
	}
	return f, err
}

// Stat describes a file or folder of the archive.
func (z *Zip) Stat(name string) (fs.FileInfo, error) {
	f, err := z.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return f.Stat()
}

// ReadFile reads a file whole: its declared size, which must be what its
// data decompresses to, with a matching CRC-32.
func (z *Zip) ReadFile(name string) ([]byte, error) {
	f, ok := z.files[name]
	if !ok {
		if st, err := z.Stat(name); err == nil && st.IsDir() {
			return nil, fmt.Errorf("%s in the zip archive is a folder, not a file", name)
		}
		return nil, &missingError{name}
	}
	rc, err := f.Open()
	if err != nil {
		return nil, fmt.Errorf("%s in the zip archive: %w", name, err)
	}
	defer rc.Close()
	buf := make([]byte, f.UncompressedSize64)
	if _, err := io.ReadFull(rc, buf); err != nil {
		return nil, fmt.Errorf("%s in the zip archive: its data ends before the declared %d bytes (corrupt or truncated): %w", name, len(buf), err)
	}
	// Reading past the end is what makes archive/zip compare the CRC-32
	// and notice data longer than declared.
	if n, err := rc.Read(make([]byte, 1)); n != 0 || err != io.EOF {
		if err == nil || err == io.EOF {
			err = fmt.Errorf("more data than declared")
		}
		return nil, fmt.Errorf("%s in the zip archive: corrupt data: %w", name, err)
	}
	return buf, nil
}

// Root is the folder of the archive that holds marker (a file such as
// model_index.json): the root itself, or the one top-level folder that
// holds it, since zipping a folder by name (zip -r pipe.zip pipe/) nests
// everything one folder deep. Otherwise the error lists what the root has.
func (z *Zip) Root(marker string) (string, error) {
	if _, ok := z.files[marker]; ok {
		return ".", nil
	}
	var tops, holders []string
	for name := range z.files {
		top, rest, nested := strings.Cut(name, "/")
		if !nested {
			top = name
		}
		if !slices.Contains(tops, top) {
			tops = append(tops, top)
		}
		if nested && rest == marker {
			holders = append(holders, top)
		}
	}
	if len(holders) == 1 {
		return holders[0], nil
	}
	slices.Sort(tops)
	if len(holders) > 1 {
		slices.Sort(holders)
		return "", fmt.Errorf("zip archive: %s is in several top-level folders (%s), not at the root: which one is meant?", marker, strings.Join(holders, ", "))
	}
	if len(tops) == 0 {
		return "", fmt.Errorf("zip archive: no %s: the archive holds no files", marker)
	}
	if len(tops) > 8 {
		tops = append(tops[:8], "…")
	}
	return "", fmt.Errorf("zip archive: no %s at its root or in a top-level folder (its root holds: %s)", marker, strings.Join(tops, ", "))
}

// ZipFolder is dir's files as a zip archive, deflated, with slash paths
// relative to dir in sorted order: what OpenZip reads back, for tests and
// tools that hand a saved model over as one file.
func ZipFolder(dir string) ([]byte, error) {
	var buf bytes.Buffer
	w := zip.NewWriter(&buf)
	err := fs.WalkDir(os.DirFS(dir), ".", func(name string, e fs.DirEntry, err error) error {
		if err != nil || e.IsDir() {
			return err
		}
		data, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(name)))
		if err != nil {
			return err
		}
		f, err := w.CreateHeader(&zip.FileHeader{Name: name, Method: zip.Deflate})
		if err != nil {
			return err
		}
		_, err = f.Write(data)
		return err
	})
	if err == nil {
		err = w.Close()
	}
	if err != nil {
		return nil, fmt.Errorf("zipping %s: %w", dir, err)
	}
	return buf.Bytes(), nil
}
