"""wt.profile: the runtime's op-call trace (trace/, wt_profile_*) from Python,
and WEBTENSOR_TRACE, which writes a whole process's trace at exit."""

import json
import os
import subprocess
import sys

import numpy as np
import pytest

import webtensor as wt


def test_profile_records_ops_with_shapes(tmp_path):
    path = tmp_path / "run.json"
    with wt.profile(str(path)) as rec:
        x = wt.tensor(np.ones((2, 3), dtype=np.float32))
        (x.exp() + 1).sum().item()
    trace = json.loads(path.read_text())
    assert trace == rec.result.json()
    ops = [e for e in trace["traceEvents"] if e["ph"] == "X"]
    exp = next(e for e in ops if e["name"] == "exp")
    assert exp["args"]["inputs"] == ["f32[2 3]"]
    assert exp["args"]["bytes"] == 2 * 6 * 4
    assert {"exp", "add", "sum"} <= {e["name"] for e in ops}
    assert trace["otherData"]["webtensor"]["devices"] == ["cpu"]


def test_one_recording_at_a_time():
    with wt.profile():
        with pytest.raises(ValueError, match="a recording is already running"):
            with wt.profile():
                pass


def test_webtensor_trace_writes_the_process_at_exit(tmp_path):
    path = tmp_path / "proc.json"
    code = "import webtensor as wt; (wt.ones([4]) * 2).sum().item()"
    env = dict(os.environ, WEBTENSOR_TRACE=str(path))
    subprocess.run([sys.executable, "-c", code], env=env, check=True, timeout=120)
    trace = json.loads(path.read_text())
    names = {e["name"] for e in trace["traceEvents"] if e["ph"] == "X"}
    assert {"mul", "sum"} <= names
    assert trace["otherData"]["webtensor"]["config"]["WEBTENSOR_TRACE"] == str(path)
