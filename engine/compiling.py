"""What a compiled module asks of mypyc about one of its classes, at no cost to a pure install.

``mypyc_attr`` (from ``mypy_extensions``, which comes with mypy) is read by mypyc when it
compiles a module (``setup.py``) and does nothing at run time. A compiled wheel runs without
mypy, and a plain install never has it, so this module gives the decorator where
``mypy_extensions`` is missing: a class returned as it is. The checker and the compiler see
``mypy_extensions``' own.

Both the hand (``engine.table.HandState``) and the match (``engine.match.Match``) allow
interpreted subclasses: a Python class may derive from the match (the tests' do), and
``copy.deepcopy`` copies a compiled hand (the duel's audit) as it copies a pure one, making
the instance without running ``__init__``, which a compiled class that allows no subclass
runs on every instance made. (``serializable=True``, meant for copying, makes mypy 2.4's
mypyc skip ``__init__`` altogether: docs/performance.md, "Writing engine code that
compiles".)
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from mypy_extensions import mypyc_attr
else:
    try:
        from mypy_extensions import mypyc_attr
    except ImportError:  # no mypy here: the decorator is mypyc's alone

        def mypyc_attr(*attrs: str, **kwattrs: Any) -> Any:
            return lambda cls: cls


__all__ = ["mypyc_attr"]
