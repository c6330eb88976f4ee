"""A newcomer's first minute: from a fresh clone, the README's first command, to a hand dealt
in a browser.

Clones this repository's committed HEAD into a new folder, runs the README's command there
step by step (``python3 -m venv .venv``, ``.venv/bin/pip install .``, ``.venv/bin/guobiao
serve``), opens the address it prints in Chromium (Playwright's Python API with Debian's
``chromium``; ``GUOBIAO_CHROMIUM`` to point elsewhere) and presses "Play now against three
bots" until the own hand shows. Prints the seconds of each step and in all, with pip's cache
(warm: pip's own cache as this machine has it; ``--cold``: ``PIP_NO_CACHE_DIR=1``, every
package downloaded again) and the machine's load average beside them. Figures only: no
assertion.

    .venv/bin/python benchmarks/first_minute.py [--runs 3] [--cold] [--compile]

``--compile`` installs with ``GUOBIAO_COMPILE=1`` (the compiled engine, for operators).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

from benchkit import ROOT, announced_port
from playwright.async_api import async_playwright

CHROMIUM = os.environ.get("GUOBIAO_CHROMIUM") or shutil.which("chromium") or "chromium"


def timed(command: list[str], cwd: Path, env: dict[str, str]) -> float:
    """Seconds ``command`` took; ``CalledProcessError`` (with its output) if it failed."""
    started = time.monotonic()
    subprocess.run(command, cwd=cwd, env=env, check=True, capture_output=True)
    return time.monotonic() - started


async def first_hand(url: str) -> float:
    """Seconds from opening ``url`` to the own hand shown after "Play now"."""
    async with async_playwright() as playwright:
        browser = await playwright.chromium.launch(executable_path=CHROMIUM)
        try:
            page = await browser.new_page(viewport={"width": 1280, "height": 800})
            started = time.monotonic()
            await page.goto(url)
            await page.get_by_role("button", name="Play now against three bots").click()
            await page.wait_for_selector(".own-hand", timeout=60_000)
            return time.monotonic() - started
        finally:
            await browser.close()


def one_run(args: argparse.Namespace) -> dict[str, float]:
    """One newcomer: the seconds of each step."""
    with tempfile.TemporaryDirectory(prefix="first-minute-") as folder:
        clone = Path(folder) / "guobiao"
        subprocess.run(["git", "clone", "-q", str(ROOT), str(clone)], check=True)
        env = {k: v for k, v in os.environ.items() if not k.startswith(("GUOBIAO_", "VIRTUAL"))}
        env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
        if args.cold:
            env["PIP_NO_CACHE_DIR"] = "1"
        if args.compile:
            env["GUOBIAO_COMPILE"] = "1"
        figures = {"venv": timed(["python3", "-m", "venv", ".venv"], clone, env)}
        figures["pip install"] = timed([".venv/bin/pip", "install", "."], clone, env)
        started = time.monotonic()
        server = subprocess.Popen(
            [".venv/bin/guobiao", "serve", "--port", "0"],
            cwd=clone,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )
        assert server.stdout is not None
        try:
            port = announced_port(server)
            figures["serve"] = time.monotonic() - started
            figures["first hand"] = asyncio.run(first_hand(f"http://127.0.0.1:{port}/"))
        finally:
            server.terminate()
            server.wait(60)
            server.stdout.close()
    figures["total"] = sum(figures.values())
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--cold", action="store_true", help="pip without its cache")
    parser.add_argument("--compile", action="store_true", help="GUOBIAO_COMPILE=1")
    args = parser.parse_args()
    cache = "cold (PIP_NO_CACHE_DIR=1)" if args.cold else "warm (pip's own cache)"
    engine = "compiled" if args.compile else "pure Python"
    print(f"first minute: {args.runs} runs, pip cache {cache}, engine {engine}", flush=True)
    runs = []
    for run in range(1, args.runs + 1):
        load = os.getloadavg()[0]
        figures = one_run(args)
        runs.append(figures)
        shown = ", ".join(f"{step} {seconds:.1f} s" for step, seconds in figures.items())
        print(f"run {run}: {shown} (load average {load:.2f})", flush=True)
    for step in runs[0]:
        values = [r[step] for r in runs]
        print(
            f"{step:12}: median {statistics.median(values):.1f} s, "
            f"range {min(values):.1f}-{max(values):.1f} s"
        )


if __name__ == "__main__":
    main()
