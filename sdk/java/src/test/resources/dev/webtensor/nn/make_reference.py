"""Writes the Java SDK's nn/optim reference files from the Python SDK (whose
nn and optim match the Go nn package draw for draw and term for term):

    .venv/bin/python sdk/java/src/test/resources/dev/webtensor/nn/make_reference.py

- python-mlp.safetensors: Sequential(Linear(3, 4), ReLU(), Linear(4, 2)) after
  manual_seed(7), as wt.save writes it;
- (go-mlp.safetensors, beside it, is the same model written by Go's nn.Save:
  core.ManualSeed(7), nn.NewSequential(l1, &nn.ReLU{}, l2) of nn.NewLinear(3, 4)
  and nn.NewLinear(4, 2); its bytes equal python-mlp.safetensors');
- reference.json: Linear(3, 2)'s initial weights after manual_seed(7), and the
  losses and final parameters of three mse steps of each optimizer setting.
"""

import json
from pathlib import Path

import webtensor as wt
from webtensor import nn, optim

HERE = Path(__file__).resolve().parent
X = [[0.5, -1.0, 2.0], [1.5, 0.25, -0.75], [-2.0, 1.0, 0.5], [0.0, -0.5, 1.25]]
Y = [[1.0, -1.0], [0.5, 2.0], [-1.5, 0.0], [2.5, 1.0]]
SETTINGS = {
    "sgd": lambda ps: optim.SGD(ps, lr=0.1),
    "sgd_momentum": lambda ps: optim.SGD(ps, lr=0.1, momentum=0.9, dampening=0.1, weight_decay=0.01),
    "sgd_nesterov": lambda ps: optim.SGD(ps, lr=0.05, momentum=0.8, weight_decay=0.02, nesterov=True),
    "adam": lambda ps: optim.Adam(ps, lr=0.1),
    "adam_amsgrad": lambda ps: optim.Adam(ps, lr=0.1, betas=(0.6, 0.9), weight_decay=0.01, amsgrad=True),
    "adam_maximize": lambda ps: optim.Adam(ps, lr=0.01, eps=0.0, maximize=True),
    "adamw": lambda ps: optim.AdamW(ps, lr=0.1, weight_decay=0.1, amsgrad=True),
}


def values(t) -> list:
    return [float(v) for v in t.numpy().reshape(-1)]


def main() -> None:
    wt.manual_seed(7)
    lin = nn.Linear(3, 2)
    ref = {"linear_3_2_seed7": {"weight": values(lin.weight), "bias": values(lin.bias)}, "x": X, "y": Y, "runs": {}}
    for name, make in SETTINGS.items():
        wt.manual_seed(7)
        model = nn.Linear(3, 2)
        opt = make(model.parameters())
        x, y = wt.tensor(X, dtype="f32"), wt.tensor(Y, dtype="f32")
        losses = []
        for _ in range(3):
            opt.zero_grad()
            loss = wt.call("mse_loss", model(x), y)
            loss.backward()
            losses.append(loss.item())
            opt.step()
        ref["runs"][name] = {"losses": losses, "weight": values(model.weight), "bias": values(model.bias)}
    (HERE / "reference.json").write_text(json.dumps(ref, indent=1) + "\n")
    wt.manual_seed(7)
    wt.save(nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 2)), HERE / "python-mlp.safetensors")


if __name__ == "__main__":
    main()
