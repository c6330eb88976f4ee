"""Which web pages may open a websocket to the server: the ``Origin`` check of the handshake.

A browser sends, with every websocket it opens, the ``Origin`` of the page that opens it; any
page on the web may try to open one to any server, and the browser sends the visitor's
cookies and reaches addresses the attacker cannot (a server on the visitor's own machine or
network). So the handshake (``server.app``) accepts:

- no ``Origin`` at all: not a browser (``server.client``, bots, scripts), which could send
  any ``Origin`` it liked anyway;
- the server's own origin: the one whose host and port are the request's ``Host``, the
  address the page was loaded from (behind a reverse proxy that passes the ``Host`` on, the
  public one);
- loopback's: ``localhost``, ``127.0.0.0/8`` and ``::1`` on any port, pages of the machine
  itself;
- those of ``[server] allowed_origins`` (``*``: any).

Anything else is refused with 403 before the websocket opens.
"""

from __future__ import annotations

import ipaddress
from urllib.parse import SplitResult, urlsplit

DEFAULT_PORTS = {"http": 80, "https": 443}


def parse_allowed(text: str) -> frozenset[str]:
    """``[server] allowed_origins`` as a set of origins (lowercase, as browsers send them);
    ``*`` stays ``*``."""
    return frozenset(_normal(p.strip()) for p in text.split(",") if p.strip())


def origin_allowed(origin: str | None, host: str | None, allowed: frozenset[str]) -> bool:
    """Whether a handshake with the ``Origin`` header ``origin`` (None: none) and the
    ``Host`` header ``host`` may open a websocket, ``allowed`` being ``parse_allowed``'s."""
    if origin is None or "*" in allowed:
        return True
    if _normal(origin) in allowed:
        return True
    page = _split(origin)
    if page is None or page.hostname is None:
        return False  # "null" (a sandboxed page, a file), or not an origin at all
    if _loopback(page.hostname):
        return True
    server = _split(f"{page.scheme}://{host}") if host else None
    return (
        server is not None
        and server.hostname == page.hostname
        and _port(server) == _port(page)
        and server.path == ""
    )


def _normal(origin: str) -> str:
    """An origin as compared: lowercase, no trailing slash, no default port."""
    text = origin.strip().lower().rstrip("/")
    parts = _split(text)
    if parts is None or parts.port is None or parts.port != DEFAULT_PORTS.get(parts.scheme):
        return text
    return text.rsplit(":", 1)[0]


def _split(url: str) -> SplitResult | None:
    try:
        parts = urlsplit(url.strip().lower())
        parts.port  # noqa: B018 (a bad port raises here)
    except ValueError:
        return None
    if parts.scheme not in DEFAULT_PORTS or parts.query or parts.fragment or parts.username:
        return None
    return parts


def _port(parts: SplitResult) -> int:
    return parts.port if parts.port is not None else DEFAULT_PORTS[parts.scheme]


def _loopback(hostname: str) -> bool:
    if hostname == "localhost" or hostname.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(hostname).is_loopback
    except ValueError:
        return False
