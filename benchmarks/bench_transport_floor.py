"""What the transport alone costs an action: a server that only receives and sends frames.

docs/performance.md aims at 0.25 ms of server CPU per action under 20 tables of fast bots.
This measures how much of an action is the transport the server is built on (asyncio's
event loop and sockets, websockets' framing, orjson) with nothing of guobiao in it: a
websockets server holding tables of four connections where, at each action a connection
sends (a ``play`` frame of the real one's size), the table sends every seat ``--publishes``
updates on average (the real server's is 1.63: the action's, and the claim window's close)
of ``--update-bytes`` each (424: the mean of a real match's protocol-2 updates), each
encoded by orjson from a dict of its own, written as the server writes them (one write per
connection per turn of the loop, ``server.connection.EndOfTurn``); the last tells the next
seat to act. Each run first measures the real server (``guobiao serve``, SQLite) under
``guobiao loadtest`` with the same tables (``ab_loadtest.one_run``), then the floor, its
seats waiting before they act so that it serves about as many actions a second as the real
one did (more a second would share each turn of the event loop among more actions, and
cost each less).

Both are measured alike: the server process's CPU time over its actions, in the steady part
of the run (``ab_loadtest.steady_ms_per_action``: from 3 s after the first action to the
last sample before the actions stop rising), ``--runs`` times. Figures only.

    .venv/bin/python benchmarks/bench_transport_floor.py [--runs 3] [--tables 20]
        [--duration 15] [--publishes 1.63] [--update-bytes 424]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import orjson
from ab_loadtest import one_run, steady_ms_per_action
from benchkit import ROOT

PLAY = {"type": "play", "payload": {"table": "t0a1b2c", "seq": 0}, "id": 0}


# ----------------------------------------------------------------- the floor's server ---


class FloorTable:
    """Four connections; each action sends every seat ``publishes`` updates on average."""

    def __init__(self, publishes: float, size: int) -> None:
        self.seats: list[Any] = []
        self.actions = 0
        self.publishes, self.owed = publishes, 0.0
        self.padding = "x" * max(0, size - 60)

    def act(self, seat: int, send: Any) -> None:
        self.actions += 1
        self.owed += self.publishes
        count = max(1, int(self.owed))
        self.owed -= count
        for n in range(count):
            last = n == count - 1
            for place in range(4):
                payload = {
                    "seq": self.actions,
                    "you": place,
                    "act": last and place == (seat + 1) % 4,
                    "view": self.padding,
                }
                send(self.seats[place], orjson.dumps({"type": "update", "payload": payload}))


async def floor_server(publishes: float, size: int) -> None:
    from websockets.asyncio.server import serve as ws_serve  # noqa: PLC0415 (child only)
    from websockets.protocol import State  # noqa: PLC0415 (child only)

    tables: list[FloorTable] = []
    pending: dict[Any, list[bytes]] = {}
    scheduled = False
    actions = 0

    def flush() -> None:
        nonlocal scheduled
        scheduled = False
        due = list(pending.items())
        pending.clear()
        for ws, frames in due:  # what ``Connection._flush`` does on an open socket
            if ws.protocol.state is not State.OPEN:
                continue  # (its client left at the end of the run)
            for data in frames:
                ws.protocol.send_text(data)
            ws.transport.write(b"".join(ws.protocol.data_to_send()))

    def send(ws: Any, data: bytes) -> None:
        nonlocal scheduled
        pending.setdefault(ws, []).append(data)
        if not scheduled:
            scheduled = True
            asyncio.get_running_loop().call_soon(flush)

    async def handler(ws: Any) -> None:
        nonlocal actions
        if not tables or len(tables[-1].seats) == 4:
            tables.append(FloorTable(publishes, size))
        table = tables[-1]
        seat = len(table.seats)
        table.seats.append(ws)
        if seat == 3:
            table.act(3, send)  # the first action: seat 0 acts
        async for message in ws:
            orjson.loads(message)
            actions += 1
            table.act(seat, send)

    async with ws_serve(handler, "127.0.0.1", 0, compression=None) as server:
        port = server.sockets[0].getsockname()[1]
        print(f"port {port}", flush=True)
        while True:
            await asyncio.sleep(0.5)
            print(f"{time.monotonic()} {time.process_time()} {actions}", flush=True)


# ------------------------------------------------------------------ the floor's client ---


async def floor_client(port: int, tables: int, duration: float, pace: float) -> None:
    from websockets.asyncio.client import connect  # noqa: PLC0415 (child only)

    async def seat() -> None:
        async with connect(f"ws://127.0.0.1:{port}", compression=None) as ws:
            end = time.monotonic() + duration
            async for message in ws:
                update = orjson.loads(message)["payload"]
                if time.monotonic() > end:
                    return
                if update["act"]:
                    await asyncio.sleep(pace)
                    PLAY["payload"]["seq"] = update["seq"]
                    await ws.send(orjson.dumps(PLAY).decode())

    await asyncio.gather(*(seat() for _ in range(4 * tables)))


def floor_run(args: argparse.Namespace, rate: float) -> tuple[float, float]:
    """The floor's server under its client, each table paced to ``rate`` actions a second
    in all (a seat waits ``tables / rate`` before it acts): steady CPU ms per action, and
    the actions a second it served."""
    here = [sys.executable, str(Path(__file__).resolve())]
    numbers = ["--publishes", str(args.publishes), "--update-bytes", str(args.update_bytes)]
    server = subprocess.Popen(
        [*here, "--serve", *numbers], stdout=subprocess.PIPE, text=True, cwd=ROOT
    )
    assert server.stdout is not None
    samples: list[tuple[float, float, float]] = []
    try:
        port = int(server.stdout.readline().split()[1])

        def read() -> None:
            assert server.stdout is not None
            for line in server.stdout:
                t, cpu, actions = (float(x) for x in line.split())
                samples.append((t, cpu, actions))

        reader = threading.Thread(target=read, daemon=True)
        reader.start()
        client = [*here, "--client", str(port), "--tables", str(args.tables)]
        client += ["--pace", str(args.tables / rate)]
        subprocess.run([*client, "--duration", str(args.duration)], check=True, cwd=ROOT)
        time.sleep(1.0)
    finally:
        server.terminate()
        server.wait(10)
    return steady_ms_per_action(samples), steady_rate(samples)


def steady_rate(samples: list[tuple[float, float, float]]) -> float:
    """The floor's actions a second over the run's middle half (of ``(seconds, CPU,
    actions)``)."""
    quarter = len(samples) // 4
    (t0, _, a0), (t1, _, a1) = samples[quarter], samples[-quarter - 1]
    return (a1 - a0) / (t1 - t0) if t1 > t0 else float("nan")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--tables", type=int, default=20)
    parser.add_argument("--duration", type=float, default=15.0)
    parser.add_argument("--publishes", type=float, default=1.63)
    parser.add_argument("--update-bytes", type=int, default=424)
    parser.add_argument("--serve", action="store_true", help="(the floor's server)")
    parser.add_argument("--client", type=int, metavar="PORT", help="(the floor's client)")
    parser.add_argument("--pace", type=float, default=0.0, help="(the floor's client)")
    args = parser.parse_args()
    if args.serve:
        asyncio.run(floor_server(args.publishes, args.update_bytes))
        return
    if args.client:
        asyncio.run(floor_client(args.client, args.tables, args.duration, args.pace))
        return
    print(
        f"{args.tables} tables, {args.duration:g} s a run, {args.publishes} updates of "
        f"{args.update_bytes} bytes to each seat an action; server CPU ms per action (steady)"
    )
    print(f"{'run':>3} {'side':8} {'CPU ms/action':>13} {'actions/s':>9}")
    figures: dict[str, list[float]] = {"floor": [], "guobiao": []}
    for run in range(1, args.runs + 1):
        served = one_run(ROOT, args)  # (ab_loadtest's: the same loadtest, the same window)
        cpu, rate = served["steady_cpu_ms_per_action"], served["actions_per_s"]
        figures["guobiao"].append(cpu)
        print(f"{run:>3} {'guobiao':8} {cpu:>13.3f} {rate:>9,.0f}", flush=True)
        cpu, rate = floor_run(args, rate)
        figures["floor"].append(cpu)
        print(f"{run:>3} {'floor':8} {cpu:>13.3f} {rate:>9,.0f}", flush=True)
    floor, real = (statistics.median(figures[name]) for name in ("floor", "guobiao"))
    print(f"median: transport alone {floor:.3f} ms, guobiao {real:.3f} ms ({floor / real:.2f})")


if __name__ == "__main__":
    main()
