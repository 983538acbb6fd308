"""Checkpoints the library's one validator refuses (wt_safetensors_header): the
shared corpus of malformed files (core/safetensors/testdata/malformed.json) is
refused with a ValueError naming the file and the problem, whatever the
problem (before: raw AttributeError, KeyError, TypeError, RecursionError or
OverflowError in 11 of 37 cases, and 6 malformed files accepted), and saves
clean up the temporaries of earlier saves that were killed mid-write."""

import json
import os
import struct
import subprocess
import sys
import time
from pathlib import Path

import pytest

import webtensor as wt
from webtensor._serialize import load_metadata

ROOT = Path(__file__).resolve().parents[3]
CASES = json.loads((ROOT / "core" / "safetensors" / "testdata" / "malformed.json").read_text())["cases"]


def case_bytes(c: dict) -> bytes:
    """The file of one corpus case (the corpus's doc says how)."""
    if c.get("raw_hex") is not None:
        return bytes.fromhex(c["raw_hex"])
    header = bytes.fromhex(c["header_hex"]) if c.get("header_hex") else c["header"].encode()
    if c.get("fill"):
        header = header.replace(b"@@", c["fill"]["text"].encode() * c["fill"]["times"], 1)
    length = int(c["length"]) if c.get("length") else len(header)
    return struct.pack("<Q", length) + header + bytes(c["data"])


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_malformed_corpus(tmp_path, case, no_leaks):
    path = tmp_path / "model.safetensors"
    path.write_bytes(case_bytes(case))
    if case["want"] is None:
        state = wt.load(path)
        assert list(state) == case["tensors"]
        assert isinstance(load_metadata(path), dict)
        del state
        return
    for read in (wt.load, load_metadata):
        with pytest.raises(ValueError) as e:
            read(path)
        assert type(e.value) is ValueError, f"{read.__name__}: {type(e.value).__name__}: {e.value}"
        msg = str(e.value)
        assert str(path) in msg and case["want"] in msg, msg


def test_a_valid_file_still_round_trips(tmp_path, no_leaks):
    path = tmp_path / "ok.safetensors"
    state = {"b": wt.tensor([1.0, 2.0]), "a": wt.tensor([[1, 2]], dtype="i64"), "z": wt.zeros(0, 3)}
    wt.save(state, path, metadata={"k": "v"})
    back = wt.load(path)
    assert list(back) == ["a", "b", "z"]
    assert back["a"].tolist() == [[1, 2]] and back["b"].tolist() == [1.0, 2.0]
    assert back["z"].shape == (0, 3)
    assert load_metadata(path) == {"k": "v"}
    del state, back


def dead_pid() -> int:
    p = subprocess.Popen([sys.executable, "-c", "pass"])
    p.wait()
    return p.pid


def test_save_removes_temporaries_of_killed_saves(tmp_path, no_leaks):
    path = tmp_path / "model.safetensors"

    def temp(name: str, age: float = 0) -> str:
        p = tmp_path / name
        p.write_bytes(b"\0" * 4096)
        t = time.time() - age
        os.utime(p, (t, t))
        return name

    killed = temp(f".model.safetensors.tmp-{dead_pid()}-abc123")  # a save killed mid-write
    live = temp(f".model.safetensors.tmp-{os.getpid()}-xyz")  # a save in progress
    old = temp(".model.safetensors.tmp-k2j4h5g6", age=7200)  # an older version's, long untouched
    recent = temp(".model.safetensors.tmp-q1w2e3r4", age=60)  # an older version's, maybe writing
    other = temp(f".other.safetensors.tmp-{dead_pid()}-1")  # another path's
    t = wt.tensor([1.0])
    wt.save({"x": t}, path)
    left = sorted(p.name for p in tmp_path.iterdir())
    assert left == sorted(["model.safetensors", live, recent, other]), (killed, old)
    # The save's own temporary carries its PID, so a later save can tell.
    assert wt.load(path)["x"].tolist() == [1.0]
    del t


def test_a_save_killed_mid_write_is_cleaned_by_the_next(tmp_path):
    """The reproducer: a process killed while it writes leaves its temporary;
    the next save to the path removes it. (The library writes the file: the
    child saves in a loop and is killed once a temporary shows.)"""
    path = tmp_path / "big.safetensors"
    code = f"import webtensor as wt\nw = {{'w': wt.zeros(2048, 1024)}}\nwhile True:\n    wt.save(w, {str(path)!r})\n"

    def temps():
        return [p for p in tmp_path.iterdir() if p.name.startswith(".big.safetensors.tmp-")]

    for _ in range(20):  # a kill can land between a rename and the next save's temporary
        child = subprocess.Popen([sys.executable, "-c", code], env=os.environ)
        deadline = time.time() + 120
        while not temps() and time.time() < deadline and child.poll() is None:
            time.sleep(0.0005)
        child.kill()
        child.wait()
        if temps():
            break
    assert len(temps()) == 1
    t = wt.tensor([2.0])
    wt.save({"w": t}, path)
    assert [p.name for p in tmp_path.iterdir()] == ["big.safetensors"]
    del t
