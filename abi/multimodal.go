package abi

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/webtensor/webtensor/core"
	"github.com/webtensor/webtensor/internal/modelfs"
	"github.com/webtensor/webtensor/multimodal"
)

// The multimodal library (the tokenizer.*, sentence_encoder.*, clip.* and
// whisper.* targets): package multimodal's tokenizers and models behind
// handles, so every SDK tokenizes, embeds, classifies and transcribes with
// the same Go code and sees the same errors. An SDK passes texts as
// strings and gets tensors back; nothing of a model is re-implemented
// above this file.

var (
	tokenizers       = newObjects[*multimodal.Tokenizer]("tokenizer")
	sentenceEncoders = newObjects[*multimodal.SentenceEncoder]("sentence encoder")
	clipModels       = newObjects[*clipModel]("clip model")
	whisperModels    = newObjects[*whisperModel]("whisper model")
)

// clipModel is a CLIPModel with the tokenizer.json saved beside it: zero
// shot and text features take texts, which only the model's own
// tokenizer turns into the ids it was trained on.
type clipModel struct {
	m   *multimodal.CLIPModel
	tok *multimodal.Tokenizer
}

// whisperModel is what transcription needs from a whisper folder: the
// model, its feature extractor (preprocessor_config.json, or transformers'
// defaults without one) and its tokenizer, which whisper.tokenizer
// hands out to decode the generated ids.
type whisperModel struct {
	m   *multimodal.WhisperForConditionalGeneration
	fe  *multimodal.WhisperFeatureExtractor
	tok *multimodal.Tokenizer
}

// loadFailed classifies a loader's error: the file system's refusals (a
// file missing or unreadable) are WT_ERR_IO, everything else the files'
// contents (WT_ERR_INVALID); fn names the call.
func loadFailed(fn string, err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return Errorf(StatusIO, "%s: %v", fn, err)
	}
	return Invalidf("%s: %v", fn, err)
}

// modelDevice is where a loaded model's weights go: the named device, or
// the default device for "" (the libraries' own default is the CPU; the
// ABI's, everywhere else, is the default device).
func modelDevice(device string) (core.Device, error) {
	dev, err := parseDevice(device)
	if err != nil {
		return core.Device{}, err
	}
	if len(dev) == 0 {
		return core.DefaultDevice(), nil
	}
	return dev[0], nil
}

// loadOptions are the multimodal load options for the model in d: the
// named device (modelDevice) and, when d lies in an archive, its file
// system.
func loadOptions(d modelfs.Dir, device string) ([]multimodal.LoadOption, error) {
	dev, err := modelDevice(device)
	if err != nil {
		return nil, err
	}
	opts := []multimodal.LoadOption{multimodal.WithDevice(dev)}
	if !d.OnDisk() {
		opts = append(opts, multimodal.FromFS(d.FS()))
	}
	return opts, nil
}

// folderOptions checks fn's dir argument and returns the load options for
// the model in that folder on the named device.
func folderOptions(fn, dir, device string) ([]multimodal.LoadOption, error) {
	if err := checkDir(fn, dir); err != nil {
		return nil, err
	}
	return loadOptions(modelfs.OS(dir), device)
}

// ifPresent loads what dir's file name holds with load when the folder has
// the file, and gives fallback when it does not (an optional
// preprocessor_config.json or tokenizer model).
func ifPresent[T any](dir, name string, load func(dir string) (T, error), fallback T) (T, error) {
	if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
		return fallback, nil
	}
	return load(dir)
}

// loadWithFeatures loads an audio model folder for fn: the model (load)
// and its feature extractor, from preprocessor_config.json when the
// folder has one (loadFeatures) or transformers' defaults (defaults).
func loadWithFeatures[M, F any](fn, dir, device string, load func(string, ...multimodal.LoadOption) (M, error),
	loadFeatures func(string) (F, error), defaults F) (M, F, error) {
	var m M
	opts, err := folderOptions(fn, dir, device)
	if err != nil {
		return m, defaults, err
	}
	if m, err = load(dir, opts...); err != nil {
		return m, defaults, loadFailed(fn, err)
	}
	fe, err := ifPresent(dir, "preprocessor_config.json", loadFeatures, defaults)
	if err != nil {
		return m, fe, loadFailed(fn, err)
	}
	return m, fe, nil
}

// fromFolder is the folder entry point of a loader that also reads zip
// archives (load takes either as a modelfs.Dir): dir checked, then read
// from disk.
func fromFolder(fn, dir, device string, load func(fn string, d modelfs.Dir, device string) (int64, error)) (int64, error) {
	if err := checkDir(fn, dir); err != nil {
		return 0, err
	}
	return load(fn, modelfs.OS(dir), device)
}

// checkDir fails with WT_ERR_INVALID when path is empty.
func checkDir(fn, path string) error {
	if path == "" {
		return Invalidf("%s: path is NULL or empty", fn)
	}
	return nil
}

// tokenizerLoad is tokenizer.load: a tokenizer.json file, or a folder
// holding one.
func tokenizerLoad(path string) (int64, error) {
	if err := checkDir("tokenizer.load", path); err != nil {
		return 0, err
	}
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		path = filepath.Join(path, "tokenizer.json")
	}
	t, err := multimodal.LoadTokenizer(path)
	if err != nil {
		return 0, loadFailed("tokenizer.load", err)
	}
	return tokenizers.add(t), nil
}

// tokenizerLoadBytes is tokenizer.load: a tokenizer.json's bytes.
func tokenizerLoadBytes(data []byte) (int64, error) {
	t, err := multimodal.ParseTokenizer(data)
	if err != nil {
		return 0, Invalidf("tokenizer.load: %v", err)
	}
	return tokenizers.add(t), nil
}

// tokenizerFree is tokenizer.free.
func tokenizerFree(h int64) error { return tokenizers.free(h) }

// Encoded are a batch's (B, S) int64 ids, type ids and attention mask.
type Encoded struct{ IDs, TypeIDs, Mask int64 }

// tokenizerEncode is tokenizer.encode: texts tokenized with the file's
// truncation and padding, then, when padID >= 0, padded on the right to
// the batch's longest with padID (type id 0, mask 0): tensors are not
// ragged, so a batch of different lengths needs padding from one or the
// other. The tensors are on device ("": the default).
func tokenizerEncode(h int64, texts []string, addSpecial bool, padID int64, device string) (Encoded, error) {
	const fn = "tokenizer.encode"
	tok, err := tokenizers.get(h)
	if err != nil {
		return Encoded{}, err
	}
	if len(texts) == 0 {
		return Encoded{}, Invalidf("%s: no texts", fn)
	}
	dev, err := modelDevice(device)
	if err != nil {
		return Encoded{}, err
	}
	if padID >= 0 {
		pad := multimodal.Padding{PadID: int(padID)}
		if name, ok := tok.IDToToken(int(padID)); ok {
			pad.PadToken = name
		}
		if tok, err = tok.WithPadding(pad); err != nil {
			return Encoded{}, Invalidf("%s: %v", fn, err)
		}
	}
	encs, err := tok.EncodeBatch(texts, addSpecial)
	if err != nil {
		return Encoded{}, Invalidf("%s: %v", fn, err)
	}
	for i, e := range encs {
		if e.Len() != encs[0].Len() {
			return Encoded{}, Invalidf("%s: text %d has %d tokens and text 0 %d, and the tokenizer pads nothing: pass a pad id (pad_id >= 0)",
				fn, i, e.Len(), encs[0].Len())
		}
	}
	if encs[0].Len() == 0 {
		return Encoded{}, Invalidf("%s: the texts have no tokens (empty texts without special tokens)", fn)
	}
	in, err := multimodal.BatchTensors(encs, dev)
	if err != nil {
		return Encoded{}, Invalidf("%s: %v", fn, err)
	}
	var out Encoded
	for _, p := range []struct {
		dst *int64
		t   *core.Tensor
	}{{&out.IDs, in.IDs}, {&out.TypeIDs, in.TypeIDs}, {&out.Mask, in.AttentionMask}} {
		if *p.dst, err = NewOutput(p.t); err != nil {
			freeHandles(out.IDs, out.TypeIDs)
			return Encoded{}, err
		}
	}
	return out, nil
}

// freeHandles drops handles a call made before it failed.
func freeHandles(hs ...int64) {
	for _, h := range hs {
		if h != 0 {
			_ = TensorFree(h)
		}
	}
}

// tokenizerDecode is tokenizer.decode: ids back to text, as the
// tokenizers library's decode gives it.
func tokenizerDecode(h int64, ids []int64, skipSpecial bool) (string, error) {
	tok, err := tokenizers.get(h)
	if err != nil {
		return "", err
	}
	in := make([]int, len(ids))
	size := int64(tok.VocabSize()) // a walk of the added tokens: once, not per id
	for i, id := range ids {
		if id < 0 || id >= size {
			return "", Invalidf("tokenizer.decode: id %d (at %d) is outside the vocabulary (0..%d)", id, i, size-1)
		}
		in[i] = int(id)
	}
	s, err := tok.Decode(in, skipSpecial)
	if err != nil {
		return "", Invalidf("tokenizer.decode: %v", err)
	}
	return s, nil
}

// tokenizerVocabSize is tokenizer.vocab_size: the model's tokens and
// the added ones.
func tokenizerVocabSize(h int64) (int, error) {
	tok, err := tokenizers.get(h)
	if err != nil {
		return 0, err
	}
	return tok.VocabSize(), nil
}

// sentenceEncoderLoad is sentence_encoder.load: a sentence-transformers
// folder (modules.json, the Transformer's files, the Pooling's config).
func sentenceEncoderLoad(dir, device string) (int64, error) {
	return fromFolder("sentence_encoder.load", dir, device, sentenceEncoderLoadDir)
}

// sentenceEncoderLoadDir loads the sentence-transformers folder d for fn.
func sentenceEncoderLoadDir(fn string, d modelfs.Dir, device string) (int64, error) {
	opts, err := loadOptions(d, device)
	if err != nil {
		return 0, err
	}
	e, err := multimodal.LoadSentenceEncoder(d.String(), opts...)
	if err != nil {
		return 0, loadFailed(fn, err)
	}
	return sentenceEncoders.add(e), nil
}

// sentenceEncoderFree is sentence_encoder.free.
func sentenceEncoderFree(h int64) error { return sentenceEncoders.free(h) }

// defaultBatch is sentence-transformers' encode batch size.
const defaultBatch = 32

// sentenceEncoderEncode is sentence_encoder.encode: the embeddings
// (len(texts), dim) on the model's device; batchSize 0 is 32, as
// sentence-transformers' encode takes.
func sentenceEncoderEncode(h int64, texts []string, batchSize int) (int64, error) {
	e, err := sentenceEncoders.get(h)
	if err != nil {
		return 0, err
	}
	if batchSize == 0 {
		batchSize = defaultBatch
	}
	emb, err := e.Encode(texts, batchSize)
	if err != nil {
		return 0, Invalidf("sentence_encoder.encode: %v", err)
	}
	return NewOutput(emb)
}

// sentenceEncoderDim is sentence_encoder.dim: an embedding's length.
func sentenceEncoderDim(h int64) (int, error) {
	e, err := sentenceEncoders.get(h)
	if err != nil {
		return 0, err
	}
	return e.Pooling.Dim * max(len(poolingModes(e.Pooling)), 1), nil
}

// poolingModes counts the pooled vectors concatenated per sentence, as
// SentenceEncoder.pool concatenates them.
func poolingModes(p multimodal.PoolingConfig) []bool {
	var on []bool
	for _, m := range []bool{p.CLSToken, p.MaxTokens, p.MeanTokens, p.MeanSqrtLen} {
		if m {
			on = append(on, m)
		}
	}
	return on
}

// clipLoad is clip.load: a CLIPModel folder save_pretrained wrote with
// its tokenizer.json.
func clipLoad(dir, device string) (int64, error) {
	return fromFolder("clip.load", dir, device, clipLoadDir)
}

// clipLoadDir loads the CLIPModel folder d, with its tokenizer.json, for fn.
func clipLoadDir(fn string, d modelfs.Dir, device string) (int64, error) {
	opts, err := loadOptions(d, device)
	if err != nil {
		return 0, err
	}
	m, err := multimodal.LoadCLIPModel(d.String(), opts...)
	if err != nil {
		return 0, loadFailed(fn, err)
	}
	raw, err := d.ReadFile("tokenizer.json")
	if err != nil {
		return 0, loadFailed(fn, err)
	}
	tok, err := multimodal.ParseTokenizer(raw)
	if err != nil {
		return 0, loadFailed(fn, fmt.Errorf("%w (in %s)", err, d.Path("tokenizer.json")))
	}
	return clipModels.add(&clipModel{m: m, tok: tok}), nil
}

// clipFree is clip.free.
func clipFree(h int64) error { return clipModels.free(h) }

// onModel is the tensor behind h on dev: an input on another device is
// copied to the model's, as onnx.run copies it.
func onModel(fn, what string, h int64, dev core.Device) (*core.Tensor, error) {
	t, err := TensorOf(h)
	if err != nil {
		return nil, Prefix(err, "%s: %s", fn, what)
	}
	if t.Device() != dev {
		t = t.To(dev)
	}
	return t, t.Err()
}

// clipZeroShot is clip.zero_shot: each image's probabilities over the
// texts, (images, texts), from pixel values (images, 3, H, W).
func clipZeroShot(h, pixels int64, texts []string) (int64, error) {
	const fn = "clip.zero_shot"
	c, err := clipModels.get(h)
	if err != nil {
		return 0, err
	}
	if len(texts) == 0 {
		return 0, Invalidf("%s: no texts", fn)
	}
	px, err := onModel(fn, "pixels", pixels, c.m.Device())
	if err != nil {
		return 0, err
	}
	probs, err := c.m.ZeroShot(c.tok, texts, px)
	if err != nil {
		return 0, Invalidf("%s: %v", fn, err)
	}
	return NewOutput(probs)
}

// clipTextFeatures is clip.text_features: the projected text
// embeddings (texts, projection_dim), not normalised, as transformers'
// get_text_features gives them.
func clipTextFeatures(h int64, texts []string) (int64, error) {
	const fn = "clip.text_features"
	c, err := clipModels.get(h)
	if err != nil {
		return 0, err
	}
	if len(texts) == 0 {
		return 0, Invalidf("%s: no texts", fn)
	}
	encs, err := c.tok.EncodeBatch(texts, true)
	if err != nil {
		return 0, Invalidf("%s: %v", fn, err)
	}
	in, err := multimodal.BatchTensors(encs, c.m.Device())
	if err != nil {
		return 0, Invalidf("%s: %v", fn, err)
	}
	f, err := c.m.TextFeatures(in.IDs, in.AttentionMask)
	if err != nil {
		return 0, Invalidf("%s: %v", fn, err)
	}
	return NewOutput(f)
}

// clipImageFeatures is clip.image_features: the projected image
// embeddings (images, projection_dim) of pixel values.
func clipImageFeatures(h, pixels int64) (int64, error) {
	const fn = "clip.image_features"
	c, err := clipModels.get(h)
	if err != nil {
		return 0, err
	}
	px, err := onModel(fn, "pixels", pixels, c.m.Device())
	if err != nil {
		return 0, err
	}
	f, err := c.m.ImageFeatures(px)
	if err != nil {
		return 0, Invalidf("%s: %v", fn, err)
	}
	return NewOutput(f)
}

// whisperLoad is whisper.load: a WhisperForConditionalGeneration folder
// (config.json, model.safetensors, generation_config.json) with its
// tokenizer.json and, when present, preprocessor_config.json.
func whisperLoad(dir, device string) (int64, error) {
	const fn = "whisper.load"
	m, fe, err := loadWithFeatures(fn, dir, device, multimodal.LoadWhisperForConditionalGeneration,
		multimodal.LoadWhisperFeatureExtractor, multimodal.NewWhisperFeatureExtractor())
	if err != nil {
		return 0, err
	}
	if fe.FeatureSize != m.Model.Config.NumMelBins {
		return 0, Invalidf("%s: preprocessor_config.json's feature_size %d differs from config.json's num_mel_bins %d",
			fn, fe.FeatureSize, m.Model.Config.NumMelBins)
	}
	tok, err := multimodal.LoadTokenizer(filepath.Join(dir, "tokenizer.json"))
	if err != nil {
		return 0, loadFailed(fn, err)
	}
	return whisperModels.add(&whisperModel{m: m, fe: fe, tok: tok}), nil
}

// whisperFree is whisper.free; a tokenizer whisper.tokenizer gave
// stays valid.
func whisperFree(h int64) error { return whisperModels.free(h) }

// whisperTokenizer is whisper.tokenizer: a new handle to the model's
// tokenizer, for decoding what whisper.generate returns.
func whisperTokenizer(h int64) (int64, error) {
	w, err := whisperModels.get(h)
	if err != nil {
		return 0, err
	}
	return tokenizers.add(w.tok), nil
}

// whisperSamplingRate is whisper.sampling_rate: the rate the feature
// extractor expects waveforms at (16000 for Whisper).
func whisperSamplingRate(h int64) (int, error) {
	w, err := whisperModels.get(h)
	if err != nil {
		return 0, err
	}
	return w.fe.SamplingRate, nil
}

// whisperGenerate is whisper.generate: each waveform (a 1-D float
// tensor at the sampling rate, padded or cut to the feature extractor's
// window) transcribed, greedily or with numBeams beams, as (B, L) int64
// ids on the CPU: each row's ids after the prompt, padded with
// pad_token_id to the longest, as transformers' generate returns them.
// maxNewTokens and numBeams 0 take the generation config's.
func whisperGenerate(h int64, waves []int64, maxNewTokens, numBeams int) (int64, error) {
	const fn = "whisper.generate"
	w, err := whisperModels.get(h)
	if err != nil {
		return 0, err
	}
	if len(waves) == 0 {
		return 0, Invalidf("%s: no waveforms", fn)
	}
	if maxNewTokens < 0 || numBeams < 0 {
		return 0, Invalidf("%s: max_new_tokens %d and num_beams %d must be >= 0", fn, maxNewTokens, numBeams)
	}
	host := make([][]float32, len(waves))
	for i, wh := range waves {
		if host[i], err = waveform(wh, i); err != nil {
			return 0, Prefix(err, "%s", fn)
		}
	}
	feats, err := w.fe.Extract(host, w.m.Model.Device(), false)
	if err != nil {
		return 0, Invalidf("%s: %v", fn, err)
	}
	seqs, err := w.m.Generate(feats, multimodal.GenerateOptions{MaxNewTokens: maxNewTokens, NumBeams: numBeams})
	if err != nil {
		return 0, Invalidf("%s: %v", fn, err)
	}
	n := 0
	for _, s := range seqs {
		n = max(n, len(s))
	}
	ids := make([]int64, len(seqs)*n)
	for i, s := range seqs {
		row := ids[i*n : (i+1)*n]
		for j := range row {
			row[j] = int64(w.m.Generation.PadTokenID)
			if j < len(s) {
				row[j] = int64(s[j])
			}
		}
	}
	return NewOutput(core.FromSlice(ids, core.Shape{len(seqs), n}, core.CPU))
}

// waveform reads wave i's samples to the host as float32.
func waveform(h int64, i int) ([]float32, error) {
	t, err := TensorOf(h)
	if err != nil {
		return nil, Prefix(err, "waveform %d", i)
	}
	if len(t.Shape()) != 1 || !t.DType().IsFloat() {
		return nil, Invalidf("waveform %d has shape %v and dtype %s; want a 1-D float tensor of samples", i, t.Shape(), t.DType())
	}
	// Float32s reads any float dtype from any device to the host.
	v, err := t.Float32s()
	if err != nil {
		return nil, fmt.Errorf("waveform %d: %w", i, err)
	}
	return v, nil
}
