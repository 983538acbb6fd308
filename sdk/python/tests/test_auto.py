"""wt.auto: the auto-agents through the C ABI. The data agent tunes a
DataLoader over PNGs decoded at every read (a record cache beats a decode
by far more than the 10% margin on any machine), the kernel agent a
compiled function; the journal and rollbacks are the library's. The
default policy is build/plugins/policy-auto.wasm (make plugins), found
from the working folder."""

from __future__ import annotations

import struct
import zlib

import numpy as np
import pytest

import webtensor as wt


def write_png(path, rgb: np.ndarray) -> None:
    """A minimal RGB PNG (8-bit, no interlace, filter 0 on every row)."""
    h, w, _ = rgb.shape

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    raw = b"".join(b"\x00" + rgb[y].tobytes() for y in range(h))
    path.write_bytes(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0))
                     + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b""))


@pytest.fixture
def photos(tmp_path):
    rng = np.random.default_rng(0)
    for c in range(2):
        (tmp_path / "photos" / f"c{c}").mkdir(parents=True)
        for i in range(16):
            write_png(tmp_path / "photos" / f"c{c}" / f"{i:02d}.png", rng.integers(0, 256, (48, 48, 3), dtype=np.uint8))
    return tmp_path / "photos"


def test_tune_keeps_a_cache_of_decoded_images_and_rolls_it_back(photos, tmp_path):
    journal = tmp_path / "journal"
    loader = wt.data.DataLoader(wt.data.image_folder(photos), batch_size=8, shuffle=True, seed=1)
    before = [y.numpy().tolist() for _, y in loader]
    report = wt.auto.tune(loader, name="photos", dir=journal, runs=5)
    first = report["decisions"][0]
    assert first["what"] == "data.photos.cache=on"
    assert first["verdict"] == "kept", first["reason"]
    assert report["pipeline_before"]["cache"] is False and report["pipeline_after"]["cache"] is True
    assert report["samples_per_s_after"] > report["samples_per_s_before"]
    assert loader.cache is True, "the loader's attributes follow its pipeline"
    loader.set_epoch(0)
    assert [y.numpy().tolist() for _, y in loader] == before, "the same samples in the same order"

    records = wt.auto.journal([first["id"]], dir=journal)
    assert len(records) == 1 and records[0]["policy"] == "auto.data"
    assert records[0]["guard"]["ok"] and "same samples in the same order" in records[0]["guard"]["detail"]
    assert [r["id"] for r in wt.auto.journal(dir=journal)][0] == first["id"]

    undo = wt.auto.rollback(first["id"], dir=journal)
    assert undo.startswith("d")
    assert wt.auto.journal([undo], dir=journal)[0]["of"] == first["id"]
    again = wt.auto.tune(loader, name="photos", dir=journal, measure=False)
    assert again["decisions"] == [] and again["pipeline_after"]["cache"] is False
    assert loader.cache is False
    with pytest.raises(ValueError, match="already rolled back"):
        wt.auto.rollback(first["id"], dir=journal)


def test_tune_graph_reports_the_kernel_agents_decisions(tmp_path):
    threads = wt.get_num_threads()
    try:
        f = wt.compile(lambda x: (x * x + 1).relu())
        x = wt.tensor(np.linspace(-1, 1, 64, dtype=np.float32))
        report = wt.auto.tune_graph(f, x, name="poly", dir=tmp_path, runs=3)
        assert report["workload"] == "poly" and report["repeat"] >= 1
        assert "cpu.threads" in report["settings"]
        for k, v in report["cached"].items():
            assert report["settings"][k] == v
        assert [r["id"] for r in wt.auto.journal(dir=tmp_path)] == [d["id"] for d in report["decisions"]]
    finally:
        wt.set_num_threads(threads)


def test_errors(tmp_path):
    loader = wt.data.DataLoader(wt.data.npy(*(str(p) for p in _npy(tmp_path))), batch_size=2)
    with pytest.raises(OSError, match="policy module"):
        wt.auto.tune(loader, dir=tmp_path, policy="no/such.wasm#data")
    with pytest.raises(ValueError, match="loader name"):
        wt.auto.tune(loader, name="a b", dir=tmp_path)
    with pytest.raises(TypeError, match="DataLoader over one of wt.data's readers"):
        wt.auto.tune(wt.data.DataLoader([1, 2, 3]))
    with pytest.raises(ValueError, match='no decision "d0042"'):
        wt.auto.rollback("d0042", dir=tmp_path)


def _npy(tmp_path):
    x, y = tmp_path / "x.npy", tmp_path / "y.npy"
    np.save(x, np.zeros((4, 2), np.float32))
    np.save(y, np.arange(4))
    return x, y


_CLUSTER = {
    "devices": [
        {"name": "cpu", "kind": "cpu", "gflops": 40, "gbps": 10, "memory_bytes": 10**9},
        {"name": "proc0", "kind": "process", "gflops": 20, "gbps": 10, "memory_bytes": 10**9},
        {"name": "proc1", "kind": "process", "gflops": 20, "gbps": 10, "memory_bytes": 10**9},
    ],
    "links": [{"a": "parent", "b": "proc0", "gbps": 1, "latency_us": 50},
              {"a": "parent", "b": "proc1", "gbps": 1, "latency_us": 50}],
}


def test_plan_parallel_prices_every_plan_of_a_compiled_model():
    w1 = wt.tensor(np.ones((16, 32), np.float32), requires_grad=True)
    w2 = wt.tensor(np.ones((32, 8), np.float32), requires_grad=True)
    f = wt.compile(lambda x: (x @ w1).relu() @ w2)
    x = wt.tensor(np.ones((8, 16), np.float32))
    report = wt.auto.plan_parallel(f, x, cluster=_CLUSTER)
    assert report["chosen"]["feasible"]
    assert report["model"]["param_bytes"] == 4 * (16 * 32 + 32 * 8)
    assert report["model"]["batch"] == 8
    names = {(p["strategy"], p["degree"], p.get("micro_batches", 0)): p for p in report["candidates"]}
    assert ("tensor", 2, 0) in names and ("sequence", 2, 0) in names
    assert all(p["feasible"] or p["why"] for p in report["candidates"])
    assert all(p["step_seconds"] > 0 for p in report["candidates"] if p["feasible"])
    tiny = {"devices": [{"name": "cpu", "kind": "cpu", "gflops": 1, "gbps": 1, "memory_bytes": 100}]}
    report = wt.auto.plan_parallel(f, x, cluster=tiny)
    assert report["chosen"] is None and "holds 100" in report["candidates"][0]["why"]


def test_plan_parallel_errors():
    f = wt.compile(lambda x: x * 2)
    x = wt.tensor(np.ones((4,), np.float32))
    with pytest.raises(ValueError, match="needs worker_exe"):
        wt.auto.plan_parallel(f, x, workers=2)
    with pytest.raises(ValueError, match='device t is a "tpu"'):
        wt.auto.plan_parallel(f, x, cluster={"devices": [{"name": "t", "kind": "tpu", "gflops": 1, "gbps": 1,
                                                           "memory_bytes": 1}]})
    with pytest.raises(TypeError, match="wt.compile'd function or a Graph"):
        wt.auto.plan_parallel(lambda x: x, x)
