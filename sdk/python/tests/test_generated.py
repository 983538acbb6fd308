"""The generated op functions are current, and each public op of the manifest is one."""

import importlib.util
import subprocess
import sys
from pathlib import Path

import webtensor as wt

SDK = Path(__file__).resolve().parent.parent


def _gen_ops():
    spec = importlib.util.spec_from_file_location("gen_ops", SDK / "gen_ops.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_generated_ops_are_current(tmp_path):
    gen = _gen_ops()
    files = gen.generate(wt.manifest())
    checked_in = SDK / "webtensor" / "_ops"
    stale = [n for n, text in files.items() if not (checked_in / n).is_file() or (checked_in / n).read_text() != text]
    extra = [p.name for p in checked_in.glob("*.py*") if p.name not in files]
    assert not stale and not extra, f"webtensor/_ops is stale ({stale + extra}): run python sdk/python/gen_ops.py"
    gen.write(files, tmp_path)
    out = subprocess.run([sys.executable, "-c", "import ast,sys; [ast.parse(open(p).read()) for p in sys.argv[1:]]",
                          *map(str, tmp_path.glob("*.py*"))], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr


def test_every_public_op_is_a_function():
    names = [o["name"] for o in wt.manifest()["ops"] if not o.get("internal") and not o["name"].startswith("_")]
    missing = [n for n in names if not callable(getattr(wt, n, None))]
    assert not missing
    assert wt.softmax.__doc__ and "axis" in wt.softmax.__doc__
    assert (SDK / "webtensor" / "py.typed").is_file()
    assert callable(wt.Tensor.softmax) and callable(wt.Tensor.relu)
