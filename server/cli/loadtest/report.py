"""What ``guobiao loadtest`` measured (``Report``): actions, latencies and their
percentiles, errors, dropped connections, matches; printed as text or JSON, and merged from
the raw figures of several client processes.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field, fields
from typing import Any

from server.cli.loadtest.pacing import Think


@dataclass
class Report:
    url: str
    tables: int
    bot: str
    duration: float  # asked for
    think: Think = field(default_factory=lambda: Think(0.0, 0.0))
    seed: int = 0
    connections: int = 0  # wanted: 4 per table
    connected: int = 0
    connect_failures: int = 0
    startup_seconds: float = 0.0  # until every connection was seated (or gave up)
    elapsed: float = 0.0  # from the start to the stop
    active_seconds: float = 0.0  # from the first match's start to the stop
    actions_sent: int = 0
    actions_refused: int = 0
    updates: int = 0
    cpu_seconds: float = 0.0  # this tool's own, from the start to the stop (every process)
    latencies: list[float] = field(default_factory=list)
    server_latencies: list[float] = field(default_factory=list)  # to the table's first update
    # From the server reading an action (its update's ``input_at``) to each connection's
    # receipt of that update: only against a server that stamps (``[server] stamp_updates``).
    served_latencies: list[float] = field(default_factory=list)
    settled_latencies: list[float] = field(default_factory=list)  # the same, 20 s on
    startup_latencies: list[float] = field(default_factory=list)  # the same, before it
    loop_lags: list[float] = field(default_factory=list)  # this tool's own event loop
    errors: Counter[str] = field(default_factory=Counter)
    dropped: int = 0
    matches_started: int = 0
    matches_completed: int = 0
    notes: list[str] = field(default_factory=list)
    processes: int = 1  # client processes whose figures these are (``merge``)

    def raw(self) -> dict[str, Any]:
        """Every field, samples included, as JSON values (``from_raw`` reads it back)."""
        out = {f.name: getattr(self, f.name) for f in fields(self)}
        out["think"] = [self.think.low, self.think.high]
        out["errors"] = dict(self.errors)
        return out

    @classmethod
    def from_raw(cls, data: dict[str, Any]) -> Report:
        low, high = data["think"]
        return cls(**{**data, "think": Think(low, high), "errors": Counter(data["errors"])})

    @classmethod
    def merge(cls, parts: Sequence[Report]) -> Report:
        """One report of the parts run at once (each with its own tables): counts added,
        samples pooled, times the longest part's."""
        first = parts[0]
        out = cls(first.url, 0, first.bot, first.duration, first.think, first.seed)
        for name in (
            "tables",
            "connections",
            "connected",
            "connect_failures",
            "actions_sent",
            "actions_refused",
            "updates",
            "dropped",
            "matches_started",
            "matches_completed",
            "processes",
        ):
            setattr(out, name, sum(getattr(part, name) for part in parts))
        out.cpu_seconds = sum(part.cpu_seconds for part in parts)
        for name in ("startup_seconds", "elapsed", "active_seconds"):
            setattr(out, name, max(getattr(part, name) for part in parts))
        for part in parts:
            out.latencies += part.latencies
            out.server_latencies += part.server_latencies
            out.served_latencies += part.served_latencies
            out.settled_latencies += part.settled_latencies
            out.startup_latencies += part.startup_latencies
            out.loop_lags += part.loop_lags
            out.errors += part.errors
            out.notes += [note for note in part.notes if note not in out.notes]
        return out

    @property
    def accepted(self) -> int:
        return self.actions_sent - self.actions_refused

    def percentiles(self, latencies: list[float] | None = None) -> dict[str, float | None]:
        data = sorted(self.latencies if latencies is None else latencies)
        out: dict[str, float | None] = {}
        for name, q in (("p50", 50), ("p95", 95), ("p99", 99)):
            out[name] = _ms(percentile(data, q)) if data else None
        out["max"] = _ms(data[-1]) if data else None
        out["mean"] = _ms(sum(data) / len(data)) if data else None
        return out

    def to_dict(self) -> dict[str, Any]:
        window = self.active_seconds or 0.0
        return {
            "url": self.url,
            "tables": self.tables,
            "bot": self.bot,
            "duration_s": self.duration,
            "think_s": [self.think.low, self.think.high],
            "seed": self.seed,
            "processes": self.processes,
            "elapsed_s": round(self.elapsed, 3),
            "startup_s": round(self.startup_seconds, 3),
            "active_s": round(window, 3),
            "connections": {
                "wanted": self.connections,
                "connected": self.connected,
                "failed": self.connect_failures,
                "dropped": self.dropped,
            },
            "actions": {
                "sent": self.actions_sent,
                "accepted": self.accepted,
                "refused": self.actions_refused,
                "per_second": round(self.accepted / window, 1) if window else 0.0,
            },
            "updates": {
                "received": self.updates,
                "per_second": round(self.updates / window, 1) if window else 0.0,
            },
            # What reading the updates and playing cost this tool: its processes' CPU time
            # over the updates they received (logins and start-up included).
            "tool_cpu": {
                "seconds": round(self.cpu_seconds, 3),
                "us_per_update": (
                    round(self.cpu_seconds / self.updates * 1e6, 1) if self.updates else None
                ),
            },
            "latency_ms": {**self.percentiles(), "samples": len(self.latencies)},
            "server_latency_ms": {
                **self.percentiles(self.server_latencies),
                "samples": len(self.server_latencies),
            },
            "served_latency_ms": {
                **self.percentiles(self.served_latencies),
                "samples": len(self.served_latencies),
            },
            "settled_latency_ms": {
                **self.percentiles(self.settled_latencies),
                "samples": len(self.settled_latencies),
            },
            "startup_latency_ms": {
                **self.percentiles(self.startup_latencies),
                "samples": len(self.startup_latencies),
            },
            "loop_lag_ms": {**self.percentiles(self.loop_lags), "samples": len(self.loop_lags)},
            "errors": dict(self.errors.most_common()),
            "matches": {"started": self.matches_started, "completed": self.matches_completed},
            "notes": self.notes,
        }

    @staticmethod
    def _served_lines(d: dict[str, Any]) -> list[str]:
        """The stamped service time and this tool's own lag (absent when not measured)."""
        out = [
            f"{label} p50 {_text_ms(f['p50'])}, p95 {_text_ms(f['p95'])}, "
            f"p99 {_text_ms(f['p99'])}, max {_text_ms(f['max'])} ({f['samples']} samples, {what})"
            for label, f, what in (
                (
                    "served      ",
                    d["served_latency_ms"],
                    "the server reading an action -> each connection's receipt of its update, "
                    "after start-up",
                ),
                (
                    "  settled   ",
                    d["settled_latency_ms"],
                    "the same from 20 s after start-up: the tables' starts behind",
                ),
                (
                    "  start-up  ",
                    d["startup_latency_ms"],
                    "the same before every player was seated: the tables that played while "
                    "others logged in",
                ),
            )
            if f["samples"]
        ]
        lag = d["loop_lag_ms"]
        if lag["samples"]:
            out.append(
                f"tool lag     p50 {_text_ms(lag['p50'])}, p99 {_text_ms(lag['p99'])}, "
                f"max {_text_ms(lag['max'])} (how late this tool's own event loop ran: "
                "what it read was read that much late)"
            )
        return out

    def text(self) -> str:
        d = self.to_dict()
        c, a, u, lat = d["connections"], d["actions"], d["updates"], d["latency_ms"]
        first = d["server_latency_ms"]

        def ms(value: float | None) -> str:
            return "-" if value is None else f"{value:.2f} ms"

        errors = ", ".join(f"{k} {v}" for k, v in d["errors"].items()) or "none"
        cpu = d["tool_cpu"]
        per_update = f", {cpu['us_per_update']:.0f} us an update" if cpu["us_per_update"] else ""
        pace = f", think {self.think.text()} (seed {self.seed})" if self.think.high else ""
        spread = f", {self.processes} client processes" if self.processes > 1 else ""
        lines = [
            f"loadtest {self.url}: {self.tables} table(s) x 4 {self.bot} bots, "
            f"{self.duration:g} s{pace}{spread}",
            f"connections  {c['connected']}/{c['wanted']} connected, {c['failed']} failed, "
            f"{c['dropped']} dropped; start-up {d['startup_s']:.2f} s",
            f"actions      {a['sent']} sent, {a['accepted']} accepted, {a['refused']} refused; "
            f"{a['per_second']:.1f} actions/s over {d['active_s']:.1f} s",
            f"updates      {u['received']} received, {u['per_second']:.1f}/s; this tool's "
            f"CPU {cpu['seconds']:.1f} s{per_update}",
            f"latency      p50 {ms(lat['p50'])}, p95 {ms(lat['p95'])}, p99 {ms(lat['p99'])}, "
            f"max {ms(lat['max'])} ({lat['samples']} samples, action sent -> next update)",
            f"server       p50 {ms(first['p50'])}, p95 {ms(first['p95'])}, "
            f"p99 {ms(first['p99'])}, max {ms(first['max'])} ({first['samples']} samples, "
            "the table's last awaited action -> its first update on any connection, "
            "after start-up)",
            *self._served_lines(d),
            f"errors       {errors}",
            f"matches      {d['matches']['completed']} completed, "
            f"{d['matches']['started']} started",
        ]
        lines.extend(f"note         {n}" for n in self.notes)
        return "\n".join(lines)


def percentile(data: list[float], q: float) -> float:
    """The nearest-rank ``q``-th percentile of sorted ``data``."""
    rank = max(1, math.ceil(q / 100 * len(data)))
    return data[min(rank, len(data)) - 1]


def _text_ms(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f} ms"


def _ms(seconds: float) -> float:
    return round(seconds * 1000, 3)
