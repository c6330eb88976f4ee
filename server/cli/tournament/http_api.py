"""What ``guobiao tournament`` reads of the server's HTTP API: the address
(``ws://HOST:PORT/ws`` -> ``http://HOST:PORT``), its JSON, a seated session's view, and
the exports.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import sys
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from server.cli.tournament.arguments import HTTP_TIMEOUT, TournamentCliError
from server.client import normalize_url

# --------------------------------------------------------------------- HTTP ---


def http_base(url: str) -> str:
    """The HTTP address of the server whose websocket is ``url``: ``ws://host:port/ws`` ->
    ``http://host:port`` (``wss`` -> ``https``; a path before ``/ws`` is kept);
    ``TournamentCliError`` for what is no such address (as the websocket client says it)."""
    try:
        parts = urlsplit(normalize_url(url))
        host = parts.hostname
    except ValueError:  # "Invalid IPv6 URL"
        host = None
    scheme = {"ws": "http", "wss": "https"}.get(parts.scheme, parts.scheme) if host else ""
    if scheme not in ("http", "https"):
        raise TournamentCliError(f"{url} is not a websocket URL (ws://HOST:PORT/ws)")
    path = parts.path.removesuffix("/").removesuffix("/ws")
    return urlunsplit((scheme, parts.netloc, path, "", ""))


def http_fetch(url: str) -> bytes:
    """GET ``url`` without any proxy (as the websocket client); ``TournamentCliError`` with
    the server's ``error`` on a refusal."""
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    try:
        with opener.open(url, timeout=HTTP_TIMEOUT) as response:
            body: bytes = response.read()
            return body
    except urllib.error.HTTPError as exc:
        detail = exc.read().decode("utf-8", "replace")
        with contextlib.suppress(ValueError, AttributeError):  # not the API's JSON
            detail = str(json.loads(detail).get("error", detail))
        raise TournamentCliError(
            f"{detail.strip() or exc.reason} (HTTP {exc.code}, {url})"
        ) from None
    except (urllib.error.URLError, OSError) as exc:
        reason = getattr(exc, "reason", exc)
        if isinstance(reason, OSError) and reason.strerror:
            reason = reason.strerror.lower()
        raise TournamentCliError(
            f"cannot reach {url}: {reason} (is `guobiao serve` running there?)"
        ) from None


async def http_json(server: str, path: str) -> dict[str, Any]:
    url = http_base(server) + path
    body = await asyncio.to_thread(http_fetch, url)
    try:
        data = json.loads(body)
    except ValueError:
        raise TournamentCliError(f"{url} answered something that is not JSON") from None
    if not isinstance(data, dict):
        raise TournamentCliError(f"{url} answered {type(data).__name__}, not an object")
    return data


async def session_view(args: argparse.Namespace, data: dict[str, Any]) -> dict[str, Any]:
    """The HTTP view of the tournament's latest seated session (``data["session"]``)."""
    number = data.get("session")
    if not isinstance(number, int) or number < 1:
        raise TournamentCliError(f"tournament {args.tournament} has no seated session")
    return await http_json(args.server, f"/api/tournaments/{args.tournament}/sessions/{number}")


async def export(args: argparse.Namespace) -> int:
    url = f"{http_base(args.server)}/api/tournaments/{args.tournament}/export.{args.format}"
    body = await asyncio.to_thread(http_fetch, url)
    if args.output is None or args.output == "-":
        sys.stdout.buffer.write(body)
        sys.stdout.flush()
        return 0
    try:
        Path(args.output).write_bytes(body)
    except OSError as exc:
        raise TournamentCliError(f"cannot write {args.output}: {exc}") from None
    print(
        f"tournament {args.tournament}: {args.format.upper()} standings written to "
        f"{args.output} ({len(body):,} bytes)"
    )
    return 0
