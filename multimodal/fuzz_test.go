package multimodal

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/webtensor/webtensor/core"
)

// addSeedFiles adds the testdata files at paths as seeds of f.
func addSeedFiles(f *testing.F, paths ...string) {
	for _, p := range paths {
		raw, err := os.ReadFile(filepath.Join("testdata", filepath.FromSlash(p)))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(raw)
	}
}

// FuzzParseTokenizer feeds the tokenizer.json reader arbitrary bytes, as
// tokenizer.load's data does from every SDK: each input is a tokenizer or
// an error, never a panic, and a tokenizer that loads encodes and decodes
// (or refuses to) without one either.
func FuzzParseTokenizer(f *testing.F) {
	addSeedFiles(f, "whisper_bpe/tokenizer.json", "gpt2_bpe/tokenizer.json", "clip_bpe/tokenizer.json")
	f.Add([]byte(`{"model": {"type": "WordPiece", "unk_token": "[UNK]", "vocab": {"[UNK]": 0, "a": 1, "##b": 2}},
		"normalizer": {"type": "BertNormalizer", "lowercase": true}, "pre_tokenizer": {"type": "BertPreTokenizer"},
		"decoder": {"type": "WordPiece", "prefix": "##"}}`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		tok, err := ParseTokenizer(raw)
		if err != nil {
			return
		}
		for _, text := range []string{"", "a b ab", "Hello, world! \u00e9\u4e16 \U0001F600", "  \t\n"} {
			if _, err := tok.Encode(text, true); err != nil {
				continue
			}
		}
		ids := make([]int, 0, 64)
		for id := range min(tok.VocabSize(), 64) {
			ids = append(ids, id)
		}
		_, _ = tok.Decode(ids, false)
		_, _ = tok.Decode(ids, true)
	})
}

// FuzzParseImageProcessor feeds preprocessor_config.json's reader arbitrary
// bytes (image_processor.load's data): a processor that loads preprocesses
// a small image, or refuses to, without a panic.
func FuzzParseImageProcessor(f *testing.F) {
	addSeedFiles(f, "timesformer_tiny/preprocessor_config.json")
	f.Add([]byte(`{"image_processor_type": "CLIPImageProcessor", "size": {"shortest_edge": 8}, "crop_size": {"height": 6, "width": 6},
		"do_resize": true, "do_center_crop": true, "do_rescale": true, "do_normalize": true, "resample": 3,
		"image_mean": [0.5, 0.5, 0.5], "image_std": [0.5, 0.5, 0.5], "rescale_factor": 0.00392156862745098}`))
	f.Add([]byte(`{"image_processor_type": "ViTImageProcessor", "size": {"height": 4, "width": 4}, "do_resize": true, "resample": 2}`))
	img := Image{Height: 5, Width: 7, Pix: make([]uint8, 5*7*3)}
	for i := range img.Pix {
		img.Pix[i] = uint8(i * 37)
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		p, err := ParseImageProcessor(raw)
		if err != nil {
			return
		}
		out, err := p.Preprocess([]Image{img}, core.CPU)
		if err == nil {
			out.Release()
		}
	})
}

// FuzzParseWhisperFeatureExtractor feeds a Whisper preprocessor_config.json
// arbitrary bytes (whisper.load reads one from the model's folder): each is
// an extractor or an error, and one that loads extracts a short waveform's
// features (or refuses to) without a panic or an allocation past memory.
func FuzzParseWhisperFeatureExtractor(f *testing.F) {
	addSeedFiles(f, "whisper_tiny/preprocessor_config.json")
	f.Add([]byte(`{"feature_size": 8, "sampling_rate": 16000, "hop_length": 16, "chunk_length": 1, "n_fft": 32}`))
	wave := make([]float32, 1600)
	for i := range wave {
		wave[i] = float32(i%50) / 50
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		fe, err := ParseWhisperFeatureExtractor(raw)
		if err != nil || fe.NFrames()*(fe.NFFT/2+1+fe.FeatureSize) > 1<<22 {
			return // refused, or a long window whose features are honest work, not this test's business
		}
		if out, err := fe.Extract([][]float32{wave}, core.CPU, true); err == nil {
			out.Release()
		}
	})
}

// FuzzParseSentencePiece feeds the SentencePiece model reader (SpeechT5's
// spm_char.model, read by speecht5.load) arbitrary bytes: its protobuf and
// its precompiled normalisation trie are parsed by hand, so each input is a
// model or an error, and a model normalises and encodes text without a
// panic.
func FuzzParseSentencePiece(f *testing.F) {
	addSeedFiles(f, "speecht5_tiny/spm_char.model")
	f.Fuzz(func(t *testing.T, raw []byte) {
		sp, err := parseSentencePiece(raw, "spm_char.model")
		if err != nil {
			return
		}
		for _, text := range []string{"", "Hello, my dog is cute.", "\u00c5\uff21 \u2167 ﬁ\t\n", "\xff\xfe"} {
			for _, id := range sp.encode(text) {
				_ = sp.piece(id)
			}
		}
	})
}
