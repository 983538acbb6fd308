"""wt.auto: the library's auto-agents (Go's package auto, through wt_auto_*).

An agent measures a change A/B on your own workload, in this process
(interleaved runs, medians, a rank test, a 10% margin), keeps it only when
it wins, remembers it under a name for later runs and journals every
decision (JSON lines in a folder). A policy - a sandboxed WebAssembly
module, the package's policy-auto.wasm by default - proposes; it never
changes anything itself.

    loader = wt.data.DataLoader(wt.data.image_folder("photos"), batch_size=32)
    report = wt.auto.tune(loader, name="photos")   # workers, prefetch, a record cache
    report["samples_per_s_before"], report["samples_per_s_after"]
    wt.auto.journal()                               # every decision, in full
    wt.auto.rollback(report["decisions"][0]["id"])  # back to the state before it

A tune never changes which samples a batch holds or their order: a change
is kept only if the measured batches hash as they did before it.
"""

from __future__ import annotations

import ctypes as C
import json
import os
from typing import Any

from . import _lib
from ._compile import Graph, _signature
from ._tensor import Tensor
from .data import DataLoader

__all__ = ["default_policy", "journal", "plan_parallel", "rollback", "tune", "tune_graph"]

# A tune's report fits this many bytes; the library checks the buffer
# before it runs, since a tune cannot be redone to fill a larger one.
_REPORT_BYTES = 16384


def default_policy(agent: str) -> str:
    """The policy spec an agent ("data", "kernel") asks by default: the
    package's policy-auto.wasm, or "default#agent", which the library finds
    as build/plugins/policy-auto.wasm from the working folder (a source
    checkout after `make plugins`)."""
    shipped = os.path.join(os.path.dirname(os.path.abspath(__file__)), "policy-auto.wasm")
    return f"{shipped}#{agent}" if os.path.isfile(shipped) else f"default#{agent}"


def _options(agent: str | None, dir, policy, runs, margin, **extra) -> bytes:
    opts: dict[str, Any] = {k: v for k, v in extra.items() if v is not None}
    if dir is not None:
        opts["dir"] = os.fspath(dir)
    if agent is not None:
        opts["policy"] = policy or default_policy(agent)
    if runs is not None:
        opts["runs"] = runs
    if margin is not None:
        opts["margin"] = margin
    return json.dumps(opts).encode()


def _report(name: str, *args) -> str:
    buf = C.create_string_buffer(_REPORT_BYTES)
    needed = C.c_size_t(0)
    _lib.check(getattr(_lib.lib, name)(*args, buf, _REPORT_BYTES, C.byref(needed)))
    return buf.value.decode()


def tune(loader: DataLoader, *, name: str = "loader", batches: int = 0, epoch: int = 0, measure: bool = True,
         dir: str | os.PathLike | None = None, policy: str | None = None, runs: int | None = None,
         margin: float | None = None) -> dict:
    """Tune a DataLoader's pipeline (workers, prefetch, a cache of decoded
    records) on its own throughput: each run reads `batches` batches of
    epoch `epoch`. The loader changes in place (num_workers,
    prefetch_factor and cache follow) for the passes after. measure=False
    applies what an earlier tune under `name` kept, measuring nothing.

    Returns the report: pipeline_before/after, samples_per_s_before/after,
    the cache's stats and the decisions summed up (journal() has them in
    full)."""
    if not isinstance(loader, DataLoader) or not loader._h:
        raise TypeError("wt.auto.tune takes a wt.data.DataLoader over one of wt.data's readers "
                        "(a Python dataset is read on Python threads, which the library does not run)")
    opts = _options("data" if measure else None, dir, policy, runs, margin, name=name, batches=batches or None,
                    epoch=epoch or None, measure=measure)
    report = json.loads(_report("wt_auto_tune_loader", loader._h, opts))
    after = report["pipeline_after"]
    loader.num_workers, loader.prefetch_factor, loader.cache = after["workers"], after["prefetch"], after["cache"]
    return report


def tune_graph(fn, *inputs: Tensor, name: str = "graph", repeat: int = 0, grad: bool = False,
               dir: str | os.PathLike | None = None, policy: str | None = None, runs: int | None = None,
               margin: float | None = None) -> dict:
    """Tune the kernels a graph runs on inputs: a wt.compile'd function
    (captured on these inputs first if it has not been) or a Graph from
    wt.trace. On the CPU the agent tunes the backend's settings (threads,
    its storage cache), the whole process's, remembered under `name`; on a
    WebGPU device (the first input's) it synthesises kernel variants for
    the hot matmul and elementwise decisions, checks each against the
    default kernel, and keeps winners in the device's disk cache, where
    later processes find them. Returns the report: the settings (CPU) or
    the kernel variant of each decision tuned (WebGPU, "kernels") and the
    decisions summed up."""
    graph = _graph_of(fn, inputs, "tune_graph")
    hs = _lib.i64_array(t._live() for t in inputs)
    opts = _options("kernel", dir, policy, runs, margin, name=name, repeat=repeat or None, grad=grad or None)
    return json.loads(_report("wt_auto_tune_graph", graph._h, hs, len(inputs), opts))


def _graph_of(fn, inputs, what: str) -> Graph:
    if isinstance(fn, Graph):
        return fn
    graphs = getattr(fn, "graphs", None)
    if graphs is None:
        raise TypeError(f"wt.auto.{what} takes a wt.compile'd function or a Graph, got {type(fn).__name__}")
    key = _signature(inputs)
    if key not in graphs:
        fn(*inputs)
    return graphs[key]


def plan_parallel(fn, *inputs: Tensor, cluster: dict | None = None, workers: int = 0,
                  worker_exe: str | os.PathLike | None = None, webgpu: bool = False,
                  param_inputs: list[int] | None = None) -> dict:
    """Auto-parallel: how to split a training step of a model's forward
    pass (a wt.compile'd function, captured on these inputs first if it has
    not been, or a Graph; input 0 is the batch) across a cluster - one
    device, data, tensor (Megatron), sequence (K and V gathered) or
    pipeline parallel - chosen by a cost model of the graph's FLOPs, bytes,
    parameters and exchanges. The cluster is a description (a dict:
    "devices" with name, kind cpu|webgpu|process, gflops, gbps,
    memory_bytes; "links" from "parent" to each process) or, when None,
    measured here: the CPU, the WebGPU device if `webgpu`, and `workers`
    processes of `worker_exe` (the webtensor CLI serves as one). Returns the
    report: "chosen" (None when nothing fits; "error" says why) and every
    "candidates" plan with its predicted "step_seconds", "memory_bytes" and,
    when infeasible, "why"."""
    graph = _graph_of(fn, inputs, "plan_parallel")
    opts: dict[str, Any] = {}
    if cluster is not None:
        opts["cluster"] = cluster
    if workers:
        opts["workers"] = workers
    if worker_exe is not None:
        opts["worker_exe"] = os.fspath(worker_exe)
    if webgpu:
        opts["webgpu"] = True
    if param_inputs is not None:
        opts["param_inputs"] = list(param_inputs)
    return json.loads(_lib.read_string("wt_auto_parallel_plan", graph._h, json.dumps(opts).encode()))


def journal(ids: list[str] | None = None, *, dir: str | os.PathLike | None = None) -> list[dict]:
    """The journal's records (all, or those of `ids`), oldest first: each
    decision's proposal, measurements, guard, verdict and state hashes."""
    opts: dict[str, Any] = {}
    if dir is not None:
        opts["dir"] = os.fspath(dir)
    if ids is not None:
        opts["ids"] = list(ids)
    return json.loads(_lib.read_string("wt_auto_journal_json", json.dumps(opts).encode()))


def rollback(id: str, *, dir: str | os.PathLike | None = None) -> str:  # noqa: A002 (the journal's word)
    """Restore the state from before kept decision `id` (undoing the kept
    decisions after it); returns the rollback's own journal id. Loaders the
    state names must have been tuned in this process under their names."""
    opts = {"dir": os.fspath(dir)} if dir is not None else {}
    buf = C.create_string_buffer(32)
    needed = C.c_size_t(0)
    _lib.check(_lib.lib.wt_auto_rollback(json.dumps(opts).encode(), id.encode(), buf, 32, C.byref(needed)))
    return buf.value.decode()
