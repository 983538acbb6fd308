"""Module and Parameter: the model tree, its state dict and in-place updates.

webtensor tensors are immutable values over native handles. A Parameter (or a
buffer) is "updated in place" by moving a freshly computed handle into the same
Python object and freeing the old handle, so every reference to the parameter
(a module attribute, an optimizer's list) sees the new value. The accumulated
gradient moves with it, as torch keeps p.grad across optimizer.step().
"""

from __future__ import annotations

from collections import OrderedDict, namedtuple
from collections.abc import Callable, Iterator
from typing import Any

from .. import _lib
from .._dtype import BY_NAME, DType, to_dtype
from .._state import State
from .._tensor import Tensor, tensor

# ---- handle plumbing ----------------------------------------------------------------


def _adopt(t: Tensor) -> Tensor:
    """A new, unscoped Tensor owning t's handle (t is left empty): state that
    must outlive any `wt.scope()` the caller is in."""
    out = object.__new__(Tensor)
    out._h, out._keep = t._h, t._keep
    t._h, t._keep = 0, None
    return out


def _set_grad(t: Tensor, grad: Tensor | None) -> None:
    """Make grad the accumulated gradient of the leaf t (which has none). The C
    ABI has no setter: backpropagating grad from the leaf itself stores it."""
    if grad is not None:
        _lib.call("wt_backward", t._live(), grad._live())


def _replace(t: Tensor, new: Tensor, keep_grad: bool = True) -> None:
    """Move new's handle into t (new is left empty) and free t's old handle.
    A tensor that required a gradient still does, and keeps its accumulated
    gradient (moved to the new device) when keep_grad."""
    if new is t:
        return
    if new.requires_grad:  # a graph node or a leaf: t must be a fresh leaf
        leaf = new.detach()
        new.close()
        new = leaf
    trainable = t.requires_grad
    grad = t.grad if trainable and keep_grad else None
    old, t._h, t._keep = t._h, new._h, new._keep
    new._h, new._keep = 0, None
    if old:
        _lib.call("wt_tensor_free", old)
    if not trainable:
        return
    t.requires_grad = True
    if grad is not None:
        if grad.device != t.device:
            moved = grad.to(t.device)
            grad.close()
            grad = moved
        _set_grad(t, grad)
        grad.close()


def _as_tensor(value: Any, like: Tensor | None = None) -> Tensor:
    """value as a webtensor Tensor: a Tensor as is, anything else (NumPy, torch,
    nested lists) copied, so later changes to the source do not show through."""
    if isinstance(value, Tensor):
        return value
    try:
        return tensor(value)
    except TypeError:
        from .._dlpack import from_dlpack

        return from_dlpack(value)


# ---- Parameter ----------------------------------------------------------------------


class Parameter(Tensor):
    """A trainable tensor: a leaf that requires a gradient (torch.nn.Parameter).

    `Parameter(data)` takes a Tensor (sharing its values, cut from its graph),
    a NumPy array, a torch tensor or nested lists. Assigning a Parameter to a
    Module attribute registers it. Optimizers and load_state_dict replace its
    value in place; the object, its requires_grad and its gradient stay.
    """

    __slots__ = ()

    def __init__(self, data: Any = None, requires_grad: bool = True):
        if data is None:
            data = tensor([], dtype="f32")
        src = _as_tensor(data)
        leaf = src.detach()
        self._h, self._keep = leaf._h, leaf._keep
        leaf._h, leaf._keep = 0, None
        if requires_grad:
            self.requires_grad = True

    def __repr__(self) -> str:
        return "Parameter containing:\n" + super().__repr__()

    def __reduce_ex__(self, protocol):
        raise TypeError("Parameter cannot be pickled; save a state dict with wt.save")


# ---- Module -------------------------------------------------------------------------

_IncompatibleKeys = namedtuple("_IncompatibleKeys", ["missing_keys", "unexpected_keys"])


class Module:
    """Base class of layers and models, as torch.nn.Module.

    Subclasses call super().__init__() and assign Parameters, sub-Modules and
    (via register_buffer) buffers as attributes; forward() does the
    computation and calling the module runs it.
    """

    training: bool
    _parameters: dict[str, Parameter | None]
    _buffers: dict[str, Tensor | None]
    _non_persistent: set[str]
    _modules: dict[str, Module | None]

    def __init__(self) -> None:
        object.__setattr__(self, "training", True)
        object.__setattr__(self, "_parameters", OrderedDict())
        object.__setattr__(self, "_buffers", OrderedDict())
        object.__setattr__(self, "_non_persistent", set())
        object.__setattr__(self, "_modules", OrderedDict())

    forward: Callable[..., Any]

    def forward(self, *args, **kwargs):  # type: ignore[no-redef]  # noqa: F811
        raise NotImplementedError(f'Module [{type(self).__name__}] is missing the required "forward" function')

    def __call__(self, *args, **kwargs):
        return self.forward(*args, **kwargs)

    # -- attribute registration
    def _dicts(self) -> tuple[dict, dict, dict]:
        try:
            return self.__dict__["_parameters"], self.__dict__["_buffers"], self.__dict__["_modules"]
        except KeyError:
            raise AttributeError(
                f"cannot assign parameters, buffers or modules before Module.__init__() "
                f"(call super().__init__() first in {type(self).__name__}.__init__)"
            ) from None

    def __setattr__(self, name: str, value: Any) -> None:
        if isinstance(value, (Parameter, Module)):
            params, buffers, modules = self._dicts()
            for d in (params, buffers, modules):
                d.pop(name, None)
            self.__dict__.pop(name, None)
            (params if isinstance(value, Parameter) else modules)[name] = value
            return
        d = self.__dict__
        params, buffers, modules = d.get("_parameters", {}), d.get("_buffers", {}), d.get("_modules", {})
        if name in params:
            if value is not None:
                raise TypeError(f"cannot assign {type(value).__name__} as parameter {name!r} "
                                "(Parameter or None expected)")
            params[name] = None
        elif name in modules:
            if value is not None:
                raise TypeError(f"cannot assign {type(value).__name__} as child module {name!r} "
                                "(Module or None expected)")
            modules[name] = None
        elif name in buffers:
            if value is not None and not isinstance(value, Tensor):
                raise TypeError(f"cannot assign {type(value).__name__} as buffer {name!r} (Tensor or None expected)")
            buffers[name] = value
        else:
            object.__setattr__(self, name, value)

    def __getattr__(self, name: str) -> Any:
        d = self.__dict__
        for store in ("_parameters", "_buffers", "_modules"):
            s = d.get(store)
            if s is not None and name in s:
                return s[name]
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    def __delattr__(self, name: str) -> None:
        for store in ("_parameters", "_buffers", "_modules"):
            s = self.__dict__.get(store)
            if s is not None and name in s:
                del s[name]
                self._non_persistent.discard(name)
                return
        object.__delattr__(self, name)

    def __dir__(self):
        return sorted(set(super().__dir__()) | set(self._parameters) | set(self._buffers) | set(self._modules))

    def register_parameter(self, name: str, param: Parameter | None) -> None:
        self._check_name(name)
        if param is not None and not isinstance(param, Parameter):
            raise TypeError(f"cannot register {type(param).__name__} as parameter {name!r} "
                            "(Parameter or None expected)")
        self._parameters[name] = param

    def register_buffer(self, name: str, t: Tensor | None, persistent: bool = True) -> None:
        """Add non-trained state (saved in state_dict when persistent)."""
        self._check_name(name)
        if t is not None and not isinstance(t, Tensor):
            raise TypeError(f"cannot register {type(t).__name__} as buffer {name!r} (Tensor or None expected)")
        self._buffers[name] = _adopt(t.detach()) if t is not None else None
        if persistent:
            self._non_persistent.discard(name)
        else:
            self._non_persistent.add(name)

    def register_module(self, name: str, module: Module | None) -> None:
        self._check_name(name)
        if module is not None and not isinstance(module, Module):
            raise TypeError(f"{type(module).__name__} is not a Module subclass")
        self._modules[name] = module

    add_module = register_module

    def _check_name(self, name: str) -> None:
        self._dicts()
        if not isinstance(name, str) or not name or "." in name:
            raise KeyError(f"invalid name {name!r}: names are non-empty strings without dots")
        if name in self.__dict__ and name not in ("_parameters", "_buffers", "_modules"):
            raise KeyError(f"attribute {name!r} already exists")

    # -- traversal
    def named_children(self) -> Iterator[tuple[str, Module]]:
        seen: set[int] = set()
        for name, m in self._modules.items():
            if m is not None and id(m) not in seen:
                seen.add(id(m))
                yield name, m

    def children(self) -> Iterator[Module]:
        for _, m in self.named_children():
            yield m

    def named_modules(self, memo: set[int] | None = None, prefix: str = "") -> Iterator[tuple[str, Module]]:
        memo = set() if memo is None else memo
        if id(self) in memo:
            return
        memo.add(id(self))
        yield prefix, self
        for name, m in self._modules.items():
            if m is not None:
                yield from m.named_modules(memo, f"{prefix}.{name}" if prefix else name)

    def modules(self) -> Iterator[Module]:
        for _, m in self.named_modules():
            yield m

    def _named_members(self, store: str, prefix: str, recurse: bool) -> Iterator[tuple[str, Tensor]]:
        seen: set[int] = set()
        mods = self.named_modules(prefix=prefix) if recurse else iter([(prefix, self)])
        for mprefix, m in mods:
            for name, t in getattr(m, store).items():
                if t is None or id(t) in seen:
                    continue
                seen.add(id(t))
                yield (f"{mprefix}.{name}" if mprefix else name), t

    def named_parameters(self, prefix: str = "", recurse: bool = True) -> Iterator[tuple[str, Parameter]]:
        """(dotted name, parameter) pairs in torch's order; a shared parameter appears once."""
        yield from self._named_members("_parameters", prefix, recurse)  # type: ignore[misc]

    def parameters(self, recurse: bool = True) -> Iterator[Parameter]:
        for _, p in self.named_parameters(recurse=recurse):
            yield p

    def named_buffers(self, prefix: str = "", recurse: bool = True) -> Iterator[tuple[str, Tensor]]:
        yield from self._named_members("_buffers", prefix, recurse)

    def buffers(self, recurse: bool = True) -> Iterator[Tensor]:
        for _, b in self.named_buffers(recurse=recurse):
            yield b

    def apply(self, fn: Callable[[Module], Any]) -> Module:
        for m in self.children():
            m.apply(fn)
        fn(self)
        return self

    # -- modes and gradients
    def train(self, mode: bool = True) -> Module:
        if not isinstance(mode, bool):
            raise ValueError("training mode is expected to be boolean")
        self.training = mode
        for m in self.children():
            m.train(mode)
        return self

    def eval(self) -> Module:
        return self.train(False)

    def requires_grad_(self, requires_grad: bool = True) -> Module:
        for p in self.parameters():
            p.requires_grad = requires_grad
        return self

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Drop every parameter's gradient (webtensor has no zero-filled gradients: set_to_none is always true)."""
        for p in self.parameters():
            p.zero_grad()

    # -- state dict
    def _state_items(self, prefix: str = "") -> Iterator[tuple[str, Tensor]]:
        """Every (name, tensor) of the state dict: own parameters, own
        persistent buffers, then each child's, as torch orders them."""
        for name, p in self._parameters.items():
            if p is not None:
                yield prefix + name, p
        for name, b in self._buffers.items():
            if b is not None and name not in self._non_persistent:
                yield prefix + name, b
        for name, m in self._modules.items():
            if m is not None:
                yield from m._state_items(prefix + name + ".")

    def state_dict(self, prefix: str = "", keep_vars: bool = False) -> OrderedDict[str, Tensor]:
        """Parameters and persistent buffers by dotted name (PyTorch's names and
        order). Values are detached tensors sharing the current values
        (keep_vars=True gives the Parameter objects themselves)."""
        out: OrderedDict[str, Tensor] = OrderedDict()
        for name, t in self._state_items(prefix):
            out[name] = t if keep_vars else t.detach()
        return out

    def load_state_dict(self, state_dict: dict[str, Any], strict: bool = True) -> _IncompatibleKeys:
        """Set parameters and buffers from state_dict (webtensor Tensors, NumPy
        arrays or torch tensors). Shapes and dtypes must match; with strict,
        missing and unexpected names are errors too (one RuntimeError lists
        every problem). Nothing changes unless everything loads; values go to
        each parameter's device, and the Parameter objects keep their identity
        and gradients (the library points their handles at the values)."""
        entries = list(self._state_items())
        names = {n for n, _ in entries}
        missing = [n for n, _ in entries if n not in state_dict]
        unexpected = sorted(k for k in state_dict if k not in names)
        temps: list[Tensor] = []
        try:
            values = []
            for k, v in state_dict.items():
                t = _as_tensor(v)
                if t is not v:
                    temps.append(t)
                values.append((k, t))
            with State.of(entries) as mine, State.of(values) as given:
                st = _lib.lib.wt_state_assign(mine._h, given._h, 1 if strict else 0, type(self).__name__.encode())
                if st == _lib.ERR_INVALID:
                    raise RuntimeError("load_state_dict: " + _lib.lib.wt_last_error().decode(errors="replace"))
                _lib.check(st)
        finally:
            for t in temps:
                t.close()
        return _IncompatibleKeys(missing, unexpected)

    # -- devices and dtypes
    def to(self, *args, device: str | None = None, dtype: Any = None) -> Module:
        """Move (device, e.g. "webgpu") and/or cast (floating dtype) every
        parameter and buffer in place: m.to("webgpu"), m.to(wt.f64)."""
        for a in args:
            if isinstance(a, str) and a not in BY_NAME:
                device = a
            else:
                dtype = a
        dt: DType | None = to_dtype(dtype) if dtype is not None else None
        if dt is not None and not dt.is_floating:
            raise TypeError(f"Module.to only accepts floating point dtypes, got {dt.name}")
        for m in self.modules():
            for store in (m._parameters, m._buffers):
                for t in store.values():
                    if t is None:
                        continue
                    cur = t
                    new = None
                    if device is not None and t.device != device and not t.device.startswith(device + ":"):
                        new = t.to(device)
                        cur = new
                    if dt is not None and t.dtype.is_floating and t.dtype.name != dt.name:
                        cast = cur.to(dt)
                        if new is not None:
                            new.close()
                        new = cast
                    if new is not None:
                        _replace(t, new, keep_grad=dt is None)
        return self

    def cpu(self) -> Module:
        return self.to("cpu")

    def float(self) -> Module:
        return self.to(BY_NAME["f32"])

    def double(self) -> Module:
        return self.to(BY_NAME["f64"])

    # -- printing
    def extra_repr(self) -> str:
        return ""

    def __repr__(self) -> str:
        lines = []
        for name, m in self._modules.items():
            body = repr(m).replace("\n", "\n  ")
            lines.append(f"({name}): {body}")
        head = f"{type(self).__name__}({self.extra_repr()}"
        if not lines:
            return head + ")"
        return head + "\n  " + "\n  ".join(lines) + "\n)"


class Sequential(Module):
    """Modules run in order, each on the output of the one before; children
    are named "0", "1", ... (or by the keys of an OrderedDict)."""

    def __init__(self, *args: Module | OrderedDict):
        super().__init__()
        if len(args) == 1 and isinstance(args[0], OrderedDict):
            for name, m in args[0].items():
                self.register_module(name, m)
        else:
            for i, m in enumerate(args):
                self.register_module(str(i), m)

    def forward(self, x):
        for m in self._modules.values():
            x = m(x)
        return x

    def append(self, module: Module) -> Sequential:
        self.register_module(str(len(self._modules)), module)
        return self

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self) -> Iterator[Module]:
        return iter(self._modules.values())  # type: ignore[arg-type]

    def __getitem__(self, idx: int | slice):
        mods = list(self._modules.items())
        if isinstance(idx, slice):
            return Sequential(OrderedDict(mods[idx]))
        return mods[idx][1]


class ModuleList(Module):
    """A list of sub-modules, registered under "0", "1", ..."""

    def __init__(self, modules=None):
        super().__init__()
        for m in modules or ():
            self.append(m)

    def append(self, module: Module) -> ModuleList:
        self.register_module(str(len(self._modules)), module)
        return self

    def extend(self, modules) -> ModuleList:
        for m in modules:
            self.append(m)
        return self

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self) -> Iterator[Module]:
        return iter(self._modules.values())  # type: ignore[arg-type]

    def __getitem__(self, idx: int):
        return list(self._modules.values())[idx]
