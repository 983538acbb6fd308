package abi

import "strings"

// What each wt_call target returns, for docs/calls.md: the result's JSON.
// "tensor" is a new tensor handle the caller owns; "<kind> handle" a new
// object to free with "<kind>.free". TestCallReturnsDocumented holds every
// target to an entry.
var callReturns = map[string]string{
	"audio.resample":     "tensor (..., time at to_hz) on x's device",
	"auto.journal":       "list of the journal's records, oldest first",
	"auto.parallel_plan": `object: "chosen" (null when no plan is feasible, "error" then says why), "candidates", "model", "cluster"`,
	"auto.rollback":      "string: the rollback record's id",
	"auto.tune_graph":    `object: the tune's report ("decisions" sums each one up)`,
	"auto.tune_loader":   `object: the tune's report ("decisions" sums each one up)`,

	"clip.image_features": "tensor (images, projection_dim), not normalised",
	"clip.load":           "clip handle",
	"clip.text_features":  "tensor (texts, projection_dim), not normalised",
	"clip.zero_shot":      "tensor (images, texts): each image's probabilities over the texts",

	"conformer.encode":        `object: "last_hidden_state" tensor (waves, frames, hidden), "frame_mask" tensor (waves, frames) bool or null`,
	"conformer.load":          "conformer handle",
	"conformer.sampling_rate": "integer (Hz)",

	"data.permutation":     "list of n integers: the epoch's record order",
	"dataset.from_tensors": "dataset handle",
	"dataset.get":          "list of tensors: the record, one per field, on device",
	"dataset.info":         `object: "len", "fields" (each "name", "dtype", "shape" of one record), "classes" for an image folder`,
	"dataset.len":          "integer: records",
	"dataset.open":         "dataset handle",
	"loader.epoch":         "null",
	"loader.len":           "integer: batches per epoch",
	"loader.new":           "loader handle",
	"loader.next":          "list of tensors: the batch, one per field; empty at the end of the epoch",

	"diffusion.encode_text":      "tensor (texts, max length, width)",
	"diffusion.generate":         "tensor (batch, C, H, W) in [0, 1] on the pipeline's device",
	"diffusion.generate_classes": "tensor (labels, C, H, W) in [0, 1]",
	"diffusion.generate_text":    "tensor (prompts × images_per_prompt, C, height, width) in [0, 1]",
	"diffusion.info":             `object: "pipeline", "scheduler", "image_shape", "class_conditional", "text_conditional", "device", "weight_bytes", "int8_weights"`,
	"diffusion.load":             "diffusion handle",

	"image_processor.load":             "image_processor handle",
	"image_processor.preprocess":       "tensor (images, 3, H, W) f32 pixel values",
	"image_processor.preprocess_video": "tensor (videos, frames, 3, H, W) f32 pixel values",

	"onnx.info":       `object: "opset", "device", "inputs" and "outputs" (each "name", "kind", "dtype", "shape")`,
	"onnx.load":       "onnx handle",
	"onnx.run":        `list of tensors: the outputs in info's "outputs" order`,
	"onnx.run_values": `object: "layout" (each output by name: an index into "tensors", a list of them, or null) and "tensors"`,

	"sentence_encoder.dim":    "integer: an embedding's length",
	"sentence_encoder.encode": "tensor (texts, dim) f32",
	"sentence_encoder.load":   "sentence_encoder handle",

	"speecht5.generate":      `object: "spectrogram" tensor (texts, frames, mels), "lengths" list of each text's frames, "waveform" tensor (texts, samples) or null`,
	"speecht5.has_vocoder":   "bool",
	"speecht5.load":          "speecht5 handle",
	"speecht5.sampling_rate": "integer (Hz): the vocoder's; an error without one",
	"speecht5.tokenize":      `object: "input_ids", "attention_mask" tensors (texts, length)`,
	"speecht5.vocode":        "tensor (B, samples)",

	"timesformer.forward": `object: "logits" tensor (B, labels) or null, "last_hidden_state" tensor or null`,
	"timesformer.info": `object: "model", "attention_type", "num_frames", "image_size", "patch_size", "num_channels", ` +
		`"hidden_size", "device", and "labels" for a classifier`,
	"timesformer.load": "timesformer handle",

	"tokenizer.batch_decode": "list of strings, one a row",
	"tokenizer.decode":       "string",
	"tokenizer.encode":       `object: "input_ids", "token_type_ids", "attention_mask" tensors (texts, length) i64`,
	"tokenizer.load":         "tokenizer handle",
	"tokenizer.vocab_size":   "integer",

	"video.sample_frame_indices":  "list of clip_len integers",
	"video.uniform_frame_indices": "list of num_frames integers",

	"whisper.generate":      "tensor (waves, length) i64 token ids, padded with the pad token",
	"whisper.load":          "whisper handle",
	"whisper.sampling_rate": "integer (Hz)",
	"whisper.tokenizer":     "tokenizer handle (the model's)",
	"whisper.transcribe":    "list of strings, one a waveform",

	"whisper_stream.new": "whisper_stream handle",
	"whisper_stream.push": `list of updates, one a completed chunk (and the last with final): "chunk", "samples", "committed", ` +
		`"tentative", "committed_text", "tentative_text", "elapsed_ms", "final", "drafted"`,
}

// returnsOf is target's entry; every free returns null.
func returnsOf(target string) string {
	if strings.HasSuffix(target, ".free") || target == "diffusion.quantize_int8" {
		return "null"
	}
	return callReturns[target]
}
