package abi

// callKinds says what each kind of wt_call target is, for docs/calls.md:
// what the C header said of each family of functions before wt_call took
// their place. A kind without an entry fails TestCallKindsDocumented.
var callKinds = map[string]string{
	"audio": "Resampling, as torchaudio.functional.resample does by default (Hann-windowed sinc, " +
		"lowpass_filter_width 6, rolloff 0.99), of x (..., time) on its device.",
	"auto": "Agents that measure a change A/B on the caller's own workload, in this process (a call runs " +
		"for seconds), keep it only when it wins, remember it per name in a kernel cache and journal every " +
		"decision (JSON lines) in a folder. `options` (absent: defaults): \"dir\" (default: auto/ under " +
		"WEBTENSOR_CACHE_DIR or the user cache folder), \"policy\" (\"module.wasm#name\", a loaded plugin's " +
		"\"name#policy\", or \"default#name\": policy-auto.wasm found from the working folder), \"runs\" (9), " +
		"\"margin\" (0.1). tune_loader: the data agent on a loader (workers, prefetch, a record cache, kept " +
		"only if the measured window's batches hash as before; options also \"name\", \"batches\", \"epoch\", " +
		"\"measure\"), the loader changing in place for epochs started after. tune_graph: the kernel agent on " +
		"a graph run on inputs (options also \"name\", \"repeat\", \"grad\"). journal: the records, oldest " +
		"first (options \"dir\", \"ids\"). rollback: restores the state from before kept decision id, " +
		"returning the rollback record's id. parallel_plan: auto-parallel's report on a traced forward pass " +
		"(\"chosen\", null when no plan is feasible, \"candidates\", \"model\", \"cluster\"; options " +
		"\"cluster\", \"webgpu\", \"workers\", \"worker_exe\", \"param_inputs\"). A tune returns a report " +
		"whose \"decisions\" sum each decision up; a missing policy module or folder is WT_ERR_IO.",
	"clip": "A CLIPModel folder (config.json, model.safetensors, tokenizer.json) or a zip archive of one: " +
		"zero-shot probabilities (images, texts) and the projected text and image features.",
	"conformer": "A Wav2Vec2ConformerModel folder with its preprocessor_config.json: the last hidden state " +
		"of waveforms padded to the longest, and optionally each one's frame mask.",
	"data": "permutation: the record order of shuffled epoch `epoch` (Fisher-Yates over Philox4x32-10 " +
		"keyed by seed), for datasets an SDK implements to shuffle as the library's loaders do.",
	"dataset": "A map-style dataset. open reads files named by spec, {\"format\": F, ...} with F one of " +
		"\"npy\" (\"path\", or \"paths\": one .npy file per field, named by its stem), \"npz\", " +
		"\"safetensors\", \"parquet\" (\"path\"; \"keys\" picks and orders the arrays or columns, default all), " +
		"\"images\" (\"path\": a folder with a subfolder per class of PNG/JPEG files; \"mode\": \"rgb\" or " +
		"\"gray\"; \"size\": [h, w] to resize to), or with data one file's bytes (copied; \"name\" labels them " +
		"in errors; an image folder has no such form). A record is one index along every array's first dim. " +
		"A missing or unreadable file is WT_ERR_IO; a malformed one WT_ERR_INVALID naming it. from_tensors is " +
		"PyTorch's TensorDataset (fields named by names, default \"0\", \"1\", ...; values copied to host " +
		"memory). Loaders made from a dataset keep it alive after it is freed.",
	"diffusion": "A diffusers pipeline folder (DDPM, DDIM, DiT, Stable Diffusion; model_index.json) or a zip " +
		"archive of one (checked: paths leaving it, links, zip bombs, truncation). generate samples batch " +
		"images, the noise drawn from the Philox stream of seed, as (batch, C, H, W) in [0, 1]; scheduler " +
		"names a diffusers scheduler class to sample with (absent: the folder's). generate_classes: one " +
		"image per class label (DiT), guidance_scale <= 1 without guidance. generate_text: " +
		"StableDiffusionPipeline, images_per_prompt images per prompt, adjacent; negative_prompts none, one, " +
		"or one per prompt; height and width 0 take the folder's size; latents are diffusers' latents=. " +
		"encode_text: the text encoder states the UNet attends to. quantize_int8: the linear and conv " +
		"weights held as int8 with one f32 scale per output channel from then on. In the browser, " +
		"wt_call takes onStep(step, steps) as its last argument.",
	"image_processor": "transformers' ViT, CLIP or VideoMAE image processor from a preprocessor_config.json " +
		"(a path to it or its folder, or its bytes as data): Pillow's resampling, crop, rescale and " +
		"normalise, bit for bit, on (H, W, 3) u8 RGB images, or (frames, H, W, 3) videos frame by frame.",
	"loader": "PyTorch's DataLoader over a dataset: options \"batch_size\" (1), \"shuffle\" (false), " +
		"\"seed\" (0), \"drop_last\" (false), \"workers\" (0: batches are read in next), \"prefetch\" " +
		"(batches each worker reads ahead, 2), \"cache\" (false: keep every record as first read, if the " +
		"dataset fits \"cache_bytes\", 1 GiB) and \"device\"; unknown keys are refused. A shuffled epoch's " +
		"order is data.permutation(len, seed, epoch), the same in every SDK and for any worker count. epoch " +
		"starts an epoch (ending the one running); next is its next batch, one tensor per field of shape " +
		"[batch, record shape...], an empty list at its end; a batch that could not be read is WT_ERR_INVALID " +
		"naming the file and the record (the epoch goes on). free stops the epoch's workers.",
	"onnx": "An ONNX model (opset 7 and later, the operators onnx/doc.go lists) from a path (external data " +
		"files beside it) or its bytes as data, its weights on device. info: the opset, the device and the " +
		"declared inputs and outputs with their kinds. run: tensor inputs by name, the outputs' handles in " +
		"info's output order. run_values: every kind of value (sequences, optionals, maps as the layout " +
		"says: input name to tensor index, a list of them, or null), the outputs' layout in the same form " +
		"with indices into the returned tensors.",
	"sentence_encoder": "A sentence-transformers folder (modules.json: a BERT Transformer, Pooling and " +
		"optionally Normalize), as all-MiniLM-L6-v2 ships, or a zip archive of one: embeddings " +
		"(texts, dim) as sentence-transformers' encode gives them.",
	"speecht5": "A SpeechT5ForTextToSpeech folder with, optionally, a SpeechT5HifiGan vocoder folder: " +
		"transformers' generate_speech on texts or input ids with speaker embeddings (the spectrogram, each " +
		"text's frames, and the vocoder's waveform when it has one and vocode is true).",
	"timesformer": "A TimesformerForVideoClassification or TimesformerModel folder: logits and the last " +
		"hidden state of pixel values (B, frames, 3, H, W).",
	"tokenizer": "A tokenizer.json (WordPiece or byte-level BPE) as the tokenizers library reads it, from a " +
		"path (the file or its folder) or its bytes as data: encode with the file's truncation and padding " +
		"(pad_id pads to the longest with that id instead), decode, batch_decode of a 2-D ids tensor.",
	"video": "The frame samplers of transformers' video models: sample_frame_indices as TimeSformer's and " +
		"VideoMAE's docs sample after np.random.seed(seed); uniform_frame_indices spread evenly.",
	"whisper": "A WhisperForConditionalGeneration folder with its tokenizer.json (and " +
		"preprocessor_config.json): generate token ids for waveforms at sampling_rate, transcribe to texts; " +
		"tokenizer returns a new tokenizer handle of the model's.",
	"whisper_stream": "Streaming transcription on a whisper model: audio pushed in any pieces is processed " +
		"in chunks of chunk_samples (0: one second); after each, the tokens two consecutive hypotheses agree " +
		"on are committed (LocalAgreement-2). push returns one update per completed chunk (and, with final, " +
		"the last): chunk, samples, committed, tentative, committed_text, tentative_text, elapsed_ms, " +
		"final, drafted.",
}
