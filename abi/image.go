package abi

import (
	"os"
	"path/filepath"

	"github.com/webtensor/webtensor/core"
	"github.com/webtensor/webtensor/multimodal"
)

// Image processors (the image_processor.* targets): transformers' ViT and CLIP
// image processors from a preprocessor_config.json, which turn uint8 RGB
// images into the pixel values CLIP and ViT take, Pillow's resampling bit
// for bit, so no SDK resizes or normalises an image itself.

var imageProcessors = newObjects[*multimodal.ImageProcessor]("image processor")

// imageProcessorLoad is image_processor.load: a preprocessor_config.json,
// or a folder holding one.
func imageProcessorLoad(path string) (int64, error) {
	const fn = "image_processor.load"
	if err := checkDir(fn, path); err != nil {
		return 0, err
	}
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		path = filepath.Join(path, "preprocessor_config.json")
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		return 0, loadFailed(fn, err)
	}
	p, err := multimodal.ParseImageProcessor(raw)
	if err != nil {
		return 0, Invalidf("%s: %s: %v", fn, path, err)
	}
	return imageProcessors.add(p), nil
}

// imageProcessorLoadBytes is image_processor.load: a
// preprocessor_config.json's bytes.
func imageProcessorLoadBytes(data []byte) (int64, error) {
	p, err := multimodal.ParseImageProcessor(data)
	if err != nil {
		return 0, Invalidf("image_processor.load: %v", err)
	}
	return imageProcessors.add(p), nil
}

// imageProcessorFree is image_processor.free.
func imageProcessorFree(h int64) error { return imageProcessors.free(h) }

// imageProcessorPreprocess is image_processor.preprocess: images, each
// a (height, width, 3) u8 tensor of RGB pixels (numpy's and PIL's layout),
// as pixel values (images, 3, H, W) f32 on device ("": the default).
func imageProcessorPreprocess(h int64, images []int64, device string) (int64, error) {
	const fn = "image_processor.preprocess"
	p, err := imageProcessors.get(h)
	if err != nil {
		return 0, err
	}
	if len(images) == 0 {
		return 0, Invalidf("%s: no images", fn)
	}
	dev, err := modelDevice(device)
	if err != nil {
		return 0, err
	}
	imgs := make([]multimodal.Image, len(images))
	for i, ih := range images {
		t, err := TensorOf(ih)
		if err != nil {
			return 0, Prefix(err, "%s: image %d", fn, i)
		}
		s := t.Shape()
		if len(s) != 3 || s[2] != 3 || t.DType() != core.U8 {
			return 0, Invalidf("%s: image %d has shape %v and dtype %s; want (height, width, 3) u8 RGB", fn, i, s, t.DType())
		}
		pix, err := t.Bytes()
		if err != nil {
			return 0, Prefix(err, "%s: image %d", fn, i)
		}
		imgs[i] = multimodal.Image{Height: s[0], Width: s[1], Pix: pix}
	}
	px, err := p.Preprocess(imgs, dev)
	if err != nil {
		return 0, Invalidf("%s: %v", fn, err)
	}
	return NewOutput(px)
}
