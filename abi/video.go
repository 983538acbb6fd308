package abi

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/webtensor/webtensor/core"
	"github.com/webtensor/webtensor/core/safetensors"
	"github.com/webtensor/webtensor/multimodal"
)

// Video models (the timesformer.* targets) and their front end
// (image_processor.preprocess_video, video.*_frame_indices):
// package multimodal's TimeSformer, VideoMAE's per-frame processing and
// the frame samplers of transformers' docs and video processors.

var timesformerModels = newObjects[*timesformerModel]("timesformer model")

// timesformerModel is a TimesformerModel folder, or a
// TimesformerForVideoClassification one (cls set).
type timesformerModel struct {
	m   *multimodal.TimesformerModel
	cls *multimodal.TimesformerForVideoClassification
}

// hasClassifier says whether a model.safetensors holds classifier.weight
// (a TimesformerForVideoClassification's), reading only its header.
func hasClassifier(path string) (bool, error) {
	f, err := os.Open(path)
	if err != nil {
		return false, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return false, err
	}
	var n [8]byte
	if _, err := io.ReadFull(f, n[:]); err != nil {
		return false, fmt.Errorf("%s: %w", path, err)
	}
	hl := binary.LittleEndian.Uint64(n[:])
	if hl > uint64(st.Size()-8) {
		return false, fmt.Errorf("%s: header length %d exceeds the %d-byte file", path, hl, st.Size())
	}
	prefix := make([]byte, 8+hl)
	copy(prefix, n[:])
	if _, err := io.ReadFull(f, prefix[8:]); err != nil {
		return false, fmt.Errorf("%s: %w", path, err)
	}
	h, err := safetensors.ParseHeader(prefix, st.Size())
	if err != nil {
		return false, fmt.Errorf("%s: %w", path, err)
	}
	for _, e := range h.Entries {
		if e.Name == "classifier.weight" {
			return true, nil
		}
	}
	return false, nil
}

// timesformerLoad is timesformer.load: a folder save_pretrained wrote
// for a TimesformerForVideoClassification (its tensors include
// classifier.weight) or a TimesformerModel.
func timesformerLoad(dir, device string) (int64, error) {
	const fn = "timesformer.load"
	opts, err := folderOptions(fn, dir, device)
	if err != nil {
		return 0, err
	}
	cls, err := hasClassifier(filepath.Join(dir, "model.safetensors"))
	if err != nil {
		return 0, loadFailed(fn, err)
	}
	var tm timesformerModel
	if cls {
		if tm.cls, err = multimodal.LoadTimesformerForVideoClassification(dir, opts...); err == nil {
			tm.m = tm.cls.Timesformer
		}
	} else {
		tm.m, err = multimodal.LoadTimesformerModel(dir, opts...)
	}
	if err != nil {
		return 0, loadFailed(fn, err)
	}
	return timesformerModels.add(&tm), nil
}

// timesformerFree is timesformer.free.
func timesformerFree(h int64) error { return timesformerModels.free(h) }

// timesformerInfoJSON is timesformer.info: the class, the sizes
// pixel values must have and, for a classifier, its labels by id.
func timesformerInfoJSON(h int64) (string, error) {
	tm, err := timesformerModels.get(h)
	if err != nil {
		return "", err
	}
	c := tm.m.Config
	info := map[string]any{"model": "TimesformerModel", "attention_type": c.AttentionType, "num_frames": c.NumFrames,
		"image_size": c.ImageSize, "patch_size": c.PatchSize, "num_channels": c.NumChannels, "hidden_size": c.HiddenSize,
		"device": tm.m.Device().String()}
	if tm.cls != nil {
		info["model"], info["labels"] = "TimesformerForVideoClassification", c.Labels
	}
	b, err := json.Marshal(info)
	return string(b), err
}

// timesformerForward is timesformer.forward: one encoding of pixel
// values (B, frames, channels, H, W), copied to the model's device when
// elsewhere, giving the logits (wantLogits; a classifier only) and the
// last hidden state (wantHidden). An output not wanted is 0.
func timesformerForward(h, pixels int64, wantLogits, wantHidden bool) (logits, hidden int64, err error) {
	const fn = "timesformer.forward"
	tm, err := timesformerModels.get(h)
	if err != nil {
		return 0, 0, err
	}
	switch {
	case !wantLogits && !wantHidden:
		return 0, 0, Invalidf("%s: logits and last_hidden_state are both NULL: nothing to compute", fn)
	case wantLogits && tm.cls == nil:
		return 0, 0, Invalidf("%s: the checkpoint is a TimesformerModel, without a classifier: ask for last_hidden_state only", fn)
	}
	px, err := onModel(fn, "pixels", pixels, tm.m.Device())
	if err != nil {
		return 0, 0, err
	}
	out, err := tm.m.Forward(px)
	if err != nil {
		return 0, 0, Invalidf("%s: %v", fn, err)
	}
	if wantLogits {
		l, err := tm.cls.Logits(out)
		if err != nil {
			return 0, 0, Invalidf("%s: %v", fn, err)
		}
		if logits, err = NewOutput(l); err != nil {
			return 0, 0, err
		}
	}
	if wantHidden {
		if hidden, err = NewOutput(out.LastHiddenState); err != nil {
			freeHandles(logits)
			return 0, 0, err
		}
	}
	return logits, hidden, nil
}

// imageProcessorPreprocessVideo is image_processor.preprocess_video:
// videos, each a (frames, height, width, 3) u8 tensor of RGB frames (a
// decoded clip's numpy layout), as pixel values (videos, frames, 3, H, W)
// f32 on device ("": the default), every frame processed on its own.
func imageProcessorPreprocessVideo(h int64, videos []int64, device string) (int64, error) {
	const fn = "image_processor.preprocess_video"
	p, err := imageProcessors.get(h)
	if err != nil {
		return 0, err
	}
	if len(videos) == 0 {
		return 0, Invalidf("%s: no videos", fn)
	}
	dev, err := modelDevice(device)
	if err != nil {
		return 0, err
	}
	clips := make([][]multimodal.Image, len(videos))
	for i, vh := range videos {
		t, err := TensorOf(vh)
		if err != nil {
			return 0, Prefix(err, "%s: video %d", fn, i)
		}
		s := t.Shape()
		if len(s) != 4 || s[0] < 1 || s[3] != 3 || t.DType() != core.U8 {
			return 0, Invalidf("%s: video %d has shape %v and dtype %s; want (frames, height, width, 3) u8 RGB", fn, i, s, t.DType())
		}
		pix, err := t.Bytes()
		if err != nil {
			return 0, Prefix(err, "%s: video %d", fn, i)
		}
		n := s[1] * s[2] * 3
		clips[i] = make([]multimodal.Image, s[0])
		for f := range clips[i] {
			clips[i][f] = multimodal.Image{Height: s[1], Width: s[2], Pix: pix[f*n : (f+1)*n]}
		}
	}
	px, err := p.PreprocessVideos(clips, dev)
	if err != nil {
		return 0, Invalidf("%s: %v", fn, err)
	}
	return NewOutput(px)
}

// maxFrameIndices bounds the indices a sampler call makes, as
// MaxInputs bounds an op's inputs: a corrupted count fails here rather
// than in an allocation (an hour at 240 fps is under a million frames).
const maxFrameIndices = 1 << 24

// indicesTensor is frame indices as a 1-D i64 tensor on the CPU.
func indicesTensor(idx []int) (int64, error) {
	v := make([]int64, len(idx))
	for i, x := range idx {
		v[i] = int64(x)
	}
	return NewOutput(core.FromSlice(v, core.Shape{len(v)}, core.CPU))
}

// videoSampleFrameIndices is video.sample_frame_indices: the
// sample_frame_indices of transformers' TimeSformer and VideoMAE docs
// after np.random.seed(seed), as a 1-D i64 tensor on the CPU.
func videoSampleFrameIndices(clipLen, frameSampleRate, segLen int, seed uint32) (int64, error) {
	if err := CheckCount("clip_len", int64(clipLen), maxFrameIndices); err != nil {
		return 0, Prefix(err, "video.sample_frame_indices")
	}
	idx, err := multimodal.SampleFrameIndices(clipLen, frameSampleRate, segLen, multimodal.NewNumpyRandom(seed))
	if err != nil {
		return 0, Invalidf("video.sample_frame_indices: %v", err)
	}
	return indicesTensor(idx)
}

// videoUniformFrameIndices is video.uniform_frame_indices: numFrames
// indices spread evenly over total frames, as transformers' video
// processors sample them, as a 1-D i64 tensor on the CPU.
func videoUniformFrameIndices(total, numFrames int) (int64, error) {
	if err := CheckCount("num_frames", int64(numFrames), maxFrameIndices); err != nil {
		return 0, Prefix(err, "video.uniform_frame_indices")
	}
	idx, err := multimodal.UniformFrameIndices(total, numFrames)
	if err != nil {
		return 0, Invalidf("video.uniform_frame_indices: %v", err)
	}
	return indicesTensor(idx)
}
