/* webtensor_domains.h: the domain libraries' part of the C ABI: their
 * methods by name (wt_call: ONNX import, multimodal models, diffusion
 * pipelines, datasets and loaders, auto-agents; docs/calls.md lists them).
 * Include webtensor.h, which includes this inside its prototype block; the
 * conventions (statuses, handles, buffers, the wt_attr records) are
 * webtensor.h's. */
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
 * kept behind out for wt_call_result_json (with cap too small it is
 * WT_ERR_BUFFER_TOO_SMALL and *needed, the text's size with its NUL, and the
 * result stays: a call cannot be rerun to fill a larger buffer) until
 * wt_call_result_free. The targets and their arguments are listed in
 * docs/calls.md. */
int32_t wt_call(const char *target, int64_t self, const char *args_json, const void *data, size_t nbytes,
                wt_call_result *out);
int32_t wt_call_result_json(wt_call_result result, char *buf, size_t cap, size_t *needed);
int32_t wt_call_result_free(wt_call_result result);

#endif /* WEBTENSOR_DOMAINS_H */
