"""webtensor.nn: modules, parameters, initialisers and functional ops, as torch.nn.

    import webtensor as wt
    from webtensor import nn

    wt.manual_seed(0)  # the same weights as the Go nn package built after core.ManualSeed(0)
    model = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 3))
    opt = wt.optim.AdamW(model.parameters(), lr=1e-2)
    loss = nn.functional.cross_entropy(model(x), y)
    loss.backward(); opt.step(); opt.zero_grad()
    wt.save(model.state_dict(), "model.safetensors")  # loads in torch and in Go
"""

from . import functional, init, utils
from .layers import (
    BatchNorm1d,
    BatchNorm2d,
    Conv1d,
    Conv2d,
    CrossEntropyLoss,
    Dropout,
    Embedding,
    Flatten,
    GELU,
    Identity,
    LayerNorm,
    Linear,
    MSELoss,
    MultiheadAttention,
    ReLU,
    Sigmoid,
    SiLU,
    Softmax,
    Tanh,
)
from .module import Module, ModuleList, Parameter, Sequential

__all__ = [
    "BatchNorm1d", "BatchNorm2d", "Conv1d", "Conv2d", "CrossEntropyLoss", "Dropout", "Embedding", "Flatten", "GELU",
    "Identity", "LayerNorm", "Linear", "MSELoss", "Module", "ModuleList", "MultiheadAttention", "Parameter", "ReLU",
    "Sequential", "SiLU", "Sigmoid", "Softmax", "Tanh", "functional", "init", "utils",
]
