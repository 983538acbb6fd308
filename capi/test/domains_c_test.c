/*
 * domains_c_test.c — the domain libraries through the C ABI: a byte-level
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
  wt_tokenizer tok = 0;
  OK(wt_tokenizer_load_bytes(json, len, &tok));
  /* whisper_refs.json's first decode case. */
  const int64_t ids[10] = {601, 609, 542, 78, 11, 489, 597, 67, 0, 600};
  char text[64];
  size_t needed = 0;
  OK(wt_tokenizer_decode(tok, ids, 10, 1, text, sizeof text, &needed));
  CHECK(strcmp(text, "Hello, world!") == 0 && needed == 14);
  ERR(wt_tokenizer_decode(tok, ids, 10, 0, text, 4, &needed), WT_ERR_BUFFER_TOO_SMALL, "too small");
  ERR(wt_tokenizer_decode(tok, (int64_t[]){1 << 20}, 1, 0, text, sizeof text, &needed), WT_ERR_INVALID,
      "outside the vocabulary");

  const char *texts[2] = {"Hello, world!", "a"};
  wt_tensor t_ids = 0, mask = 0;
  ERR(wt_tokenizer_encode(tok, texts, 2, 0, -1, NULL, &t_ids, NULL, &mask), WT_ERR_INVALID, "pads nothing");
  OK(wt_tokenizer_encode(tok, texts, 2, 0, 0, "cpu", &t_ids, NULL, &mask));
  int64_t shape[2] = {0, 0}, m[16] = {0};
  OK(wt_tensor_shape(t_ids, shape, 2));
  CHECK(shape[0] == 2 && shape[1] == 7);
  OK(wt_tensor_to_host(mask, m, sizeof m));
  CHECK(m[6] == 1 && m[7] == 1 && m[8] == 0); /* row 1 is one token, then padding */
  ERR(wt_tokenizer_encode(tok, NULL, 2, 0, 0, NULL, &t_ids, NULL, NULL), WT_ERR_INVALID, "texts is NULL");
  ERR(wt_tokenizer_encode(tok, (const char *[]){"a", NULL}, 2, 0, 0, NULL, &t_ids, NULL, NULL), WT_ERR_INVALID,
      "texts[1] is NULL");
  OK(wt_tensor_free(t_ids));
  OK(wt_tensor_free(mask));
  OK(wt_tokenizer_free(tok));
  ERR(wt_tokenizer_free(tok), WT_ERR_HANDLE, "already freed");
  ERR(wt_tokenizer_load(MM "absent", &tok), WT_ERR_IO, "absent");
}

static void test_clip(void) {
  wt_clip clip = 0;
  if (!OK(wt_clip_load(MM "clip_tiny", "cpu", &clip))) return;
  wt_tensor px = ref(MM "vision_refs.safetensors", "clip/pixel_values");
  wt_tensor logits = ref(MM "vision_refs.safetensors", "clip/logits_per_image");
  const char *texts[3] = {"a photo of a cat", "a photo of a dog", "a painting of a house by the sea"};
  wt_tensor probs = 0;
  OK(wt_clip_zero_shot(clip, px, texts, 3, &probs));
  float p[6], l[6];
  OK(wt_tensor_to_host(probs, p, sizeof p));
  OK(wt_tensor_to_host(logits, l, sizeof l));
  for (int r = 0; r < 2; r++) {
    float mx = fmaxf(l[3 * r], fmaxf(l[3 * r + 1], l[3 * r + 2])), sum = 0;
    for (int i = 0; i < 3; i++) sum += expf(l[3 * r + i] - mx);
    for (int i = 0; i < 3; i++) CHECK(fabsf(p[3 * r + i] - expf(l[3 * r + i] - mx) / sum) < 1e-5f);
  }
  ERR(wt_clip_zero_shot(clip, px, texts, 0, &probs), WT_ERR_INVALID, "no texts");
  ERR(wt_clip_zero_shot(clip, px, texts, 3, NULL), WT_ERR_INVALID, "out is NULL");
  OK(wt_clip_free(clip));
  /* The zip loaders' arguments (the SDKs' tests load real archives). */
  ERR(wt_clip_load_zip(NULL, 0, NULL, &clip), WT_ERR_INVALID, "wt_clip_load_zip: zip archive: empty (0 bytes)");
  ERR(wt_clip_load_zip(NULL, 10, NULL, &clip), WT_ERR_INVALID, "buf is NULL but nbytes is 10");
  ERR(wt_clip_load_zip("PK", 2, NULL, NULL), WT_ERR_INVALID, "out is NULL");
  wt_sentence_encoder enc = 0;
  ERR(wt_sentence_encoder_load_zip("PK\x05\x06", 4, NULL, &enc), WT_ERR_INVALID, "not a zip archive, or a truncated one");
  ERR(wt_sentence_encoder_load_zip(NULL, 3, NULL, &enc), WT_ERR_INVALID, "wt_sentence_encoder_load_zip: buf is NULL");
  for (wt_tensor *t = (wt_tensor[]){px, logits, probs, 0}; *t; t++) OK(wt_tensor_free(*t));
}

static void test_whisper(void) {
  wt_whisper w = 0;
  if (!OK(wt_whisper_load(MM "whisper_tiny", NULL, &w))) return;
  int32_t rate = 0;
  OK(wt_whisper_sampling_rate(w, &rate));
  CHECK(rate == 16000);
  wt_tensor waves[2] = {ref(MM "whisper_refs.safetensors", "whisper/wave_0"),
                        ref(MM "whisper_refs.safetensors", "whisper/wave_1")};
  wt_tensor ids = 0;
  OK(wt_whisper_generate(w, waves, 2, 30, 0, &ids));
  /* whisper_refs.json's generate.sequences: 25 ids a row, the first ended at 7. */
  int64_t got[50] = {0}, shape[2] = {0, 0};
  OK(wt_tensor_shape(ids, shape, 2));
  CHECK(shape[0] == 2 && shape[1] == 25);
  OK(wt_tensor_to_host(ids, got, sizeof got));
  const int64_t want[8] = {315, 363, 15, 433, 555, 446, 124, 600};
  for (int i = 0; i < 8; i++) CHECK(got[i] == want[i]);
  wt_tokenizer tok = 0;
  OK(wt_whisper_tokenizer(w, &tok));
  OK(wt_whisper_free(w));
  char text[256];
  size_t needed = 0;
  OK(wt_tokenizer_decode(tok, got, 25, 1, text, sizeof text, &needed));
  CHECK(strncmp(text, " unti to0 moreailectors", 23) == 0);
  OK(wt_tokenizer_free(tok));
  ERR(wt_whisper_generate(w, waves, 2, 30, 0, &ids), WT_ERR_HANDLE, "already freed");
  for (wt_tensor *t = (wt_tensor[]){waves[0], waves[1], ids, 0}; *t; t++) OK(wt_tensor_free(*t));
}

static void test_timesformer(void) {
  /* The docs' sampler after np.random.seed(0) picks these of the 16 frames. */
  wt_tensor idx = 0;
  OK(wt_video_sample_frame_indices(4, 2, 16, 0, &idx));
  int64_t got[4] = {0};
  OK(wt_tensor_to_host(idx, got, sizeof got));
  CHECK(got[0] == 4 && got[1] == 6 && got[2] == 9 && got[3] == 11);
  ERR(wt_video_sample_frame_indices(4, 4, 16, 0, &idx), WT_ERR_INVALID, "not more than clip_len 4");
  wt_tensor clip = ref(MM "timesformer_refs.safetensors", "video/frames");
  wt_tensor frames = 0;
  wt_attr axis = {.name = "axis", .kind = WT_ATTR_INT, .i = 0};
  int32_t n = 0;
  OK(wt_op("index_select", (wt_tensor[]){clip, idx}, 2, &axis, 1, &frames, 1, &n));
  wt_image_processor proc = 0;
  OK(wt_image_processor_load(MM "timesformer_tiny", &proc));
  wt_tensor px = 0;
  OK(wt_image_processor_preprocess_video(proc, &frames, 1, "cpu", &px));
  int64_t shape[5] = {0};
  OK(wt_tensor_shape(px, shape, 5));
  CHECK(shape[0] == 1 && shape[1] == 4 && shape[2] == 3 && shape[3] == 32 && shape[4] == 32);
  ERR(wt_image_processor_preprocess_video(proc, &px, 1, "cpu", &idx), WT_ERR_INVALID, "want (frames, height, width, 3) u8");

  wt_timesformer m = 0;
  if (!OK(wt_timesformer_load(MM "timesformer_tiny", "cpu", &m))) return;
  char info[512];
  size_t needed = 0;
  OK(wt_timesformer_info_json(m, info, sizeof info, &needed));
  CHECK(strstr(info, "\"model\":\"TimesformerForVideoClassification\"") != NULL);
  wt_tensor logits = 0, hidden = 0;
  OK(wt_timesformer_forward(m, px, &logits, NULL));
  wt_tensor want = ref(MM "timesformer_refs.safetensors", "video/logits");
  float l[5], w[5];
  OK(wt_tensor_to_host(logits, l, sizeof l));
  OK(wt_tensor_to_host(want, w, sizeof w));
  for (int i = 0; i < 5; i++) CHECK(fabsf(l[i] - w[i]) < 2e-5f);
  OK(wt_timesformer_forward(m, px, NULL, &hidden));
  OK(wt_tensor_shape(hidden, shape, 3));
  CHECK(shape[0] == 1 && shape[1] == 65 && shape[2] == 32);
  ERR(wt_timesformer_forward(m, px, NULL, NULL), WT_ERR_INVALID, "nothing to compute");
  OK(wt_timesformer_free(m));
  ERR(wt_timesformer_forward(m, px, &logits, NULL), WT_ERR_HANDLE, "already freed");
  OK(wt_image_processor_free(proc));
  for (wt_tensor *t = (wt_tensor[]){idx, clip, frames, px, logits, hidden, want, 0}; *t; t++) OK(wt_tensor_free(*t));
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
  wt_conformer m = 0;
  if (!OK(wt_conformer_load(MM "conformer_tiny_rel", "cpu", &m))) return;
  int32_t rate = 0;
  OK(wt_conformer_sampling_rate(m, &rate));
  CHECK(rate == 16000);
  wt_tensor waves[2] = {ref(refs, "model/wave_0"), ref(refs, "model/wave_1")};
  wt_tensor hidden = 0, mask = 0, want = ref(refs, "conformer_tiny_rel/last_hidden_state");
  OK(wt_conformer_encode(m, waves, 2, &hidden, &mask));
  int64_t shape[3] = {0, 0, 0};
  OK(wt_tensor_shape(hidden, shape, 3));
  CHECK(shape[0] == 2 && shape[1] == 1599 && shape[2] == 32);
  CHECK(max_diff(hidden, want, 2 * 1599 * 32) < 1e-4);
  OK(wt_tensor_shape(mask, shape, 2));
  CHECK(shape[0] == 2 && shape[1] == 1599);
  ERR(wt_conformer_encode(m, waves, 0, &hidden, NULL), WT_ERR_INVALID, "no waveforms");
  OK(wt_conformer_free(m));

  /* 4411 samples at 44.1 kHz: ceil(4411 * 160 / 441) = 1601 at 16 kHz. */
  wt_tensor x = ref(refs, "resample/44k1_to_16k/input"), y = 0, ty = ref(refs, "resample/44k1_to_16k/output");
  OK(wt_audio_resample(x, 44100, 16000, &y));
  OK(wt_tensor_shape(y, shape, 1));
  CHECK(shape[0] == 1601);
  CHECK(max_diff(y, ty, 1601) < 5e-7);
  ERR(wt_audio_resample(x, 44101, 16000, &y), WT_ERR_INVALID, "filter bank");
  for (wt_tensor *t = (wt_tensor[]){waves[0], waves[1], hidden, mask, want, x, y, ty, 0}; *t; t++) OK(wt_tensor_free(*t));
}

static void test_diffusion(void) {
  wt_diffusion p = 0;
  if (!OK(wt_diffusion_load("diffuse/testdata/ddpm_pipe", "cpu", &p))) return;
  char info[256];
  size_t needed = 0;
  OK(wt_diffusion_info_json(p, info, sizeof info, &needed));
  CHECK(strstr(info, "\"image_shape\":[3,16,16]") != NULL);
  wt_tensor a = 0, b = 0;
  OK(wt_diffusion_generate(p, 2, 4, 7, NULL, &a));
  OK(wt_diffusion_generate(p, 2, 4, 7, "", &b));
  static float x[2 * 3 * 16 * 16], y[2 * 3 * 16 * 16];
  OK(wt_tensor_to_host(a, x, sizeof x));
  OK(wt_tensor_to_host(b, y, sizeof y));
  CHECK(memcmp(x, y, sizeof x) == 0); /* one seed, one device: the same images */
  int in_range = 1;
  for (size_t i = 0; i < sizeof x / sizeof x[0]; i++) in_range &= x[i] >= 0 && x[i] <= 1;
  CHECK(in_range);
  ERR(wt_diffusion_generate(p, 1, 2, 0, "NoSuchScheduler", &b), WT_ERR_INVALID, "NoSuchScheduler");
  ERR(wt_diffusion_generate_classes(p, (int64_t[]){1}, 1, 2, 0, 4, NULL, &b), WT_ERR_INVALID, "no class labels");
  ERR(wt_diffusion_load("diffuse/testdata/unet2d_tiny", NULL, &p), WT_ERR_IO, "model_index.json");
  /* A zip archive's bytes: what is not one fails naming why (the SDKs' tests load real ones). */
  ERR(wt_diffusion_load_zip(NULL, 0, NULL, &p), WT_ERR_INVALID, "empty (0 bytes)");
  ERR(wt_diffusion_load_zip(NULL, 10, NULL, &p), WT_ERR_INVALID, "buf is NULL but nbytes is 10");
  ERR(wt_diffusion_load_zip("PK\x05\x06", 4, NULL, &p), WT_ERR_INVALID, "not a zip archive, or a truncated one");
  ERR(wt_diffusion_load_zip("PK", 2, NULL, NULL), WT_ERR_INVALID, "out is NULL");
  /* int8 weights: the same seed's images within 38 dB PSNR (MSE 10^-3.8). */
  wt_tensor c = 0;
  OK(wt_diffusion_quantize_int8(p));
  OK(wt_diffusion_info_json(p, info, sizeof info, &needed));
  CHECK(strstr(info, "\"int8_weights\":true") != NULL);
  if (OK(wt_diffusion_generate(p, 2, 4, 7, NULL, &c))) {
    OK(wt_tensor_to_host(c, y, sizeof y));
    double mse = 0;
    for (size_t i = 0; i < sizeof x / sizeof x[0]; i++) mse += ((double)x[i] - y[i]) * ((double)x[i] - y[i]);
    mse /= sizeof x / sizeof x[0];
    CHECK(mse > 0 && mse < 1.5849e-4);
    OK(wt_tensor_free(c));
  }
  OK(wt_diffusion_free(p));
  ERR(wt_diffusion_quantize_int8(p), WT_ERR_HANDLE, "already freed");
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
