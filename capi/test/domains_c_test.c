/*
 * domains_c_test.c — the domain libraries through the C ABI's wt_call: a byte-level
 * BPE tokenizer from bytes, CLIP zero-shot, Whisper generation and
 * TimeSformer's video pipeline (frame sampling, VideoMAE preprocessing,
 * logits) on the tiny checkpoints of multimodal/testdata against the reference vectors
 * transformers gave (read with wt_state_load), a Conformer encoding and a
 * resampling against transformers' and torchaudio's, and a diffusion pipeline
 * sampled twice with one seed. Run from the repository root (run.sh does).
 */
#define TEST_FILE "capi/test/domains_c_test.c"
#include "harness.h"

#define MM "multimodal/testdata/"

/* ref loads the tensor name of a safetensors file as a new handle. */
static wt_tensor ref(const char *path, const char *name) {
  wt_state s = 0;
  wt_tensor t = 0;
  if (!OK(wt_state_load(path, "cpu", 0, &s))) return 0;
  int32_t n = 0;
  OK(wt_state_count(s, &n));
  char buf[128];
  size_t needed = 0;
  for (int32_t i = 0; i < n && t == 0; i++) {
    if (wt_state_name(s, i, buf, sizeof buf, &needed) == WT_OK && strcmp(buf, name) == 0) OK(wt_state_get(s, i, &t));
  }
  CHECK(t != 0);
  OK(wt_state_free(s));
  return t;
}

static void test_tokenizer(void) {
  FILE *f = fopen(MM "whisper_bpe/tokenizer.json", "rb");
  if (!CHECK(f != NULL)) return;
  static char json[1 << 16];
  size_t len = fread(json, 1, sizeof json, f);
  fclose(f);
  int64_t tok = field(call_("tokenizer.load", 0, NULL, json, len, __LINE__), NULL);
  if (!CHECK(tok > 0)) return;
  /* whisper_refs.json's first decode case. */
  const char *text = CALL("tokenizer.decode", tok, "{\"ids\": [601, 609, 542, 78, 11, 489, 597, 67, 0, 600], "
                                                   "\"skip_special_tokens\": true}");
  CHECK(text && strcmp(text, "\"Hello, world!\"") == 0);
  CALL_ERR("tokenizer.decode", tok, "{\"ids\": [1048576]}", WT_ERR_INVALID, "outside the vocabulary");
  CALL_ERR("tokenizer.decode", tok, "{\"ids\": [1], \"skip\": true}", WT_ERR_INVALID,
           "tokenizer.decode: unknown argument skip (it takes ids, skip_special_tokens)");

  const char *texts = "\"texts\": [\"Hello, world!\", \"a\"], \"add_special_tokens\": false";
  CALL_ERR("tokenizer.encode", tok, fmt("{%s}", texts), WT_ERR_INVALID, "pads nothing");
  const char *enc = CALL("tokenizer.encode", tok, fmt("{%s, \"pad_id\": 0, \"device\": \"cpu\"}", texts));
  wt_tensor ids = field(enc, "input_ids"), types = field(enc, "token_type_ids"), mask = field(enc, "attention_mask");
  int64_t shape[2] = {0, 0}, m[16] = {0};
  OK(wt_tensor_shape(ids, shape, 2));
  CHECK(shape[0] == 2 && shape[1] == 7);
  OK(wt_tensor_to_host(mask, m, sizeof m));
  CHECK(m[6] == 1 && m[7] == 1 && m[8] == 0); /* row 1 is one token, then padding */
  CALL_ERR("tokenizer.encode", tok, "{\"texts\": [\"a\", null]}", WT_ERR_INVALID, "texts[1] must be a string, got null");
  CALL_ERR("tokenizer.encode", tok, "{\"texts\": [\"a\"]", WT_ERR_INVALID, "arguments must be a JSON object");
  for (wt_tensor *t = (wt_tensor[]){ids, types, mask, 0}; *t; t++) OK(wt_tensor_free(*t));
  CALL("tokenizer.free", tok, NULL);
  CALL_ERR("tokenizer.free", tok, NULL, WT_ERR_HANDLE, "already freed");
  CALL_ERR("tokenizer.load", 0, "{\"path\": \"" MM "absent\"}", WT_ERR_IO, "absent");
  CALL_ERR("tokenizer.laod", 0, NULL, WT_ERR_INVALID, "unknown target \"tokenizer.laod\" (tokenizer has");

  /* The call's own arguments. */
  wt_call_result r = 0;
  ERR(wt_call(NULL, 0, NULL, NULL, 0, &r), WT_ERR_INVALID, "target is NULL or empty");
  ERR(wt_call("tokenizer.load", 0, NULL, NULL, 10, &r), WT_ERR_INVALID, "buf is NULL but nbytes is 10");
  ERR(wt_call("tokenizer.load", 0, NULL, json, len, NULL), WT_ERR_INVALID, "out is NULL");
  ERR(wt_call_result_json(123456789, NULL, 0, &len), WT_ERR_HANDLE, "unknown call result handle");
  OK(wt_call("video.uniform_frame_indices", 0, "{\"total\": 10, \"num_frames\": 4}", NULL, 0, &r));
  char small[4];
  ERR(wt_call_result_json(r, small, sizeof small, &len), WT_ERR_BUFFER_TOO_SMALL, "too small");
  CHECK(len == strlen("[0,2,5,7]") + 1);
  OK(wt_call_result_free(r));
  ERR(wt_call_result_free(r), WT_ERR_HANDLE, "already freed");
}

static void test_clip(void) {
  int64_t clip = field(CALL("clip.load", 0, "{\"path\": \"" MM "clip_tiny\", \"device\": \"cpu\"}"), NULL);
  if (!CHECK(clip > 0)) return;
  wt_tensor px = ref(MM "vision_refs.safetensors", "clip/pixel_values");
  wt_tensor logits = ref(MM "vision_refs.safetensors", "clip/logits_per_image");
  const char *texts = "[\"a photo of a cat\", \"a photo of a dog\", \"a painting of a house by the sea\"]";
  wt_tensor probs = field(CALL("clip.zero_shot", clip, fmt("{\"pixels\": %lld, \"texts\": %s}", (long long)px, texts)), NULL);
  float p[6], l[6];
  OK(wt_tensor_to_host(probs, p, sizeof p));
  OK(wt_tensor_to_host(logits, l, sizeof l));
  for (int r = 0; r < 2; r++) {
    float mx = fmaxf(l[3 * r], fmaxf(l[3 * r + 1], l[3 * r + 2])), sum = 0;
    for (int i = 0; i < 3; i++) sum += expf(l[3 * r + i] - mx);
    for (int i = 0; i < 3; i++) CHECK(fabsf(p[3 * r + i] - expf(l[3 * r + i] - mx) / sum) < 1e-5f);
  }
  CALL_ERR("clip.zero_shot", clip, fmt("{\"pixels\": %lld, \"texts\": []}", (long long)px), WT_ERR_INVALID, "no texts");
  CALL_ERR("clip.zero_shot", clip, "{\"texts\": [\"a\"]}", WT_ERR_INVALID, "clip.zero_shot: pixels is required");
  CALL("clip.free", clip, NULL);
  /* The zip loaders' data (the SDKs' tests load real archives). */
  wt_call_result r = 0;
  ERR(wt_call("clip.load", 0, NULL, NULL, 0, &r), WT_ERR_INVALID, "needs a zip archive of the model's folder (or a path argument) as the call's data");
  ERR(wt_call("clip.load", 0, NULL, "", 0, &r), WT_ERR_INVALID, "zip archive: empty (0 bytes)");
  ERR(wt_call("sentence_encoder.load", 0, NULL, "PK\x05\x06", 4, &r), WT_ERR_INVALID,
      "not a zip archive, or a truncated one");
  for (wt_tensor *t = (wt_tensor[]){px, logits, probs, 0}; *t; t++) OK(wt_tensor_free(*t));
}

static void test_whisper(void) {
  int64_t w = field(CALL("whisper.load", 0, "{\"path\": \"" MM "whisper_tiny\"}"), NULL);
  if (!CHECK(w > 0)) return;
  CHECK(field(CALL("whisper.sampling_rate", w, NULL), NULL) == 16000);
  wt_tensor waves[2] = {ref(MM "whisper_refs.safetensors", "whisper/wave_0"),
                        ref(MM "whisper_refs.safetensors", "whisper/wave_1")};
  const char *args = fmt("{\"waves\": [%lld, %lld], \"max_new_tokens\": 30}", (long long)waves[0], (long long)waves[1]);
  wt_tensor ids = field(CALL("whisper.generate", w, args), NULL);
  /* whisper_refs.json's generate.sequences: 25 ids a row, the first ended at 7. */
  int64_t got[50] = {0}, shape[2] = {0, 0};
  OK(wt_tensor_shape(ids, shape, 2));
  CHECK(shape[0] == 2 && shape[1] == 25);
  OK(wt_tensor_to_host(ids, got, sizeof got));
  const int64_t want[8] = {315, 363, 15, 433, 555, 446, 124, 600};
  for (int i = 0; i < 8; i++) CHECK(got[i] == want[i]);
  const char *texts = CALL("whisper.transcribe", w, args);
  CHECK(texts && strncmp(texts, "[\" unti to0 moreailectors", 25) == 0);
  CALL("whisper.free", w, NULL);
  CALL_ERR("whisper.generate", w, args, WT_ERR_HANDLE, "already freed");
  for (wt_tensor *t = (wt_tensor[]){waves[0], waves[1], ids, 0}; *t; t++) OK(wt_tensor_free(*t));
}

static void test_timesformer(void) {
  /* The docs' sampler after np.random.seed(0) picks these of the 16 frames. */
  const char *idx = CALL("video.sample_frame_indices", 0,
                         "{\"clip_len\": 4, \"frame_sample_rate\": 2, \"seg_len\": 16, \"seed\": 0}");
  CHECK(idx && strcmp(idx, "[4,6,9,11]") == 0);
  CALL_ERR("video.sample_frame_indices", 0, "{\"clip_len\": 4, \"frame_sample_rate\": 4, \"seg_len\": 16}",
           WT_ERR_INVALID, "not more than clip_len 4");
  wt_tensor clip = ref(MM "timesformer_refs.safetensors", "video/frames");
  int64_t picks[4] = {4, 6, 9, 11}, four = 4;
  wt_tensor at = 0, frames = 0;
  OK(wt_tensor_from_data(picks, sizeof picks, WT_I64, &four, 1, "cpu", &at));
  wt_attr axis = {.name = "axis", .kind = WT_ATTR_INT, .i = 0};
  int32_t n = 0;
  OK(wt_op("index_select", (wt_tensor[]){clip, at}, 2, &axis, 1, &frames, 1, &n));
  int64_t proc = field(CALL("image_processor.load", 0, "{\"path\": \"" MM "timesformer_tiny\"}"), NULL);
  wt_tensor px = field(CALL("image_processor.preprocess_video", proc, fmt("{\"videos\": [%lld], \"device\": \"cpu\"}",
                                                                         (long long)frames)), NULL);
  int64_t shape[5] = {0};
  OK(wt_tensor_shape(px, shape, 5));
  CHECK(shape[0] == 1 && shape[1] == 4 && shape[2] == 3 && shape[3] == 32 && shape[4] == 32);
  CALL_ERR("image_processor.preprocess_video", proc, fmt("{\"videos\": %lld}", (long long)px), WT_ERR_INVALID,
           "want (frames, height, width, 3) u8");

  int64_t m = field(CALL("timesformer.load", 0, "{\"path\": \"" MM "timesformer_tiny\", \"device\": \"cpu\"}"), NULL);
  if (!CHECK(m > 0)) return;
  const char *info = CALL("timesformer.info", m, NULL);
  CHECK(info && strstr(info, "\"model\":\"TimesformerForVideoClassification\"") != NULL);
  const char *out = CALL("timesformer.forward", m, fmt("{\"pixels\": %lld, \"last_hidden_state\": false}", (long long)px));
  CHECK(out && strstr(out, "\"last_hidden_state\":null") != NULL);
  wt_tensor logits = field(out, "logits");
  wt_tensor want = ref(MM "timesformer_refs.safetensors", "video/logits");
  float l[5], w[5];
  OK(wt_tensor_to_host(logits, l, sizeof l));
  OK(wt_tensor_to_host(want, w, sizeof w));
  for (int i = 0; i < 5; i++) CHECK(fabsf(l[i] - w[i]) < 2e-5f);
  wt_tensor hidden = field(CALL("timesformer.forward", m, fmt("{\"pixels\": %lld, \"logits\": false}", (long long)px)),
                           "last_hidden_state");
  OK(wt_tensor_shape(hidden, shape, 3));
  CHECK(shape[0] == 1 && shape[1] == 65 && shape[2] == 32);
  CALL_ERR("timesformer.forward", m, fmt("{\"pixels\": %lld, \"logits\": false, \"last_hidden_state\": false}",
                                         (long long)px), WT_ERR_INVALID, "nothing to compute");
  CALL("timesformer.free", m, NULL);
  CALL_ERR("timesformer.forward", m, fmt("{\"pixels\": %lld}", (long long)px), WT_ERR_HANDLE, "already freed");
  CALL("image_processor.free", proc, NULL);
  for (wt_tensor *t = (wt_tensor[]){at, clip, frames, px, logits, hidden, want, 0}; *t; t++) OK(wt_tensor_free(*t));
}

/* max_diff is the largest |a - b| of two tensors' n float32 values. */
static double max_diff(wt_tensor a, wt_tensor b, size_t n) {
  float *x = malloc(n * sizeof *x), *y = malloc(n * sizeof *y);
  double d = 1e30;
  if (x && y && OK(wt_tensor_to_host(a, x, n * sizeof *x)) && OK(wt_tensor_to_host(b, y, n * sizeof *y))) {
    d = 0;
    for (size_t i = 0; i < n; i++) d = fmax(d, fabs((double)x[i] - y[i]));
  }
  free(x);
  free(y);
  return d;
}

static void test_conformer(void) {
  const char *refs = MM "conformer_refs.safetensors";
  int64_t m = field(CALL("conformer.load", 0, "{\"path\": \"" MM "conformer_tiny_rel\", \"device\": \"cpu\"}"), NULL);
  if (!CHECK(m > 0)) return;
  CHECK(field(CALL("conformer.sampling_rate", m, NULL), NULL) == 16000);
  wt_tensor waves[2] = {ref(refs, "model/wave_0"), ref(refs, "model/wave_1")};
  wt_tensor want = ref(refs, "conformer_tiny_rel/last_hidden_state");
  const char *out = CALL("conformer.encode", m, fmt("{\"waves\": [%lld, %lld], \"frame_mask\": true}",
                                                    (long long)waves[0], (long long)waves[1]));
  wt_tensor hidden = field(out, "last_hidden_state"), mask = field(out, "frame_mask");
  int64_t shape[3] = {0, 0, 0};
  OK(wt_tensor_shape(hidden, shape, 3));
  CHECK(shape[0] == 2 && shape[1] == 1599 && shape[2] == 32);
  CHECK(max_diff(hidden, want, 2 * 1599 * 32) < 1e-4);
  OK(wt_tensor_shape(mask, shape, 2));
  CHECK(shape[0] == 2 && shape[1] == 1599);
  CALL_ERR("conformer.encode", m, "{\"waves\": []}", WT_ERR_INVALID, "no waveforms");
  CALL("conformer.free", m, NULL);

  /* 4411 samples at 44.1 kHz: ceil(4411 * 160 / 441) = 1601 at 16 kHz. */
  wt_tensor x = ref(refs, "resample/44k1_to_16k/input"), ty = ref(refs, "resample/44k1_to_16k/output");
  wt_tensor y = field(CALL("audio.resample", 0, fmt("{\"x\": %lld, \"from_hz\": 44100, \"to_hz\": 16000}", (long long)x)), NULL);
  OK(wt_tensor_shape(y, shape, 1));
  CHECK(shape[0] == 1601);
  CHECK(max_diff(y, ty, 1601) < 5e-7);
  CALL_ERR("audio.resample", 0, fmt("{\"x\": %lld, \"from_hz\": 44101, \"to_hz\": 16000}", (long long)x), WT_ERR_INVALID,
           "filter bank");
  for (wt_tensor *t = (wt_tensor[]){waves[0], waves[1], hidden, mask, want, x, y, ty, 0}; *t; t++) OK(wt_tensor_free(*t));
}

static void test_diffusion(void) {
  int64_t p = field(CALL("diffusion.load", 0, "{\"path\": \"diffuse/testdata/ddpm_pipe\", \"device\": \"cpu\"}"), NULL);
  if (!CHECK(p > 0)) return;
  const char *info = CALL("diffusion.info", p, NULL);
  CHECK(info && strstr(info, "\"image_shape\":[3,16,16]") != NULL);
  const char *args = "{\"batch\": 2, \"steps\": 4, \"seed\": 7}";
  wt_tensor a = field(CALL("diffusion.generate", p, args), NULL);
  wt_tensor b = field(CALL("diffusion.generate", p, "{\"batch\": 2, \"steps\": 4, \"seed\": \"7\", \"scheduler\": null}"), NULL);
  static float x[2 * 3 * 16 * 16], y[2 * 3 * 16 * 16];
  OK(wt_tensor_to_host(a, x, sizeof x));
  OK(wt_tensor_to_host(b, y, sizeof y));
  CHECK(memcmp(x, y, sizeof x) == 0); /* one seed, one device: the same images */
  int in_range = 1;
  for (size_t i = 0; i < sizeof x / sizeof x[0]; i++) in_range &= x[i] >= 0 && x[i] <= 1;
  CHECK(in_range);
  CALL_ERR("diffusion.generate", p, "{\"steps\": 2, \"scheduler\": \"NoSuchScheduler\"}", WT_ERR_INVALID, "NoSuchScheduler");
  CALL_ERR("diffusion.generate_classes", p, "{\"labels\": [1], \"steps\": 2}", WT_ERR_INVALID, "no class labels");
  CALL_ERR("diffusion.load", 0, "{\"path\": \"diffuse/testdata/unet2d_tiny\"}", WT_ERR_IO, "model_index.json");
  /* A zip archive's bytes: what is not one fails naming why (the SDKs' tests load real ones). */
  wt_call_result r = 0;
  ERR(wt_call("diffusion.load", 0, NULL, "PK\x05\x06", 4, &r), WT_ERR_INVALID, "not a zip archive, or a truncated one");
  /* int8 weights: the same seed's images within 38 dB PSNR (MSE 10^-3.8). */
  CALL("diffusion.quantize_int8", p, NULL);
  info = CALL("diffusion.info", p, NULL);
  CHECK(info && strstr(info, "\"int8_weights\":true") != NULL);
  wt_tensor c = field(CALL("diffusion.generate", p, args), NULL);
  if (CHECK(c != 0)) {
    OK(wt_tensor_to_host(c, y, sizeof y));
    double mse = 0;
    for (size_t i = 0; i < sizeof x / sizeof x[0]; i++) mse += ((double)x[i] - y[i]) * ((double)x[i] - y[i]);
    mse /= sizeof x / sizeof x[0];
    CHECK(mse > 0 && mse < 1.5849e-4);
    OK(wt_tensor_free(c));
  }
  CALL("diffusion.free", p, NULL);
  CALL_ERR("diffusion.quantize_int8", p, NULL, WT_ERR_HANDLE, "already freed");
  OK(wt_tensor_free(a));
  OK(wt_tensor_free(b));
}

void test_domains(void) {
  test_tokenizer();
  test_clip();
  test_whisper();
  test_timesformer();
  test_conformer();
  test_diffusion();
}
