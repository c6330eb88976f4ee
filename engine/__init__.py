"""guobiao's rules engine: pure rules, no I/O.

``tiles`` (tile ints), ``notation`` (parse/format hands), ``hand`` (melds and
hands), ``shanten`` (tiles away from ready, waits), ``fans`` (the fan table),
``scoring`` (the fan calculator), ``rules`` (rule sets), ``errors``.

A wheel built where a C compiler is found carries most of these modules compiled by mypyc
(the list is in ``setup.py``; docs/performance.md): the same code, about 1.4 times as
fast in the bots and 3 times in the calculator.
"""

from importlib.machinery import EXTENSION_SUFFIXES


def compiled() -> bool:
    """Whether this install runs the mypyc-compiled engine (else the pure-Python one)."""
    from engine import forms  # noqa: PLC0415 (one of the compiled modules; loaded when asked)

    return (forms.__file__ or "").endswith(tuple(EXTENSION_SUFFIXES))
