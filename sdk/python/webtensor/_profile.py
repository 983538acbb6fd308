"""Tracing: every op call recorded as a Chrome trace (Perfetto opens it),
by the library itself (trace/, through wt_profile_*); this module only gives
it Python's shape - the context manager wt.profile, as torch.profiler.profile
exports Chrome traces - and writes the trace that WEBTENSOR_TRACE asked for
when the interpreter exits. (wt.trace is graph capture, _compile.py.)"""

from __future__ import annotations

import atexit
import json
from contextlib import contextmanager
from collections.abc import Iterator

from . import _lib


class Trace:
    """A finished recording: .json() is the Chrome trace as a dict,
    .save(path) writes it; `webtensor flame PATH` draws it."""

    def __init__(self, text: str) -> None:
        self._text = text

    def json(self) -> dict:
        return json.loads(self._text)

    def save(self, path: str) -> None:
        with open(path, "w", encoding="utf-8") as f:
            f.write(self._text)


class _Recording:
    result: Trace | None = None


@contextmanager
def profile(path: str | None = None, *, sync: bool = False) -> Iterator[_Recording]:
    """Record every op call inside the block; write it to path (if given)
    at the end, and keep it as .result. sync=True waits for the device after
    each op, so GPU ops carry their execution time, not their submission."""
    _lib.call("wt_profile_start", 1 if sync else 0)
    rec = _Recording()
    try:
        yield rec
    finally:
        _lib.call("wt_profile_stop")
        rec.result = Trace(_lib.read_string("wt_profile_json"))
        if path is not None:
            rec.result.save(path)


def _write_at_exit() -> None:
    try:
        path = _lib.read_string("wt_profile_exit_path")
        if path:
            _lib.call("wt_profile_write", path.encode())
    except Exception as e:  # noqa: BLE001 (at exit there is no caller to raise to)
        import sys

        print(f"webtensor: could not write the trace WEBTENSOR_TRACE asked for: {e}", file=sys.stderr)


atexit.register(_write_at_exit)
