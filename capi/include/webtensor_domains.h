/* webtensor_domains.h: the domain libraries' part of the C ABI (ONNX
 * import, multimodal models, diffusion pipelines, datasets and loaders,
 * auto-agents). Include webtensor.h, which includes this inside its
 * prototype block; the conventions (statuses, handles, buffers, the
 * wt_attr records) are webtensor.h's. */
#ifndef WEBTENSOR_DOMAINS_H
#define WEBTENSOR_DOMAINS_H

#ifndef WEBTENSOR_H
#error "include webtensor.h, not webtensor_domains.h"
#endif

/* ---- Domain methods by name (abi/call.go) --------------------------------------- */

/* Run a domain library's method: target names it ("sentence_encoder.encode",
 * "whisper_stream.push", "video.uniform_frame_indices"; a wrong one is
 * WT_ERR_INVALID listing its kind's targets), self is the object's handle
 * (0 for a load or a plain function), args_json one JSON object of the
 * arguments by name (NULL or "": none; null means the default; tensors and
 * objects as their handles; an argument the method does not take is
 * WT_ERR_INVALID naming the ones it does) and data, nbytes the bytes a
 * loader reads (a tokenizer.json, a zip archive of a model folder; read
 * only during the call). Every argument is checked before any work starts.
 * The result is JSON (tensors and objects as new handles the caller owns),
 * kept behind out for wt_call_result_json (the buffer protocol of
 * wt_last_error; a call cannot be rerun to fill a larger buffer) until
 * wt_call_result_free. The targets and their arguments are listed in
 * docs/calls.md. */
int32_t wt_call(const char *target, int64_t self, const char *args_json, const void *data, size_t nbytes,
                wt_call_result *out);
int32_t wt_call_result_json(wt_call_result result, char *buf, size_t cap, size_t *needed);
int32_t wt_call_result_free(wt_call_result result);

/* ---- ONNX models (the importer: onnx/) ----------------------------------------- */

/* Import an ONNX model (opset 7 and later, the operators onnx/doc.go lists)
 * with its weights on device (NULL or "": the default). Every node's
 * operator and attributes are checked here: an unsupported one is
 * WT_ERR_INVALID naming the node and its op_type; a malformed or hostile
 * protobuf (huge dims, cycles, missing initializers) is WT_ERR_INVALID too,
 * never a crash. wt_onnx_load reads external data files beside path (never
 * outside its folder); a missing or unreadable file is WT_ERR_IO.
 * wt_onnx_load_bytes reads a serialized ModelProto (only during the call)
 * and refuses external data, having no folder to read it from. */
int32_t wt_onnx_load(const char *path, const char *device, wt_onnx *out);
int32_t wt_onnx_load_bytes(const void *buf, size_t nbytes, const char *device, wt_onnx *out);
/* Tensors a run returned stay valid after the model is freed. */
int32_t wt_onnx_free(wt_onnx model);
/* The graph's inputs a caller supplies (initializers excluded) and its
 * outputs, by index in the model's order. */
int32_t wt_onnx_input_count(wt_onnx model, int32_t *count);
int32_t wt_onnx_input_name(wt_onnx model, int32_t index, char *buf, size_t cap, size_t *needed);
int32_t wt_onnx_output_count(wt_onnx model, int32_t *count);
int32_t wt_onnx_output_name(wt_onnx model, int32_t index, char *buf, size_t cap, size_t *needed);
/* The model as JSON: {"opset": 17, "device": "cpu", "inputs": [{"name": "x",
 * "kind": "tensor", "dtype": "f32", "shape": [1, "batch", null]}],
 * "outputs": [...]}. kind is "tensor", "sequence" (of tensors),
 * "optional_tensor", "optional_sequence" or "strings" (ONNX STRING
 * tensors, which no call carries yet: such a model runs only from Go);
 * dtype and shape then describe the tensors inside. A dim is a number, a symbolic name (ONNX's dim_param)
 * or null; a shape is null when the rank is not declared, a dtype "" when
 * the type is not (an input declared with no type at all says "tensor" and
 * takes a value of any kind). A value of an ONNX type webtensor holds
 * widened also has "narrow": the type's name ("UINT16" in "i32",
 * "FLOAT8E4M3FN" in "f32", ...). */
int32_t wt_onnx_info_json(wt_onnx model, char *buf, size_t cap, size_t *needed);
/* Run the model: inputs[i] is the tensor named names[i] (a graph input, or
 * an initializer the graph also lists as an input, to override it); every
 * input must be given once, with the declared dtype and rank, and symbolic
 * dims must agree across inputs. Inputs on another device are copied to the
 * model's. The outputs come as new handles in wt_onnx_output_name order;
 * with out_cap below wt_onnx_output_count the status is
 * WT_ERR_BUFFER_TOO_SMALL, *n_outputs is set and no handle is made (the
 * model has run: size outputs by the count beforehand). An operator that
 * fails names its node. */
int32_t wt_onnx_run(wt_onnx model, const char *const *names, const wt_tensor *inputs, int32_t n_inputs,
                    wt_tensor *outputs, int32_t out_cap, int32_t *n_outputs);
/* Run a model whose inputs or outputs may be sequences or optionals (any
 * model: wt_onnx_run is the shorter call for tensors only, and refuses
 * the others naming them). The tensors come as one flat list and
 * layout_json groups them into the named inputs: {"x": 0, "parts": [1, 2],
 * "maybe": null} gives x tensors[0], the sequence parts tensors[1] and
 * tensors[2] ([] is an empty sequence) and the optional maybe None; an
 * optional holding a value is written as that value. The rules are
 * wt_onnx_run's (every input given once, initializers overridable by name,
 * inputs copied to the model's device), and besides: every tensor belongs
 * to some input (one may be in several), none is 0, and each value must
 * be of its input's kind (wt_onnx_info_json). Anything else (bad JSON, an
 * index outside 0..n_tensors-1, a list for a tensor, null for a sequence)
 * is WT_ERR_INVALID naming the input and what was wrong.
 * The model runs once: its outputs are held behind *out until
 * wt_onnx_values_free, since a sequence's length is known only after the
 * run. wt_onnx_values_layout_json gives the outputs' layout in the same
 * form, every output in wt_onnx_output_name order ({"pieces": [0, 1, 2],
 * "y": 3, "maybe_out": null}); wt_onnx_values_tensors writes the tensors
 * it indexes as new handles, all n_outputs of them, each call making new
 * ones (the out_cap protocol of wt_onnx_run: with out_cap too small the
 * status is WT_ERR_BUFFER_TOO_SMALL, *n_outputs is set and no handle is
 * made; ask again, nothing runs again). Handles made stay valid after
 * wt_onnx_values_free and wt_onnx_free. */
int32_t wt_onnx_run_values(wt_onnx model, const wt_tensor *tensors, int32_t n_tensors, const char *layout_json,
                           wt_onnx_values *out);
int32_t wt_onnx_values_layout_json(wt_onnx_values values, char *buf, size_t cap, size_t *needed);
int32_t wt_onnx_values_tensors(wt_onnx_values values, wt_tensor *outputs, int32_t out_cap, int32_t *n_outputs);
int32_t wt_onnx_values_free(wt_onnx_values values);

/* ---- Multimodal models (multimodal/): Hugging Face folders ------------------------ */

/* Every load reads the files save_pretrained (or sentence-transformers)
 * wrote, strictly: a missing, misshaped or unexpected tensor, or a config
 * value the library does not implement, is WT_ERR_INVALID naming it; a
 * missing or unreadable file is WT_ERR_IO. device NULL or "" is the default
 * device. Tensors a call returned stay valid after the object is freed.
 * texts are n_texts UTF-8 strings, none NULL. */

/* A tokenizer.json (path may be the file or a folder holding it), or its
 * bytes (read only during the call). A component the library does not
 * implement fails naming it rather than giving other ids. */
int32_t wt_tokenizer_load(const char *path, wt_tokenizer *out);
int32_t wt_tokenizer_load_bytes(const void *buf, size_t nbytes, wt_tokenizer *out);
int32_t wt_tokenizer_free(wt_tokenizer tok);
/* The vocabulary's size, added tokens included. */
int32_t wt_tokenizer_vocab_size(wt_tokenizer tok, int32_t *size);
/* Tokenizes texts with the file's truncation and padding, adding the
 * special tokens ([CLS] ... [SEP]) when add_special is nonzero. With
 * pad_id >= 0 the batch is padded on the right to its longest with that id
 * instead (type id 0, mask 0); without, texts of different lengths are
 * WT_ERR_INVALID unless the file pads. Each output is a new (n_texts,
 * length) i64 tensor on device: the ids, the token type ids and the
 * attention mask; type_ids and mask may be NULL when not wanted. */
int32_t wt_tokenizer_encode(wt_tokenizer tok, const char *const *texts, int32_t n_texts, int32_t add_special,
                            int64_t pad_id, const char *device, wt_tensor *ids, wt_tensor *type_ids, wt_tensor *mask);
/* The text of n ids, as the tokenizers library decodes them (special
 * tokens dropped when skip_special is nonzero); an id outside the
 * vocabulary is WT_ERR_INVALID. The text is UTF-8 and may hold NUL bytes
 * (a token may decode to one): its length is *needed - 1. */
int32_t wt_tokenizer_decode(wt_tokenizer tok, const int64_t *ids, int64_t n, int32_t skip_special, char *buf, size_t cap,
                            size_t *needed);

/* transformers' ViT, CLIP or VideoMAE image processor from a
 * preprocessor_config.json (path may be the file or its folder) or its
 * bytes: Pillow's resampling, centre crop, rescale and normalise, bit for
 * bit. */
int32_t wt_image_processor_load(const char *path, wt_image_processor *out);
int32_t wt_image_processor_load_bytes(const void *buf, size_t nbytes, wt_image_processor *out);
int32_t wt_image_processor_free(wt_image_processor proc);
/* n_images images, each a (height, width, 3) u8 tensor of RGB pixels, as
 * pixel values: a new (n_images, 3, H, W) f32 tensor on device (every image
 * must come out the same size; a centre crop sees to it). */
int32_t wt_image_processor_preprocess(wt_image_processor proc, const wt_tensor *images, int32_t n_images,
                                      const char *device, wt_tensor *out);
/* n_videos videos, each a (frames, height, width, 3) u8 tensor of RGB
 * frames (a decoded clip's layout), as pixel values: a new (n_videos,
 * frames, 3, H, W) f32 tensor on device, every frame processed on its own
 * as VideoMAEImageProcessor does (the videos need the same frame count). */
int32_t wt_image_processor_preprocess_video(wt_image_processor proc, const wt_tensor *videos, int32_t n_videos,
                                            const char *device, wt_tensor *out);
/* Which frames of a clip of seg_len frames to decode: the
 * sample_frame_indices of transformers' TimeSformer and VideoMAE docs after
 * np.random.seed(seed) (a window of clip_len * frame_sample_rate frames
 * ending at numpy's randint, clip_len indices spread over it), the same
 * indices numpy gives; a clip of no more than clip_len * frame_sample_rate
 * frames is WT_ERR_INVALID. The indices come as a new (clip_len,) i64
 * tensor on the CPU. */
int32_t wt_video_sample_frame_indices(int32_t clip_len, int32_t frame_sample_rate, int32_t seg_len, uint32_t seed,
                                      wt_tensor *out);
/* num_frames indices spread evenly over total frames (i * total /
 * num_frames), as transformers' video processors sample: a new
 * (num_frames,) i64 tensor on the CPU. */
int32_t wt_video_uniform_frame_indices(int32_t total, int32_t num_frames, wt_tensor *out);

/* A sentence-transformers folder (modules.json: a BERT Transformer, a
 * Pooling and optionally a Normalize, as all-MiniLM-L6-v2 ships). */
int32_t wt_sentence_encoder_load(const char *dir, const char *device, wt_sentence_encoder *out);
/* The same from a zip archive of such a folder (modules.json at the
 * archive's root, or in its one top-level folder as `zip -r model.zip
 * model` nests it), read from buf only during the call: for callers without
 * a file system (the browser). The archive is checked as
 * wt_diffusion_load_zip checks one (paths leaving it, symbolic links, names
 * given twice, zip bombs, truncation, more than 64 GiB declared, 2 GiB in
 * WebAssembly): WT_ERR_INVALID naming the entry, as is a file the model
 * needs and the archive lacks. */
int32_t wt_sentence_encoder_load_zip(const void *buf, size_t nbytes, const char *device, wt_sentence_encoder *out);
int32_t wt_sentence_encoder_free(wt_sentence_encoder enc);
/* The length of one embedding. */
int32_t wt_sentence_encoder_dim(wt_sentence_encoder enc, int32_t *dim);
/* Embeds texts in batches of batch_size (0: 32, sentence-transformers'
 * default), each padded to its longest: a new (n_texts, dim) f32 tensor on
 * the model's device, unit-norm when the folder has a Normalize module. */
int32_t wt_sentence_encoder_encode(wt_sentence_encoder enc, const char *const *texts, int32_t n_texts,
                                   int32_t batch_size, wt_tensor *out);

/* A CLIPModel folder (config.json, model.safetensors) with its tokenizer.json. */
int32_t wt_clip_load(const char *dir, const char *device, wt_clip *out);
/* The same from a zip archive of such a folder (config.json at its root or
 * in its one top-level folder), with wt_sentence_encoder_load_zip's checks
 * and errors. */
int32_t wt_clip_load_zip(const void *buf, size_t nbytes, const char *device, wt_clip *out);
int32_t wt_clip_free(wt_clip clip);
/* Zero-shot classification: each image's probabilities over the texts
 * ("a photo of a cat"), a new (images, n_texts) tensor; pixels are pixel
 * values (images, 3, H, W) as CLIP's image processor makes them, copied to
 * the model's device when elsewhere. */
int32_t wt_clip_zero_shot(wt_clip clip, wt_tensor pixels, const char *const *texts, int32_t n_texts, wt_tensor *out);
/* The projected embeddings (not normalised), as transformers'
 * get_text_features and get_image_features give them. */
int32_t wt_clip_text_features(wt_clip clip, const char *const *texts, int32_t n_texts, wt_tensor *out);
int32_t wt_clip_image_features(wt_clip clip, wt_tensor pixels, wt_tensor *out);

/* A TimesformerForVideoClassification folder (its model.safetensors holds
 * classifier.weight) or a TimesformerModel one, as save_pretrained wrote
 * it: divided space-time, joint or space-only attention. */
int32_t wt_timesformer_load(const char *dir, const char *device, wt_timesformer *out);
int32_t wt_timesformer_free(wt_timesformer model);
/* {"model": "TimesformerForVideoClassification", "attention_type":
 * "divided_space_time", "num_frames": 8, "image_size": 224, "patch_size":
 * 16, "num_channels": 3, "hidden_size": 768, "device": "cpu", "labels":
 * [...]}: labels (id2label by id) for a classifier only. */
int32_t wt_timesformer_info_json(wt_timesformer model, char *buf, size_t cap, size_t *needed);
/* One forward of pixel values (B, frames, channels, H, W), as
 * wt_image_processor_preprocess_video makes them, copied to the model's
 * device when elsewhere: the logits, a new (B, labels) tensor, and the
 * last hidden state (after the final LayerNorm), a new (B, 1 + patches *
 * frames, hidden) tensor; space_only gives (B * frames, ...) of both, as
 * transformers does. Either output may be NULL, not both; logits of a
 * TimesformerModel (no classifier) are WT_ERR_INVALID. Divided attention
 * takes num_frames frames whose width is image_size, as transformers'
 * layer assumes. */
int32_t wt_timesformer_forward(wt_timesformer model, wt_tensor pixels, wt_tensor *logits,
                               wt_tensor *last_hidden_state);

/* A WhisperForConditionalGeneration folder (config.json, model.safetensors,
 * generation_config.json, tokenizer.json, and preprocessor_config.json or
 * transformers' default feature extractor). */
int32_t wt_whisper_load(const char *dir, const char *device, wt_whisper *out);
int32_t wt_whisper_free(wt_whisper model);
/* The sample rate waveforms must have (16000 for Whisper). */
int32_t wt_whisper_sampling_rate(wt_whisper model, int32_t *rate);
/* A new handle to the model's tokenizer, to decode generated ids. */
int32_t wt_whisper_tokenizer(wt_whisper model, wt_tokenizer *out);
/* Transcribes n_waves waveforms (1-D float tensors at the sampling rate,
 * padded or cut to the feature extractor's window): the log-mel features,
 * then greedy decoding (num_beams 0 or 1) or beam search with a KV cache,
 * as transformers' generate(do_sample=False) gives them. The ids come as a
 * new (n_waves, length) i64 tensor on the CPU: each row's tokens after the
 * prompt, padded with pad_token_id (a special token: wt_tokenizer_decode
 * with skip_special drops it). max_new_tokens and num_beams 0 take the
 * generation config's. */
int32_t wt_whisper_generate(wt_whisper model, const wt_tensor *waves, int32_t n_waves, int32_t max_new_tokens,
                            int32_t num_beams, wt_tensor *out);

/* A streaming transcriber on a whisper model (which it keeps using after
 * wt_whisper_free): audio arrives in chunks of chunk_samples (0: one second
 * at the sampling rate, at most the feature extractor's window); after each
 * chunk the buffered audio is transcribed greedily with the committed
 * tokens forced and prefilled in one decoder call, and the tokens two
 * consecutive hypotheses agree on are committed (LocalAgreement-2). The
 * encoder runs over the whole padded window every chunk: Whisper's
 * bidirectional encoder cannot be prefilled chunk by chunk exactly;
 * trim_encoder nonzero runs it over the buffered audio only (whisper.cpp's
 * audio_ctx), faster but no longer transformers' output. A window of
 * window_samples (0: the feature extractor's, its maximum) that fills up
 * is committed whole and a new one starts. max_new_tokens bounds each
 * hypothesis (0: the generation config's), and tokens_per_second, when
 * positive, bounds it at that many tokens per second of buffered audio
 * (speech is about 3; 5 or more cuts only a hallucination loop). The
 * previous hypothesis is verified as a draft in the prefill call, so a
 * stable transcript costs one decoder call a chunk. A config that detects
 * the language is WT_ERR_INVALID: force one to stream. */
int32_t wt_whisper_stream_new(wt_whisper model, int32_t chunk_samples, int32_t max_new_tokens, int32_t window_samples,
                              int32_t trim_encoder, double tokens_per_second, wt_whisper_stream *out);
int32_t wt_whisper_stream_free(wt_whisper_stream stream);
/* Adds samples (a 1-D float tensor at the sampling rate, or 0 for none),
 * processes every whole chunk, and with final nonzero the rest and the end
 * of the stream (everything committed). *updates (may be NULL) is the
 * number of updates this call made; wt_whisper_stream_read gives them. */
int32_t wt_whisper_stream_push(wt_whisper_stream stream, wt_tensor samples, int32_t final, int32_t *updates);
/* The last push's updates as a UTF-8 JSON array of objects: chunk,
 * samples (processed so far), committed and tentative (token ids),
 * committed_text and tentative_text (special tokens dropped), elapsed_ms
 * (the time the chunk took: features, encoder, decoder), final and drafted
 * (tokens of the previous hypothesis taken without a decoder call each). */
int32_t wt_whisper_stream_read(wt_whisper_stream stream, char *buf, size_t cap, size_t *needed);

/* A SpeechT5ForTextToSpeech folder (config.json, model.safetensors, and
 * spm_char.model with tokenizer_config.json for wt_speecht5_tokenize) and,
 * when vocoder_dir is neither NULL nor "", a SpeechT5HifiGan folder
 * (config.json, model.safetensors) to turn spectrograms into waveforms. */
int32_t wt_speecht5_load(const char *dir, const char *vocoder_dir, const char *device, wt_speecht5 *out);
int32_t wt_speecht5_free(wt_speecht5 model);
/* The vocoder's sampling rate; WT_ERR_INVALID without a vocoder. */
int32_t wt_speecht5_sampling_rate(wt_speecht5 model, int32_t *rate);
/* n_texts texts as SpeechT5Tokenizer encodes them (</s> appended), padded
 * with pad_token_id: new (n_texts, length) i64 tensors on the model's
 * device, the ids and (when mask is not NULL) the attention mask. A folder
 * without spm_char.model is WT_ERR_INVALID. */
int32_t wt_speecht5_tokenize(wt_speecht5 model, const char *const *texts, int32_t n_texts, wt_tensor *ids,
                             wt_tensor *mask);
/* transformers' generate_speech: ids (B, T) i64 and their mask (0: the ids
 * that are not pad_token_id) through the encoder, then greedy decoding of
 * mel frames with a KV cache until each row's summed stop probability
 * reaches threshold (0: 0.5) after int(T * minlenratio / reduction_factor)
 * steps, or int(T * maxlenratio / reduction_factor) steps (maxlenratio 0:
 * 20), then the postnet. speakers is (B or 1, speaker_embedding_dim).
 * prenet_dropout nonzero applies the prenet's dropout, as transformers
 * always does, with masks drawn from seed (transformers' own draws cannot
 * be reproduced); zero makes the output deterministic. prefix (0: none) is
 * mel frames (B or 1, L, mels), L a multiple of reduction_factor, that the
 * speech starts with, prefilled through the decoder prefill_chunk steps at
 * a time (0: at once). Outputs: the spectrogram, a new (B, frames, mels)
 * tensor padded with zeros; the lengths, a new (B) i64 tensor on the CPU;
 * when waveform is not NULL, the vocoder's new (B, samples) tensor (row i's
 * first lengths[i] * samples / frames samples are its own). */
int32_t wt_speecht5_generate(wt_speecht5 model, wt_tensor ids, wt_tensor mask, wt_tensor speakers, double threshold,
                             double minlenratio, double maxlenratio, int32_t prenet_dropout, uint64_t seed,
                             wt_tensor prefix, int32_t prefill_chunk, wt_tensor *spectrogram, wt_tensor *lengths,
                             wt_tensor *waveform);
/* The vocoder on a spectrogram (B, frames, mels) or (frames, mels): a new
 * (B, samples) or (samples) tensor. */
int32_t wt_speecht5_vocode(wt_speecht5 model, wt_tensor spectrogram, wt_tensor *out);

/* A Wav2Vec2ConformerModel folder (config.json, model.safetensors, and
 * preprocessor_config.json or transformers' default Wav2Vec2FeatureExtractor):
 * a Conformer speech encoder with relative or rotary positions. */
int32_t wt_conformer_load(const char *dir, const char *device, wt_conformer *out);
int32_t wt_conformer_free(wt_conformer model);
/* The sample rate waveforms must have (the feature extractor's, 16000 by default). */
int32_t wt_conformer_sampling_rate(wt_conformer model, int32_t *rate);
/* Encodes n_waves waveforms (1-D float tensors at the sampling rate): the
 * feature extractor pads them to the longest (with its attention mask and
 * normalisation), then the encoder runs, as transformers'
 * model(**extractor(waves, padding=True)). out is a new (n_waves, frames,
 * hidden_size) tensor on the model's device, its last_hidden_state;
 * frame_mask, when not NULL, a new (n_waves, frames) bool tensor marking
 * each waveform's own frames (for pooling). */
int32_t wt_conformer_encode(wt_conformer model, const wt_tensor *waves, int32_t n_waves, wt_tensor *out,
                            wt_tensor *frame_mask);
/* Resamples x (..., time), float, from from_hz to to_hz as
 * torchaudio.functional.resample does by default (Hann-windowed sinc,
 * lowpass_filter_width 6, rolloff 0.99): a new tensor of ceil(time * to_hz /
 * from_hz) samples on x's device. Rates whose reduced ratio needs a filter
 * of more than 2^24 taps (44101 to 16000) are WT_ERR_INVALID. */
int32_t wt_audio_resample(wt_tensor x, int32_t from_hz, int32_t to_hz, wt_tensor *out);

/* ---- Diffusion pipelines (diffuse/) -------------------------------------------------- */

/* A folder save_pretrained wrote for a DDPMPipeline or DDIMPipeline
 * (model_index.json, unet/, scheduler/), a DiTPipeline (transformer/,
 * vae/, scheduler/) or a StableDiffusionPipeline (unet/, vae/,
 * text_encoder/: a CLIPTextModel, tokenizer/: tokenizer.json or vocab.json
 * and merges.txt, scheduler/; its safety checker is not run), with
 * diffusers' names and strictness as above. */
int32_t wt_diffusion_load(const char *dir, const char *device, wt_diffusion *out);
/* The same from a zip archive of such a folder (its files at the
 * archive's root, or in its one top-level folder as `zip -r pipe.zip pipe`
 * nests them), read from buf only during the call: for callers without a
 * file system (the browser). The archive is checked before anything is
 * read: paths leaving its root, symbolic links, names given twice, sizes
 * its compressed data cannot hold (zip bombs), data past its end
 * (truncation) and archives declaring more than 64 GiB uncompressed (2 GiB
 * in WebAssembly) are WT_ERR_INVALID naming the entry, as is a file the
 * pipeline needs and the archive lacks. */
int32_t wt_diffusion_load_zip(const void *buf, size_t nbytes, const char *device, wt_diffusion *out);
int32_t wt_diffusion_free(wt_diffusion pipe);
/* {"pipeline": "DDPMPipeline", "scheduler": "DDPMScheduler", "image_shape":
 * [3, 16, 16], "class_conditional": false, "text_conditional": false,
 * "device": "cpu", "weight_bytes": 709708, "int8_weights": false}; a
 * text-to-image pipeline's image_shape is its default size; weight_bytes
 * is what the models' weights take as held (int8 layers: their i8 weights
 * and f32 scales). */
int32_t wt_diffusion_info_json(wt_diffusion pipe, char *buf, size_t cap, size_t *needed);
/* From now on the pipeline's models hold their linear and conv weights as
 * int8, symmetric with one f32 scale per output channel (max|w|/127), each
 * dequantised when its layer runs: about a quarter of the f32 bytes, with
 * images 44 to 55 dB PSNR from the f32 weights' on the test models. A second
 * call does nothing; it waits for samplings running on the pipeline. */
int32_t wt_diffusion_quantize_int8(wt_diffusion pipe);
/* Samples batch images with steps inference steps, the noise drawn from
 * the Philox stream of seed (the same images for a seed on one device), as
 * a new (batch, C, H, W) tensor in [0, 1] on the pipeline's device.
 * scheduler names a diffusers scheduler class (DDIMScheduler,
 * EulerDiscreteScheduler, ...) to sample with, its config converted from
 * the folder's; NULL or "" keeps the folder's. A class-conditional
 * pipeline is WT_ERR_INVALID here: it takes wt_diffusion_generate_classes. */
int32_t wt_diffusion_generate(wt_diffusion pipe, int32_t batch, int32_t steps, uint64_t seed, const char *scheduler,
                              wt_tensor *out);
/* One image per class label (DiT), with classifier-free guidance at
 * guidance_scale (<= 1: none; diffusers' default is 4); otherwise as
 * wt_diffusion_generate. */
int32_t wt_diffusion_generate_classes(wt_diffusion pipe, const int64_t *labels, int32_t n_labels, int32_t steps,
                                      uint64_t seed, double guidance_scale, const char *scheduler, wt_tensor *out);
/* Text to image (StableDiffusionPipeline): images_per_prompt (0: 1)
 * images for each prompt, adjacent, as a new (n_prompts ×
 * images_per_prompt, C, height, width) tensor in [0, 1] on the pipeline's
 * device. Prompts are truncated and padded to the tokenizer's
 * model_max_length; negative_prompts are none (the empty prompt), one for
 * all or one per prompt; guidance_scale <= 1 runs without classifier-free
 * guidance (diffusers' default is 7.5). height and width 0 take the
 * folder's default size, others must be multiples of the VAE's scale
 * factor. latents, when not 0, are the initial latents (diffusers'
 * latents=; copied to the pipeline's device), the seed's stream then
 * drawing only what a stochastic scheduler draws; otherwise the seed's
 * stream draws them. scheduler is as for wt_diffusion_generate. */
int32_t wt_diffusion_generate_text(wt_diffusion pipe, const char *const *prompts, int32_t n_prompts,
                                   const char *const *negative_prompts, int32_t n_negative, int32_t images_per_prompt,
                                   int32_t steps, uint64_t seed, double guidance_scale, int32_t height, int32_t width,
                                   const char *scheduler, wt_tensor latents, wt_tensor *out);
/* A text-to-image pipeline's text encoder states for n_texts texts, what
 * its UNet attends to: a new (n_texts, max length, width) tensor. */
int32_t wt_diffusion_encode_text(wt_diffusion pipe, const char *const *texts, int32_t n_texts, wt_tensor *out);
/* ---- datasets and loaders (package data) ---------------------------------------- */

/* Open a built-in dataset; spec_json is {"format": F, ...} with F one of
 * "npy" ("path", or "paths": one .npy file per field, named by its stem),
 * "npz", "safetensors", "parquet" ("path"; "keys" picks and orders the
 * arrays or columns, default all), "images" ("path": a folder with a
 * subfolder per class of PNG/JPEG files; "mode": "rgb" or "gray"; "size":
 * [h, w] to resize to). A record is one index along every array's first
 * dim (a Parquet row; an image and its label). A missing or unreadable
 * file is WT_ERR_IO; a malformed one WT_ERR_INVALID naming it.
 * wt_dataset_open_bytes reads one file's bytes (copied; "name" labels it in
 * errors); an image folder has no such form. */
int32_t wt_dataset_open(const char *spec_json, wt_dataset *out);
int32_t wt_dataset_open_bytes(const char *spec_json, const void *buf, size_t nbytes, wt_dataset *out);
/* PyTorch's TensorDataset: record i is tensors[k][i] for every k, all of one
 * first dim; names (NULL: "0", "1", ...) name the fields. The values are
 * copied to host memory. */
int32_t wt_dataset_from_tensors(const wt_tensor *tensors, const char *const *names, int32_t n, wt_dataset *out);
/* Loaders made from a dataset keep it alive after it is freed. */
int32_t wt_dataset_free(wt_dataset dataset);
int32_t wt_dataset_len(wt_dataset dataset, int64_t *len);
/* {"len": 5, "fields": [{"name": "x", "dtype": "f32", "shape": [2, 3]}],
 * "classes": ["cat", "dog"]}: shapes are one record's; classes only for an
 * image folder (a label indexes them). */
int32_t wt_dataset_info_json(wt_dataset dataset, char *buf, size_t cap, size_t *needed);
/* Record index as one new tensor per field, on device (NULL or "": the
 * default); out_cap below the field count is WT_ERR_BUFFER_TOO_SMALL. */
int32_t wt_dataset_get(wt_dataset dataset, int64_t index, const char *device, wt_tensor *outputs,
                       int32_t out_cap, int32_t *n_outputs);
/* A loader, PyTorch's DataLoader: options_json (NULL: defaults) holds
 * "batch_size" (1), "shuffle" (false), "seed" (0), "drop_last" (false),
 * "workers" (0: batches are read in wt_loader_next), "prefetch" (batches
 * each worker reads ahead, 2), "cache" (false: keep every record as first
 * read, if the dataset fits "cache_bytes", 1 GiB) and "device" (the
 * default device); unknown keys are WT_ERR_INVALID. A shuffled epoch's order is
 * wt_data_permutation(len, seed, epoch): the same in every SDK and for any
 * worker count. */
int32_t wt_loader_new(wt_dataset dataset, const char *options_json, wt_loader *out);
/* Stops the running epoch's workers; batches already returned stay valid. */
int32_t wt_loader_free(wt_loader loader);
/* Batches per epoch. */
int32_t wt_loader_len(wt_loader loader, int64_t *len);
/* Start epoch (its order, its workers), ending the one running. */
int32_t wt_loader_epoch(wt_loader loader, int64_t epoch);
/* The running epoch's next batch, one new tensor per field of shape
 * [batch, record shape...]; *n_outputs is 0 at the end of the epoch. A batch
 * that could not be read is WT_ERR_INVALID naming the file and the record
 * (the epoch goes on). out_cap below the field count is
 * WT_ERR_BUFFER_TOO_SMALL and no batch is taken. */
int32_t wt_loader_next(wt_loader loader, wt_tensor *outputs, int32_t out_cap, int32_t *n_outputs);
/* out[0..n) is the record order of shuffled epoch `epoch` (Fisher-Yates
 * over Philox4x32-10 keyed by seed): for datasets an SDK implements. */
int32_t wt_data_permutation(int64_t n, uint64_t seed, int64_t epoch, int64_t *out);

/* ---- auto-agents (package auto) ------------------------------------------------ */

/* Agents that measure a change A/B on the caller's own workload, in this
 * process (a call runs for seconds), keep it only when it wins, remember
 * it per name in a kernel cache and journal every decision (JSON lines)
 * in a folder. Options (NULL: defaults): "dir" (default: auto/ under
 * WEBTENSOR_CACHE_DIR or the user cache folder), "policy" ("module.wasm#
 * name", a loaded plugin's "name#policy", or "default#name": policy-
 * auto.wasm found from the working folder), "runs" (9), "margin" (0.1).
 * A tune's buf must hold 16384 bytes, checked before it runs, else
 * WT_ERR_BUFFER_TOO_SMALL; it gets a report whose "decisions" sum each
 * decision up (wt_auto_journal_json has the records). A missing policy
 * module or folder is WT_ERR_IO. */
/* The data agent on a loader: workers, prefetch, a record cache, kept only
 * if the measured window's batches hash as before. Options also: "name"
 * ("loader"), "batches" (a run reads, min(16, an epoch's)), "epoch" (0),
 * "measure" (false: apply the remembered pipeline only). The loader
 * changes in place for epochs started after. */
int32_t wt_auto_tune_loader(wt_loader loader, const char *options_json, char *buf, size_t cap, size_t *needed);
/* The kernel agent on a graph run on inputs: the CPU backend's threads and
 * cache, for the whole process. Options also: "name" ("graph"),
 * "repeat" (graph runs a measured run makes; 0: about 10 ms), "grad"
 * (false: run under no-grad). */
int32_t wt_auto_tune_graph(wt_graph graph, const wt_tensor *inputs, int32_t n_inputs, const char *options_json,
                           char *buf, size_t cap, size_t *needed);
/* The journal as a JSON array, oldest first; options: "dir", "ids". */
int32_t wt_auto_journal_json(const char *options_json, char *buf, size_t cap, size_t *needed);
/* Restore the state from before kept decision id, undoing kept ones after
 * it; buf (32 bytes) gets the rollback record's id. A state naming
 * loaders this process has not tuned under the same name is refused. */
int32_t wt_auto_rollback(const char *options_json, const char *id, char *buf, size_t cap, size_t *needed);
/* Auto-parallel on a traced forward pass (its input 0 is the batch): the
 * report as JSON - "chosen" (null when no plan is feasible, "error" then
 * says why), "candidates" (single-device, data, tensor, sequence and
 * pipeline plans, each with "step_seconds", "memory_bytes", "feasible"
 * and "why"), "model" (FLOPs, parameter and activation bytes, what
 * sequence and tensor parallel exchange) and "cluster". Options: "cluster"
 * (a description: "devices" with "name", "kind" cpu|webgpu|process,
 * "gflops", "gbps", "memory_bytes"; "links" from "parent" to each
 * process), or measure this machine: the CPU, "webgpu" (false), and
 * "workers" processes of "worker_exe" (a program serving as a worker
 * when WT_PARALLEL_WORKER=1, such as the webtensor CLI); "param_inputs"
 * (graph inputs that are parameters). Measuring takes about a second and
 * is redone by a call repeated for a larger buffer. */
int32_t wt_auto_parallel_plan(wt_graph graph, const char *options_json, char *buf, size_t cap, size_t *needed);

#endif /* WEBTENSOR_DOMAINS_H */
