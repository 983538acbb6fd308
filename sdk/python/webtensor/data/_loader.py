"""DataLoader: the library's loader (call()'s loader.* targets) for its own
datasets, and for Python datasets the same batching and shuffle order on
Python threads."""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from .. import _lib
from .._objects import call
from .._tensor import Tensor, tensor
from ._native import NativeDataset, permutation


def default_collate(samples: list[Any]) -> Any:
    """Stacks a list of samples into a batch as PyTorch's default_collate:
    Tensors and NumPy arrays stack along a new first dim, numbers become a
    1-D tensor, tuples, lists and dicts collate field by field, anything
    else (strings) stays a list."""
    first = samples[0]
    if isinstance(first, Tensor):
        from .. import stack

        return stack(samples)
    if type(first).__module__ == "numpy" and hasattr(first, "shape"):
        import numpy as np

        return tensor(np.stack(samples))
    if isinstance(first, (bool, int, float)):
        return tensor(samples)
    if isinstance(first, Mapping):
        return {k: default_collate([s[k] for s in samples]) for k in first}
    if isinstance(first, Sequence) and not isinstance(first, (str, bytes)):
        return tuple(default_collate(list(col)) for col in zip(*samples, strict=True))
    return list(samples)


class DataLoader:
    """PyTorch's DataLoader over a dataset: batches of batch_size records
    (the last one short unless drop_last), in order or, with shuffle, in
    wt.data.permutation(len, seed, epoch) order, epoch counting the passes
    (or set by set_epoch). num_workers reads batches on that many workers,
    prefetch_factor batches each ahead of the loop. cache keeps every
    record as its first read gave it (a native dataset that fits the
    library's 1 GiB budget), so later epochs skip decoding;
    wt.auto.tune(loader) measures whether it, and the worker settings, pay.

    A dataset from wt.data's readers is loaded by the library: its workers
    are goroutines, batches are tuples of Tensors on device. Any other
    dataset (__getitem__ and __len__) is read on Python threads and batched
    by collate_fn (default_collate). pin_memory is accepted for PyTorch's
    signature and changes nothing: the library collates straight into host
    tensors and uploads to a GPU device on its workers, ahead of the loop;
    no backend offers page-locked memory to stage in."""

    def __init__(self, dataset, batch_size: int = 1, shuffle: bool = False, *, seed: int = 0,
                 drop_last: bool = False, num_workers: int = 0, prefetch_factor: int = 2,
                 device: str | None = None, collate_fn: Callable[[list[Any]], Any] | None = None,
                 pin_memory: bool = False, cache: bool = False):
        if batch_size < 1:
            raise ValueError(f"batch_size must be at least 1, got {batch_size}")
        if num_workers < 0 or prefetch_factor < 1:
            raise ValueError(f"num_workers {num_workers} must be >= 0 and prefetch_factor {prefetch_factor} >= 1")
        self.dataset = dataset
        self.batch_size, self.shuffle, self.seed, self.drop_last = batch_size, shuffle, seed, drop_last
        self.num_workers, self.prefetch_factor, self.device = num_workers, prefetch_factor, device
        self.collate_fn = collate_fn or default_collate
        self.pin_memory, self.cache = pin_memory, cache
        self._epoch = 0
        self._h = 0
        if isinstance(dataset, NativeDataset) and collate_fn is None:
            opts = {"batch_size": batch_size, "shuffle": shuffle, "seed": seed, "drop_last": drop_last,
                    "workers": num_workers, "prefetch": prefetch_factor, "cache": cache}
            if device:
                opts["device"] = device
            self._h = call("loader.new", dataset=dataset._live(), options=opts)

    def set_epoch(self, epoch: int) -> None:
        """The epoch the next pass reads (its shuffle order); passes count
        on from it."""
        if epoch < 0:
            raise ValueError(f"epoch must not be negative, got {epoch}")
        self._epoch = epoch

    def __len__(self) -> int:
        if self._h:
            return call("loader.len", self._h)
        n = len(self.dataset)
        return n // self.batch_size if self.drop_last else -(-n // self.batch_size)

    def __iter__(self) -> Iterator[Any]:
        epoch, self._epoch = self._epoch, self._epoch + 1
        return self._native(epoch) if self._h else self._python(epoch)

    def _native(self, epoch: int) -> Iterator[tuple[Tensor, ...]]:
        h = self._h
        call("loader.epoch", h, epoch=epoch)
        while batch := call("loader.next", h):
            yield tuple(map(Tensor._wrap, batch))

    def _batches(self, epoch: int) -> list[list[int]]:
        n = len(self.dataset)
        order = permutation(n, self.seed, epoch) if self.shuffle else list(range(n))
        end = n - n % self.batch_size if self.drop_last else n
        return [order[i:i + self.batch_size] for i in range(0, end, self.batch_size)]

    def _read(self, idx: list[int]) -> Any:
        if isinstance(self.dataset, NativeDataset):
            return self.collate_fn([self.dataset.get(i, self.device) for i in idx])
        return self.collate_fn([self.dataset[i] for i in idx])

    def _python(self, epoch: int) -> Iterator[Any]:
        batches = self._batches(epoch)
        if self.num_workers == 0:
            for idx in batches:
                yield self._read(idx)
            return
        window = self.num_workers * self.prefetch_factor
        with ThreadPoolExecutor(self.num_workers, thread_name_prefix="wt-data") as pool:
            pending: deque = deque()
            todo = iter(batches)
            for idx in todo:
                pending.append(pool.submit(self._read, idx))
                if len(pending) >= window:
                    break
            while pending:
                batch = pending.popleft().result()
                nxt = next(todo, None)
                if nxt is not None:
                    pending.append(pool.submit(self._read, nxt))
                yield batch

    def close(self) -> None:
        """Stop the library's workers (a native loader); closing twice is harmless."""
        h, self._h = self._h, 0
        if h:
            call("loader.free", h)

    def __del__(self):
        h = getattr(self, "_h", 0)
        if h and _lib.lib is not None:
            try:
                call("loader.free", h)
            except Exception:  # interpreter shutdown: the library (or json) may be gone
                pass
