"""The I/O side of guobiao: the command-line interface now, the websocket server and
persistence later.

Everything that touches the outside world lives here; the rules live in the sans-I/O
``engine`` package and are never re-implemented in ``server``.
"""
