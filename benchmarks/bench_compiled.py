"""The mypyc-compiled engine against the pure-Python one: same commands, same run, in turns.

Builds this tree's wheel (``pip wheel --no-build-isolation``: this venv's setuptools and mypy
compile the engine's hot modules, ``setup.py``) and unpacks it into a folder, a tree of its
own (``engine`` compiled, ``server``, the configuration). Then, in turns (compiled, pure,
compiled, ...), each side in a child process of this interpreter:

``guobiao simulate --matches M --seed S --quiet``: hands/s (wall clock, per CPU second), as
the command reports them; both sides must play the same hands (checked, with ``--out``).

Prints each run, the medians and the ratio compiled / pure. ``--into DIR`` keeps the unpacked
tree, for ``bench_fan_batch.py --other DIR`` (the compiled calculator beside the pure one and
the C++ reference, in one process: a batch run in a child process is too short to time well)
and ``ab_loadtest.py DIR`` (the server's CPU per action with the compiled engine). Figures
only: no assertion.

    .venv/bin/python benchmarks/bench_compiled.py [--runs 3] [--matches 10] [--seed 11]
        [--into DIR] [--wheel WHEEL]
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path

from benchkit import ROOT

sys.path.insert(0, str(ROOT / "tests"))

from wheelkit import WHEEL, copy_source

GUOBIAO = [sys.executable, "-c", "import sys; from server.cli import main; sys.exit(main())"]
SPEED = re.compile(r"speed\s+([\d.,]+) hands/s \(([\d.]+) s wall clock; ([\d.,]+) hands per CPU")


def build(into: Path, wheel: Path | None) -> None:
    """The wheel (built from a copy of this tree unless given), unpacked into ``into``."""
    with tempfile.TemporaryDirectory() as folder:
        if wheel is None:
            print("building the wheel (mypyc compiles the engine: a minute or two) ...", flush=True)
            began = time.monotonic()
            source = copy_source(Path(folder) / "source")
            subprocess.run(
                [*WHEEL, "--quiet", "--wheel-dir", folder, str(source)],
                check=True,
                env=os.environ | {"GUOBIAO_COMPILE": "1"},
            )
            (wheel,) = Path(folder).glob("guobiao-*.whl")
            print(f"built {wheel.name} in {time.monotonic() - began:.0f} s")
        with zipfile.ZipFile(wheel) as archive:
            archive.extractall(into)
    probe = "import engine; print(engine.compiled())"
    said = subprocess.run(
        [sys.executable, "-c", probe], cwd=into, capture_output=True, text=True, check=True
    )
    if said.stdout.strip() != "True":
        sys.exit(f"the wheel's engine is not compiled (no C compiler?): {into}")


def side(tree: Path, command: list[str], **kwargs: object) -> subprocess.CompletedProcess[str]:
    """``guobiao COMMAND`` run from ``tree`` (its engine and server come first on the path)."""
    return subprocess.run(
        [*GUOBIAO, *command], cwd=tree, capture_output=True, text=True, check=True, **kwargs
    )  # type: ignore[call-overload]


def simulate(tree: Path, args: argparse.Namespace, out: Path) -> tuple[float, float]:
    options = ["--matches", str(args.matches), "--seed", str(args.seed), "--out", str(out)]
    done = side(tree, ["simulate", *options, "--quiet"])
    found = SPEED.search(done.stdout)
    assert found is not None, done.stdout
    return float(found[1].replace(",", "")), float(found[3].replace(",", ""))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=3, help="runs of each side (default 3)")
    parser.add_argument("--matches", type=int, default=10, help="matches a simulate run")
    parser.add_argument("--seed", type=int, default=11, help="seed of the simulation")
    parser.add_argument("--into", type=Path, help="unpack the compiled tree here and keep it")
    parser.add_argument("--wheel", type=Path, help="a wheel built already (else built now)")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as folder:
        work = Path(folder)
        compiled = args.into.resolve() if args.into else work / "compiled"
        compiled.mkdir(parents=True, exist_ok=True)
        build(compiled, args.wheel)
        sides = {"compiled": compiled, "pure": ROOT}
        speeds: dict[str, list[tuple[float, float]]] = {name: [] for name in sides}
        outs: dict[str, bytes] = {}
        print(f"guobiao simulate --matches {args.matches} --seed {args.seed}")
        print(f"{'run':>3} {'side':<9} {'hands/s':>9} {'per CPU s':>10}")
        for run in range(1, args.runs + 1):
            for name, tree in sides.items():
                out = work / f"{name}.jsonl"
                speeds[name].append(simulate(tree, args, out))
                outs[name] = out.read_bytes()
                wall, cpu = speeds[name][-1]
                print(f"{run:>3} {name:<9} {wall:>9,.1f} {cpu:>10,.1f}")
        same = outs["compiled"] == outs["pure"]
        print(f"the same hands on both sides: {'yes' if same else 'NO'}")
        medians = {
            name: (
                statistics.median(w for w, _ in speeds[name]),
                statistics.median(c for _, c in speeds[name]),
            )
            for name in sides
        }
        for name, (wall, cpu) in medians.items():
            print(f"med {name:<9} {wall:>9,.1f} {cpu:>10,.1f}")
        ratios = [c / p for c, p in zip(medians["compiled"], medians["pure"], strict=True)]
        print(
            "compiled / pure: x{:.2f} hands/s (wall clock), x{:.2f} per CPU second".format(*ratios)
        )
        if args.into:
            print(f"kept: {compiled} (bench_fan_batch.py --other, ab_loadtest.py take it)")


if __name__ == "__main__":
    main()
