package multimodal

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"

	"github.com/webtensor/webtensor/core"
)

// Image is an 8-bit RGB image, row-major with 3 bytes per pixel: the
// (height, width, 3) uint8 array numpy and PIL's RGB mode hold.
type Image struct {
	Height, Width int
	Pix           []uint8
}

// ImageProcessor is transformers' PIL image processor for ViT, CLIP and
// VideoMAE (ViTImageProcessorPil, CLIPImageProcessorPil and
// VideoMAEImageProcessorPil, the slow ViTImageProcessor,
// CLIPImageProcessor and VideoMAEImageProcessor of transformers 4, the
// last what TimeSformer checkpoints name): resize
// with Pillow's resampling filters, centre crop, rescale and normalise,
// on the host. Resizing reproduces Pillow's fixed-point arithmetic, so the
// resized pixels are Pillow's exactly; transformers 5's torchvision
// processors resize differently and are not what this matches.
type ImageProcessor struct {
	DoResize bool
	// Size is size: Height and Width, or ShortestEdge (the shorter side
	// scaled to it, the longer by the same factor, truncated).
	Size         ImageSize
	Resample     int // resample: Pillow's filter code (1 lanczos, 2 bilinear, 3 bicubic, 4 box, 5 hamming)
	DoCenterCrop bool
	CropSize     ImageSize // crop_size: Height and Width
	DoRescale    bool
	// RescaleFactor (rescale_factor) multiplies the pixels, 1/255 by default.
	RescaleFactor float64
	DoNormalize   bool
	ImageMean     []float64 // image_mean, one per channel
	ImageStd      []float64 // image_std, one per channel
}

// ImageSize is an image processor's size or crop_size.
type ImageSize struct {
	Height, Width, ShortestEdge int
}

// Pillow's filter codes, and their kernels and supports (Resample.c).
const (
	resampleLanczos  = 1
	resampleBilinear = 2
	resampleBicubic  = 3
	resampleBox      = 4
	resampleHamming  = 5
)

type resampleFilter struct {
	kernel  func(float64) float64
	support float64
}

var resampleFilters = map[int]resampleFilter{
	resampleBox: {func(x float64) float64 {
		if x > -0.5 && x <= 0.5 {
			return 1
		}
		return 0
	}, 0.5},
	resampleBilinear: {func(x float64) float64 {
		x = math.Abs(x)
		if x < 1 {
			return 1 - x
		}
		return 0
	}, 1},
	resampleHamming: {func(x float64) float64 {
		x = math.Abs(x)
		if x == 0 {
			return 1
		}
		if x >= 1 {
			return 0
		}
		x *= math.Pi
		// Pillow writes 0.54f and 0.46f: float constants, widened.
		return math.Sin(x) / x * (float64(float32(0.54)) + float64(float32(0.46))*math.Cos(x))
	}, 1},
	resampleBicubic: {func(x float64) float64 {
		const a = -0.5
		x = math.Abs(x)
		if x < 1 {
			return ((a+2)*x-(a+3))*x*x + 1
		}
		if x < 2 {
			return (((x-5)*x+8)*x - 4) * a
		}
		return 0
	}, 2},
	resampleLanczos: {func(x float64) float64 {
		if x >= -3 && x < 3 {
			return sinc(x) * sinc(x/3)
		}
		return 0
	}, 3},
}

func sinc(x float64) float64 {
	if x == 0 {
		return 1
	}
	x *= math.Pi
	return math.Sin(x) / x
}

// imageProcessorDefaults are the classes' defaults; a config's keys
// override them.
func imageProcessorDefaults(kind string) (ImageProcessor, bool) {
	switch kind {
	case "ViTImageProcessor":
		return ImageProcessor{DoResize: true, Size: ImageSize{Height: 224, Width: 224}, Resample: resampleBilinear,
			DoRescale: true, RescaleFactor: 1.0 / 255, DoNormalize: true,
			ImageMean: []float64{0.5, 0.5, 0.5}, ImageStd: []float64{0.5, 0.5, 0.5}}, true
	case "CLIPImageProcessor":
		return ImageProcessor{DoResize: true, Size: ImageSize{ShortestEdge: 224}, Resample: resampleBicubic,
			DoCenterCrop: true, CropSize: ImageSize{Height: 224, Width: 224}, DoRescale: true, RescaleFactor: 1.0 / 255,
			DoNormalize: true, ImageMean: []float64{0.48145466, 0.4578275, 0.40821073},
			ImageStd: []float64{0.26862954, 0.26130258, 0.27577711}}, true
	case "VideoMAEImageProcessor":
		// CLIP's steps, applied to every frame, with bilinear resampling
		// and IMAGENET_STANDARD_MEAN and _STD.
		return ImageProcessor{DoResize: true, Size: ImageSize{ShortestEdge: 224}, Resample: resampleBilinear,
			DoCenterCrop: true, CropSize: ImageSize{Height: 224, Width: 224}, DoRescale: true, RescaleFactor: 1.0 / 255,
			DoNormalize: true, ImageMean: []float64{0.5, 0.5, 0.5}, ImageStd: []float64{0.5, 0.5, 0.5}}, true
	}
	return ImageProcessor{}, false
}

// readSize reads size or crop_size: {"height", "width"}, {"shortest_edge"}
// or, as older configs write it, one integer (a square, or for CLIP's and
// VideoMAE's size the shortest edge, as transformers' get_size_dict reads it).
func readSize(raw json.RawMessage, square bool) (ImageSize, error) {
	var n int
	if err := json.Unmarshal(raw, &n); err == nil {
		if square {
			return ImageSize{Height: n, Width: n}, nil
		}
		return ImageSize{ShortestEdge: n}, nil
	}
	var m map[string]int
	if err := json.Unmarshal(raw, &m); err != nil {
		return ImageSize{}, err
	}
	s := ImageSize{Height: m["height"], Width: m["width"], ShortestEdge: m["shortest_edge"]}
	for k := range m {
		if k != "height" && k != "width" && k != "shortest_edge" {
			return ImageSize{}, fmt.Errorf("size key %q is not supported (supported: height and width, or shortest_edge)", k)
		}
	}
	if (s.Height > 0) != (s.Width > 0) || (s.Height > 0) == (s.ShortestEdge > 0) {
		return ImageSize{}, fmt.Errorf("size %s must give height and width, or shortest_edge alone, all >= 1", raw)
	}
	return s, nil
}

func imageKeys(kind string) map[string]configKey[ImageProcessor] {
	size := func(p func(*ImageProcessor) *ImageSize, square bool) configKey[ImageProcessor] {
		return func(c *ImageProcessor, raw json.RawMessage) error {
			s, err := readSize(raw, square)
			*p(c) = s
			return err
		}
	}
	return map[string]configKey[ImageProcessor]{
		"image_processor_type":   func(*ImageProcessor, json.RawMessage) error { return nil }, // read first
		"feature_extractor_type": skipKey[ImageProcessor],                                     // older files name the class here too
		"processor_class":        skipKey[ImageProcessor],
		"do_resize":              field(func(c *ImageProcessor) any { return &c.DoResize }),
		"size":                   size(func(c *ImageProcessor) *ImageSize { return &c.Size }, kind == "ViTImageProcessor"),
		"resample":               field(func(c *ImageProcessor) any { return &c.Resample }),
		"do_center_crop":         field(func(c *ImageProcessor) any { return &c.DoCenterCrop }),
		"crop_size":              size(func(c *ImageProcessor) *ImageSize { return &c.CropSize }, true),
		"do_rescale":             field(func(c *ImageProcessor) any { return &c.DoRescale }),
		"rescale_factor":         field(func(c *ImageProcessor) any { return &c.RescaleFactor }),
		"do_normalize":           field(func(c *ImageProcessor) any { return &c.DoNormalize }),
		"image_mean":             field(func(c *ImageProcessor) any { return &c.ImageMean }),
		"image_std":              field(func(c *ImageProcessor) any { return &c.ImageStd }),
		// The inputs here are RGB already.
		"do_convert_rgb": skipKey[ImageProcessor],
		"do_pad":         only[ImageProcessor]("false", "null"),
	}
}

// LoadImageProcessor reads dir/preprocessor_config.json.
func LoadImageProcessor(dir string) (*ImageProcessor, error) {
	path := filepath.Join(dir, "preprocessor_config.json")
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("multimodal: LoadImageProcessor: %w", err)
	}
	p, err := ParseImageProcessor(data)
	if err != nil {
		return nil, fmt.Errorf("%w (in %s)", err, path)
	}
	return p, nil
}

// ParseImageProcessor reads a preprocessor_config.json whose
// image_processor_type (or feature_extractor_type, in older files) is
// ViTImageProcessor, CLIPImageProcessor or VideoMAEImageProcessor; the
// class's defaults fill the keys the file leaves out. A key or value this
// package does not implement fails naming it.
func ParseImageProcessor(data []byte) (*ImageProcessor, error) {
	var head struct {
		Type    string `json:"image_processor_type"`
		Feature string `json:"feature_extractor_type"`
	}
	if err := json.Unmarshal(data, &head); err != nil {
		return nil, fmt.Errorf("multimodal: image processor config: %w", err)
	}
	kind := head.Type
	if kind == "" {
		kind = map[string]string{"ViTFeatureExtractor": "ViTImageProcessor", "CLIPFeatureExtractor": "CLIPImageProcessor",
			"VideoMAEFeatureExtractor": "VideoMAEImageProcessor"}[head.Feature]
	}
	p, ok := imageProcessorDefaults(kind)
	if !ok {
		return nil, fmt.Errorf("multimodal: image processor config: image_processor_type %q is not supported (supported: ViTImageProcessor, CLIPImageProcessor, VideoMAEImageProcessor)", head.Type+head.Feature)
	}
	if err := parseConfig("image processor", data, &p, imageKeys(kind)); err != nil {
		return nil, err
	}
	if _, ok := resampleFilters[p.Resample]; !ok && p.DoResize {
		return nil, fmt.Errorf("multimodal: image processor config: key \"resample\": %d is not supported (supported: 1 lanczos, 2 bilinear, 3 bicubic, 4 box, 5 hamming)", p.Resample)
	}
	if p.DoCenterCrop && (p.CropSize.Height < 1 || p.CropSize.Width < 1) {
		return nil, fmt.Errorf("multimodal: image processor config: crop_size %+v must give height and width", p.CropSize)
	}
	if p.DoNormalize && (len(p.ImageMean) != 3 || len(p.ImageStd) != 3) {
		return nil, fmt.Errorf("multimodal: image processor config: image_mean %v and image_std %v must give 3 values (RGB)", p.ImageMean, p.ImageStd)
	}
	return &p, nil
}

// Preprocess turns images into pixel values (B, 3, H, W), float32 on
// dev, as the processor's __call__ gives them: every image must come out
// the same size (a centre crop or a height and width size sees to it).
func (p *ImageProcessor) Preprocess(images []Image, dev core.Device) (*core.Tensor, error) {
	if len(images) == 0 {
		return nil, fmt.Errorf("multimodal: ImageProcessor.Preprocess: no images")
	}
	var out []float32
	var h, w int
	for i, img := range images {
		px, ih, iw, err := p.preprocessOne(img)
		if err != nil {
			return nil, fmt.Errorf("multimodal: ImageProcessor.Preprocess: image %d: %w", i, err)
		}
		if i > 0 && (ih != h || iw != w) {
			return nil, fmt.Errorf("multimodal: ImageProcessor.Preprocess: image %d comes out %dx%d, image 0 %dx%d: they cannot share a batch", i, ih, iw, h, w)
		}
		h, w = ih, iw
		out = append(out, px...)
	}
	return core.FromSlice(out, core.Shape{len(images), 3, h, w}, dev), nil
}

// preprocessOne gives one image's (3, h, w) pixel values.
func (p *ImageProcessor) preprocessOne(img Image) ([]float32, int, int, error) {
	if img.Height < 1 || img.Width < 1 || len(img.Pix) != img.Height*img.Width*3 {
		return nil, 0, 0, fmt.Errorf("%dx%d RGB needs %d bytes, have %d", img.Height, img.Width, img.Height*img.Width*3, len(img.Pix))
	}
	if p.DoResize {
		h, w := p.outputSize(img.Height, img.Width)
		if err := checkImageSize("resizing to", h, w); err != nil {
			return nil, 0, 0, err
		}
		img = resizePIL(img, w, h, resampleFilters[p.Resample])
	}
	if p.DoCenterCrop {
		if err := checkImageSize("a center crop of", p.CropSize.Height, p.CropSize.Width); err != nil {
			return nil, 0, 0, err
		}
		img = centerCrop(img, p.CropSize.Height, p.CropSize.Width)
	}
	n := img.Height * img.Width
	out := make([]float32, 3*n)
	for c := range 3 {
		mean, std := float32(0), float32(1)
		if p.DoNormalize {
			mean, std = float32(p.ImageMean[c]), float32(p.ImageStd[c])
		}
		for i := range n {
			v := float32(img.Pix[i*3+c])
			if p.DoRescale {
				// numpy: the uint8 image widened to float64, scaled, then
				// cast to float32.
				v = float32(float64(img.Pix[i*3+c]) * p.RescaleFactor)
			}
			if p.DoNormalize {
				// numpy's float32 (x - mean) / std.
				v = (v - mean) / std
			}
			out[c*n+i] = v
		}
	}
	return out, img.Height, img.Width, nil
}

// outputSize is the resized (height, width), as transformers'
// get_resize_output_image_size.
func (p *ImageProcessor) outputSize(h, w int) (int, int) {
	if p.Size.ShortestEdge == 0 {
		return p.Size.Height, p.Size.Width
	}
	short, long := min(h, w), max(h, w)
	s := p.Size.ShortestEdge
	if s > maxImagePixels || long > maxImagePixels {
		return s, s // past checkImageSize's bound, and s*long could overflow
	}
	l := int(float64(s*long) / float64(short))
	if w <= h {
		return l, s
	}
	return s, l
}

// maxImagePixels bounds the image a processor resizes or crops to: 8192 x
// 8192, far past any model's input. A corrupt or hostile config (a size
// of 45098) or an extreme image (1 x 100000 under a shortest_edge) is then
// an error naming the size, where the allocation would end the process:
// Go cannot recover from running out of memory.
const maxImagePixels = 1 << 26

// checkImageSize refuses an h x w image past maxImagePixels or not positive.
func checkImageSize(what string, h, w int) error {
	if h < 1 || w < 1 || h > maxImagePixels || w > maxImagePixels || h*w > maxImagePixels {
		return fmt.Errorf("%s %dx%d: want a positive size of at most %d pixels (8192 x 8192)", what, h, w, maxImagePixels)
	}
	return nil
}

// centerCrop is transformers' center_crop: the (h, w) window whose
// top-left is (floor((H-h)/2), floor((W-w)/2)), zeros where it reaches
// past the image.
func centerCrop(img Image, h, w int) Image {
	top := floorDiv(img.Height-h, 2)
	left := floorDiv(img.Width-w, 2)
	out := Image{Height: h, Width: w, Pix: make([]uint8, h*w*3)}
	for y := range h {
		sy := y + top
		if sy < 0 || sy >= img.Height {
			continue
		}
		for x := range w {
			sx := x + left
			if sx < 0 || sx >= img.Width {
				continue
			}
			copy(out.Pix[(y*w+x)*3:(y*w+x)*3+3], img.Pix[(sy*img.Width+sx)*3:])
		}
	}
	return out
}

func floorDiv(a, b int) int {
	q := a / b
	if a%b != 0 && (a < 0) != (b < 0) {
		q--
	}
	return q
}

// precisionBits is Pillow's fixed-point precision for 8-bit resampling.
const precisionBits = 32 - 8 - 2

// resampleCoeffs is Pillow's precompute_coeffs and normalize_coeffs_8bpc
// for one axis: per output index, the first input index, the count, and
// the weights as fixed-point integers.
func resampleCoeffs(inSize, outSize int, f resampleFilter) (bounds []int, ksize int, kk []int32) {
	scale := float64(inSize) / float64(outSize)
	filterScale := max(scale, 1)
	support := f.support * filterScale
	ksize = int(math.Ceil(support))*2 + 1
	bounds = make([]int, 2*outSize)
	kk = make([]int32, outSize*ksize)
	k := make([]float64, ksize)
	for xx := range outSize {
		center := (float64(xx) + 0.5) * scale
		ss := 1 / filterScale
		xmin := max(int(center-support+0.5), 0)
		xmax := min(int(center+support+0.5), inSize) - xmin
		ww := 0.0
		for x := range xmax {
			k[x] = f.kernel((float64(x+xmin) - center + 0.5) * ss)
			ww += k[x]
		}
		for x := range xmax {
			if ww != 0 {
				k[x] /= ww
			}
			if k[x] < 0 {
				kk[xx*ksize+x] = int32(-0.5 + k[x]*(1<<precisionBits))
			} else {
				kk[xx*ksize+x] = int32(0.5 + k[x]*(1<<precisionBits))
			}
		}
		bounds[2*xx], bounds[2*xx+1] = xmin, xmax
	}
	return bounds, ksize, kk
}

// clip8 is Pillow's: the fixed-point sum shifted back and clamped.
func clip8(ss int32) uint8 {
	v := ss >> precisionBits
	return uint8(min(max(v, 0), 255))
}

// resizePIL is Pillow's Image.resize of an RGB image with a convolution
// filter: a horizontal pass, rounded to uint8, then a vertical one, each
// skipped when its size does not change.
func resizePIL(img Image, w, h int, f resampleFilter) Image {
	if w != img.Width {
		bounds, ksize, kk := resampleCoeffs(img.Width, w, f)
		out := Image{Height: img.Height, Width: w, Pix: make([]uint8, img.Height*w*3)}
		for y := range img.Height {
			row := img.Pix[y*img.Width*3:]
			for xx := range w {
				xmin, n := bounds[2*xx], bounds[2*xx+1]
				k := kk[xx*ksize:]
				for c := range 3 {
					ss := int32(1 << (precisionBits - 1))
					for x := range n {
						ss += int32(row[(x+xmin)*3+c]) * k[x]
					}
					out.Pix[(y*w+xx)*3+c] = clip8(ss)
				}
			}
		}
		img = out
	}
	if h != img.Height {
		bounds, ksize, kk := resampleCoeffs(img.Height, h, f)
		out := Image{Height: h, Width: img.Width, Pix: make([]uint8, h*img.Width*3)}
		for yy := range h {
			ymin, n := bounds[2*yy], bounds[2*yy+1]
			k := kk[yy*ksize:]
			for x := range img.Width * 3 {
				ss := int32(1 << (precisionBits - 1))
				for y := range n {
					ss += int32(img.Pix[(y+ymin)*img.Width*3+x]) * k[y]
				}
				out.Pix[yy*img.Width*3+x] = clip8(ss)
			}
		}
		img = out
	}
	return img
}
