"""WebAssembly plugins from Python: load a module, call its ops by name and
as attributes, differentiate through them, and the scaffold round trip."""

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

import webtensor as wt

ROOT = Path(__file__).resolve().parents[3]
CCLIP = ROOT / "build" / "plugins" / "cclip.wasm"


def test_call_runs_any_op_by_name():
    x = wt.tensor(np.array([[1.0, 2.0], [3.0, 5.0]], dtype=np.float32))
    y = wt.call("softmax", x, axis=0)
    e = np.exp([[1.0, 2.0], [3.0, 5.0]])
    np.testing.assert_allclose(y.numpy(), e / e.sum(axis=0), rtol=1e-6)
    with pytest.raises(TypeError, match="unknown attribute"):
        wt.call("softmax", x, axes=0)
    with pytest.raises(ValueError, match="no op"):
        wt.call("no_such_op", x)


@pytest.mark.skipif(not CCLIP.exists(), reason="run `make plugins` to build build/plugins/cclip.wasm")
def test_plugin_ops_run_with_autograd():
    p = wt.load_plugin(CCLIP)
    assert p.name == "cclip"
    assert "cclip.soft_clip" in p.ops
    v = np.array([-3.0, -0.5, 0.0, 1.0, 4.0], dtype=np.float32)
    x = wt.tensor(v, requires_grad=True)
    y = p.soft_clip(x, limit=2.0)
    np.testing.assert_allclose(y.numpy(), 2 * np.tanh(v / 2), rtol=1e-6)
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), 1 - np.tanh(v / 2) ** 2, rtol=1e-5)
    n = wt.call("cclip.count_above", x, threshold=0.5)
    assert n.item() == 2
    with pytest.raises(AttributeError, match="has no op"):
        _ = p.nothing
    with pytest.raises(ValueError):
        wt.load_plugin(ROOT / "README.md")


@pytest.mark.skipif(shutil.which("go") is None or shutil.which("make") is None,
                    reason="the scaffold round trip needs the go command and make")
def test_scaffold_build_load_call_round_trip(tmp_path):
    """What a plugin author does: `webtensor plugin new`, `make`, then load
    and call from Python. The time goes to docs/perf.md's plugin table."""
    start = time.perf_counter()
    cli = ROOT / "build" / "webtensor"
    cmd = [str(cli)] if cli.exists() else ["go", "run", "./cmd/webtensor"]
    d = tmp_path / "pyrt"
    subprocess.run([*cmd, "plugin", "new", "pyrt", "--lang", "go", "--dir", str(d)], cwd=ROOT, check=True,
                   capture_output=True)
    subprocess.run(["make", "-s"], cwd=d, check=True, capture_output=True, env={**os.environ, "GOFLAGS": "-mod=mod"})
    wasm = next(d.glob("*.wasm"))
    p = wt.load_plugin(wasm)
    x = wt.tensor(np.array([1.0, -2.0, 3.0], dtype=np.float32), requires_grad=True)
    op = getattr(p, p.ops[0].split(".", 1)[1])
    y = op(x)
    y.sum().backward()
    assert y.shape == (3,)
    assert x.grad is not None
    seconds = time.perf_counter() - start
    print(f"\nplugin round trip (scaffold, build, load, call from Python): {seconds:.1f} s")
    (ROOT / "build").mkdir(exist_ok=True)
    (ROOT / "build" / "plugin-roundtrip-python.txt").write_text(f"{seconds:.1f}\n")


def test_tuning_policy_set_and_cleared():
    wt.set_tuning_policy("default")
    wt.set_tuning_policy("default")  # the module is loaded once
    wt.set_tuning_policy(None)
    assert wt.device_tuning("cpu") == {}, "the CPU tunes nothing"
    with pytest.raises(ValueError, match="no plugin"):
        wt._lib.call("wt_tuning_policy_set", b"not-loaded", None)


@pytest.mark.skipif(not CCLIP.exists(), reason="run `make plugins` to build build/plugins/cclip.wasm")
def test_a_plugin_without_a_policy_is_refused():
    try:
        p = wt.load_plugin(CCLIP)
    except ValueError:
        p = wt.Plugin("cclip")  # an earlier test loaded it
    with pytest.raises(ValueError, match="declares no policy"):
        wt.set_tuning_policy(p)


def test_default_policy_steers_webgpu_matmul_from_the_environment(tmp_path):
    """WEBTENSOR_TUNING_POLICY loads the default policy when WebGPU opens; its
    proposal for a new matmul class is timed and recorded with its reason."""
    from conftest import webgpu_or_none

    if webgpu_or_none() is None:
        pytest.skip("no WebGPU adapter here (install a Vulkan driver, e.g. mesa-vulkan-drivers)")
    code = (
        "import json, numpy as np, webtensor as wt\n"
        "a = wt.tensor(np.ones((96, 80), np.float32)).to('webgpu')\n"
        "b = wt.tensor(np.ones((80, 72), np.float32)).to('webgpu')\n"
        "assert float((a @ b).numpy()[0, 0]) == 80.0\n"
        "print(json.dumps(wt.device_tuning('webgpu')))\n"
    )
    env = {**os.environ, "WEBTENSOR_CACHE_DIR": str(tmp_path), "NODEVICE_SELECT": "1",
           "WEBTENSOR_TUNING_POLICY": wt._plugins.default_policy_path()}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr
    decisions = json.loads(out.stdout.strip().splitlines()[-1])
    asked = [rec for key, rec in decisions.items() if key.startswith("matmul|") and rec.get("policy")]
    assert asked, f"no matmul decision asked the policy: {decisions}"
    assert asked[0]["policy"] == "tuning.kernel_variant"
    assert asked[0]["reason"] and asked[0]["proposed"]

    env["WEBTENSOR_TUNING_POLICY"] = str(tmp_path / "missing.wasm")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=600)
    assert out.returncode != 0
    assert "WEBTENSOR_TUNING_POLICY" in out.stderr and "missing.wasm" in out.stderr
