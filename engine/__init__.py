"""guobiao's rules engine: pure rules, no I/O.

``tiles`` (tile ints), ``notation`` (parse/format hands), ``hand`` (melds and
hands), ``shanten`` (tiles away from ready, waits), ``fans`` (the fan table),
``scoring`` (the fan calculator), ``rules`` (rule sets), ``errors``.
"""
