package data

import (
	"encoding/binary"
	"fmt"
	"image"
	"image/color"
	_ "image/jpeg" // the decoders ImageFolder reads with
	_ "image/png"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/webtensor/webtensor/core"
	"golang.org/x/image/draw"
)

// ImageOptions says how ImageFolder turns files into tensors.
type ImageOptions struct {
	// Mode is "rgb" (3 channels, the default) or "gray" (1), PIL's
	// convert("RGB") and convert("L"); alpha is dropped.
	Mode string `json:"mode,omitempty"`
	// Size, when set, is [height, width]: every image is resized to it
	// (bilinear). Unset, every image must have the first image's size.
	Size []int `json:"size,omitempty"`
}

// imageFolder is torchvision's ImageFolder: root/CLASS/FILE, classes in
// sorted order, a record being (image u8 [C, H, W], label i64).
type imageFolder struct {
	root    string
	classes []string
	files   []string // sorted within each class, classes in order
	labels  []int64
	ch      int
	h, w    int
	resize  bool
}

var imageExts = []string{".png", ".jpg", ".jpeg"}

// ImageFolder reads root's subfolders as classes (sorted by name, the
// label being the index) and their PNG and JPEG files as records, decoded
// when read, so a loader's workers decode in parallel.
func ImageFolder(root string, opts ImageOptions) (Dataset, error) {
	d := &imageFolder{root: root}
	switch strings.ToLower(opts.Mode) {
	case "", "rgb":
		d.ch = 3
	case "gray", "l":
		d.ch = 1
	default:
		return nil, fmt.Errorf("%s: image mode %q (want rgb or gray)", root, opts.Mode)
	}
	entries, err := os.ReadDir(root)
	if err != nil {
		return nil, err
	}
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		files, err := os.ReadDir(filepath.Join(root, e.Name()))
		if err != nil {
			return nil, err
		}
		label := int64(len(d.classes))
		d.classes = append(d.classes, e.Name())
		for _, f := range files {
			if !f.IsDir() && slices.Contains(imageExts, strings.ToLower(filepath.Ext(f.Name()))) {
				d.files = append(d.files, filepath.Join(root, e.Name(), f.Name()))
				d.labels = append(d.labels, label)
			}
		}
	}
	if len(d.files) == 0 {
		return nil, fmt.Errorf("%s: no .png or .jpg files in its subfolders (one subfolder per class)", root)
	}
	switch {
	case len(opts.Size) == 2 && opts.Size[0] > 0 && opts.Size[1] > 0:
		d.h, d.w, d.resize = opts.Size[0], opts.Size[1], true
		if err := checkImagePixels(opts.Size[1], opts.Size[0]); err != nil {
			return nil, fmt.Errorf("%s: size %v: %w", root, opts.Size, err)
		}
	case len(opts.Size) != 0:
		return nil, fmt.Errorf("%s: image size %v (want [height, width], both positive)", root, opts.Size)
	default:
		f, err := os.Open(d.files[0])
		if err != nil {
			return nil, err
		}
		cfg, _, err := image.DecodeConfig(f)
		f.Close()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", d.files[0], err)
		}
		if err := checkImagePixels(cfg.Width, cfg.Height); err != nil {
			return nil, fmt.Errorf("%s: %w", d.files[0], err)
		}
		d.h, d.w = cfg.Height, cfg.Width
	}
	return d, nil
}

// maxImagePixels bounds an image the folder decodes or makes: 8192 x
// 8192. A PNG's header can claim 65535 x 65535 in a few bytes, and its
// decoder allocates what the header claims before reading the pixels:
// past the machine's memory that ends the process (Go cannot recover from
// it), in a loader's worker as anywhere.
const maxImagePixels = 1 << 26

// checkImagePixels refuses a w x h image past maxImagePixels.
func checkImagePixels(w, h int) error {
	if w > maxImagePixels || h > maxImagePixels || w*h > maxImagePixels {
		return fmt.Errorf("image is %dx%d: more than the %d pixels (8192 x 8192) webtensor decodes", w, h, maxImagePixels)
	}
	return nil
}

func (d *imageFolder) Len() int { return len(d.files) }

func (d *imageFolder) Fields() []Field {
	return []Field{{Name: "image", DType: core.U8, Shape: core.Shape{d.ch, d.h, d.w}},
		{Name: "label", DType: core.I64, Shape: core.Shape{}}}
}

// Classes are the class names, a label indexing them.
func (d *imageFolder) Classes() []string { return d.classes }

func (d *imageFolder) Read(i int, dst [][]byte) error {
	if i < 0 || i >= len(d.files) {
		return recordError(d.root, i, fmt.Errorf("out of range (%d images)", len(d.files)))
	}
	path := d.files[i]
	img, err := d.decode(path)
	if err != nil {
		return recordError(path, i, err)
	}
	b := img.Bounds()
	if d.resize && (b.Dx() != d.w || b.Dy() != d.h) {
		scaled := image.NewNRGBA(image.Rect(0, 0, d.w, d.h))
		draw.BiLinear.Scale(scaled, scaled.Bounds(), img, b, draw.Src, nil)
		img, b = scaled, scaled.Bounds()
	}
	if b.Dx() != d.w || b.Dy() != d.h {
		return recordError(path, i, fmt.Errorf("image is %dx%d, the dataset's %dx%d (set a size to resize)", b.Dx(), b.Dy(), d.w, d.h))
	}
	planes(img, d.ch, dst[0])
	binary.LittleEndian.PutUint64(dst[1], uint64(d.labels[i]))
	return nil
}

// decode reads the image at path after its header: a size the dataset
// cannot take is refused before the decoder allocates it.
func (d *imageFolder) decode(path string) (image.Image, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	cfg, _, err := image.DecodeConfig(f)
	if err != nil {
		return nil, err
	}
	if !d.resize && (cfg.Width != d.w || cfg.Height != d.h) {
		return nil, fmt.Errorf("image is %dx%d, the dataset's %dx%d (set a size to resize)", cfg.Width, cfg.Height, d.w, d.h)
	}
	if err := checkImagePixels(cfg.Width, cfg.Height); err != nil {
		return nil, err
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return nil, err
	}
	img, _, err := image.Decode(f)
	return img, err
}

// planes writes img as ch planes of height x width bytes (CHW).
func planes(img image.Image, ch int, out []byte) {
	b := img.Bounds()
	hw := b.Dx() * b.Dy()
	k := 0
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			if ch == 1 {
				out[k] = color.GrayModel.Convert(img.At(x, y)).(color.Gray).Y
			} else {
				c := color.NRGBAModel.Convert(img.At(x, y)).(color.NRGBA)
				out[k], out[hw+k], out[2*hw+k] = c.R, c.G, c.B
			}
			k++
		}
	}
}
