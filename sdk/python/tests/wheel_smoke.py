"""Run by `make wheel-test` with the installed wheel in a fresh virtual
environment and no Go toolchain on PATH: the wheel must carry everything."""

import shutil
import sys

import numpy as np

import webtensor as wt

assert shutil.which("go") is None, "the Go toolchain is on PATH; this test must run without it"
assert "site-packages" in wt.__file__, f"webtensor imported from {wt.__file__}, not the installed wheel"
x = wt.tensor(np.arange(6, dtype=np.float32).reshape(2, 3))
y = (x @ x.T).softmax(axis=-1)
np.testing.assert_allclose(y.numpy().sum(axis=-1), [1, 1], rtol=1e-6)
x.requires_grad = True
(x * x).sum().backward()
np.testing.assert_allclose(x.grad.numpy(), 2 * x.numpy())
# The default tuning policy ships in the wheel and loads into the sandbox.
wt.set_tuning_policy("default")
wt.set_tuning_policy(None)
import importlib.util  # noqa: E402

from webtensor import _tensor  # noqa: E402

# The wheel carries webtensor._fast for the CPython that built it: where it loads, it is in use.
shipped = importlib.util.find_spec("webtensor._fast") is not None
assert _tensor.fast_path() == shipped, f"webtensor._fast shipped: {shipped}, in use: {_tensor.fast_path()}"
print(f"webtensor {wt.__version__} from {wt.__file__} on Python {sys.version.split()[0]}: devices {wt.devices()}; "
      f"C hot path {'in use' if shipped else 'not built for this Python'}; ok")
