/* webtensor's C ABI, continued: speech synthesis (SpeechT5 with its
 * HiFi-GAN vocoder) and streaming Whisper recognition. webtensor.h includes
 * this file inside its prototypes; include webtensor.h, not this file. */
#ifndef WEBTENSOR_SPEECH_H
#define WEBTENSOR_SPEECH_H

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
 * hypothesis (0: the generation config's). A config that detects the
 * language is WT_ERR_INVALID: force one to stream. */
int32_t wt_whisper_stream_new(wt_whisper model, int32_t chunk_samples, int32_t max_new_tokens, int32_t window_samples,
                              int32_t trim_encoder, wt_whisper_stream *out);
int32_t wt_whisper_stream_free(wt_whisper_stream stream);
/* Adds samples (a 1-D float tensor at the sampling rate, or 0 for none),
 * processes every whole chunk, and with final nonzero the rest and the end
 * of the stream (everything committed). *updates (may be NULL) is the
 * number of updates this call made; wt_whisper_stream_read gives them. */
int32_t wt_whisper_stream_push(wt_whisper_stream stream, wt_tensor samples, int32_t final, int32_t *updates);
/* The last push's updates as a UTF-8 JSON array of objects: chunk,
 * samples (processed so far), committed and tentative (token ids),
 * committed_text and tentative_text (special tokens dropped), elapsed_ms
 * (the time the chunk took: features, encoder, decoder) and final. */
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

#endif /* WEBTENSOR_SPEECH_H */
