"""wt.auto: the library's auto-agents (Go's package auto, through the C ABI's
wt_call: the auto.* targets that docs/calls.md lists).

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

import os
from typing import Any

from ._compile import Graph, _signature
from ._objects import call
from ._tensor import Tensor
from .data import DataLoader

__all__ = ["default_policy", "journal", "plan_parallel", "rollback", "tune", "tune_graph"]


def default_policy(agent: str) -> str:
    """The policy spec an agent ("data", "kernel") asks by default: the
    package's policy-auto.wasm, or "default#agent", which the library finds
    as build/plugins/policy-auto.wasm from the working folder (a source
    checkout after `make plugins`)."""
    shipped = os.path.join(os.path.dirname(os.path.abspath(__file__)), "policy-auto.wasm")
    return f"{shipped}#{agent}" if os.path.isfile(shipped) else f"default#{agent}"


def _options(agent: str | None = None, policy: str | None = None, **opts: Any) -> dict[str, Any]:
    """The options an auto.* target takes (docs/auto.md): those given (paths
    as str), with agent's policy (default_policy) when an agent measures."""
    if agent is not None:
        opts["policy"] = policy or default_policy(agent)
    return {k: os.fspath(v) if isinstance(v, os.PathLike) else v for k, v in opts.items() if v is not None}


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
    opts = _options("data" if measure else None, policy, dir=dir, runs=runs, margin=margin, name=name,
                    batches=batches or None, epoch=epoch or None, measure=measure)
    report = call("auto.tune_loader", loader=loader._h, options=opts)
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
    opts = _options("kernel", policy, dir=dir, runs=runs, margin=margin, name=name, repeat=repeat or None,
                    grad=grad or None)
    return call("auto.tune_graph", graph=graph._h, inputs=[t._live() for t in inputs], options=opts)


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
    opts = _options(cluster=cluster, workers=workers or None, worker_exe=worker_exe, webgpu=webgpu or None,
                    param_inputs=None if param_inputs is None else list(param_inputs))
    return call("auto.parallel_plan", graph=graph._h, options=opts)


def journal(ids: list[str] | None = None, *, dir: str | os.PathLike | None = None) -> list[dict]:
    """The journal's records (all, or those of `ids`), oldest first: each
    decision's proposal, measurements, guard, verdict and state hashes."""
    return call("auto.journal", options=_options(dir=dir, ids=None if ids is None else list(ids)))


def rollback(id: str, *, dir: str | os.PathLike | None = None) -> str:  # noqa: A002 (the journal's word)
    """Restore the state from before kept decision `id` (undoing the kept
    decisions after it); returns the rollback's own journal id. Loaders the
    state names must have been tuned in this process under their names."""
    return call("auto.rollback", options=_options(dir=dir), id=id)
