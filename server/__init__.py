"""The I/O side of guobiao: the websocket server and its HTTP API (``app``, ``protocol``,
``tables``), persistence (``db``, ``accounts``, ``grades``), configuration, the Python client,
and the ``guobiao`` commands (``cli/``, one module per command).

Everything that touches the outside world lives here; the rules live in the sans-I/O
``engine`` package and are never re-implemented in ``server``.
"""

# The release, as pyproject.toml's [project] version says (tests/server/test_cli_version.py
# checks that they agree): ``guobiao --version``, the ``welcome`` message, the Server header.
VERSION = "0.1.0"
