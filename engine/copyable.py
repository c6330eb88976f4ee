"""Copying and pickling the engine's frozen dataclasses, compiled or not.

``copy.deepcopy`` (the duel's audit tries a discard on a copy of a hand) and ``pickle``
rebuild a frozen slotted dataclass through the ``__setstate__`` that ``dataclasses`` writes
for it, which sets each field with ``object.__setattr__``. Compiled by mypyc
(``docs/performance.md``) the class is a native one whose frozen fields refuse that.
``copyable`` registers, for each class given, a reduction (``copyreg``, which both ``copy``
and ``pickle`` consult first) that rebuilds it through its own ``__init__`` from its init
fields: the same object either way, and checked (by ``__post_init__``, or an ``__init__``
written out) as any new one is.
"""

from __future__ import annotations

import copyreg
from dataclasses import fields
from typing import Any


def copyable(*classes: type) -> None:
    """Register the reduction of each frozen dataclass in ``classes``."""
    for cls in classes:
        copyreg.pickle(cls, _reduce)


def _reduce(obj: Any) -> tuple[Any, tuple[Any, ...]]:
    names = tuple(f.name for f in fields(obj) if f.init)
    return _rebuild, (type(obj), names, tuple(getattr(obj, n) for n in names))


def _rebuild(cls: type, names: tuple[str, ...], values: tuple[Any, ...]) -> Any:
    return cls(**dict(zip(names, values, strict=True)))
