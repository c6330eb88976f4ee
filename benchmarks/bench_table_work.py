"""The table's own work per action: a live table in one process, no socket, no database.

``guobiao loadtest``'s figure (``ab_loadtest.py``) is the whole server's: the table's work,
and the sockets, the action log's commit and the event loop around them, on a machine whose
speed moves by a third from one minute to the next. This measures the table's part alone,
steadily enough to tell a few percent: a ``server.table.Table`` as the server runs it (its
task, its clocks, its updates built and encoded for each seat), seated with four players of
protocol version 2 (the tests' ``FakePeer``, whose connection keeps nothing) at a table
whose claim window closes once answered (``claim_window_ms`` 0, as the load tool's), on a
store that keeps nothing (``FakeStore`` with an append that does nothing). The players
answer every update that asks them as the load tool's fast bots would cost nothing: a pass
when they may, else the discard of the tile drawn, else the first legal action; the CPU
time of that answering is left out of the figure. One whole match per run, the same seed
for both trees (``--other``: another checkout, a git worktree, or the compiled tree that
``bench_compiled.py --into`` unpacks, which runs with this tree's tests' fakes; each in a
child process of its own, in turns). Figures only.

    .venv/bin/python benchmarks/bench_table_work.py [--runs 5] [--other TREE]
"""

from __future__ import annotations

import argparse
import statistics
from pathlib import Path

from benchkit import ROOT, ab_trees, child_figures

# Run in a child process with the tree's code (and its tests' fakes) first on the path:
# prints {"actions": N, "cpu_s": S, "answering_s": A} for one match at seed SEED.
# Arguments: TREE SEED TESTS (the folder of the fakes).
CHILD = """
import asyncio, json, sys, time
sys.path[:0] = [sys.argv[1], sys.argv[3]]
from fakes import FakePeer, FakeStore, table_for
import server.table
from engine.actions import ActionKind
from server.table import JoinInput, NextHandInput, PlayInput

seed = int(sys.argv[2])
server.table.sources.new_match_seed = lambda: seed


class Store(FakeStore):
    async def append_action(self, *args, **kwargs):
        pass  # stored nowhere: the action log's cost is not the table's


class Player(FakePeer):
    asked = None

    def send(self, text):
        pass  # a connection's own cost (its bytes, its socket) is not the table's

    def prompted(self, table, seq):
        self.asked = seq


def answer(hand, player):
    legal = hand.legal_actions(player)
    if not legal:
        return None
    return next(
        (a for a in legal if a.kind is ActionKind.PASS),
        next(
            (a for a in legal if a.kind is ActionKind.DISCARD and a.tile == hand.drawn),
            legal[0],
        ),
    )


async def main():
    table = table_for(store=Store(), turn_seconds=60, claim_window_ms=0)
    table.start()
    players = [Player(f"p{i}", version=2) for i in range(4)]
    for seat, player in enumerate(players):
        await table.queue.put(JoinInput(player, 1, seat, None))
    while table.match is None or table.match.hand is None:
        await asyncio.sleep(0.01)
    answering = 0.0
    started = time.process_time()
    while table.state != "finished":
        mark = time.process_time()
        match, put = table.match, False
        for player in players:
            if player.asked is not None and player.asked == table.seq:
                action = answer(match.hand, table.peers[player])
                if action is not None:
                    player.asked = None
                    table.queue.put_nowait(PlayInput(player, 5, table.seq, action))
                    put = True
        if not put and match.hand.phase.value == "over":
            for player in players:  # read: the next hand need not wait for its pause
                table.queue.put_nowait(NextHandInput(player, None, match.hand_index + 1))
        answering += time.process_time() - mark
        await asyncio.sleep(0 if put else 0.0005)  # (a sleep of 0.5 ms costs no CPU)
    used = time.process_time() - started
    await table.stop()
    print(json.dumps({"actions": table.log_seq, "cpu_s": used, "answering_s": answering}))


asyncio.run(main())
"""


def one_run(tree: Path, seed: int) -> tuple[float, float, int]:
    """Microseconds of CPU per action of ``tree``'s table, of the answering, and the
    actions of the match at ``seed``."""
    # The tree's own tests' fakes; a tree unpacked from a wheel (``bench_compiled.py
    # --into``: the compiled engine) has none, and runs with this tree's.
    tests = tree / "tests" if (tree / "tests").is_dir() else ROOT / "tests"
    figures = child_figures(CHILD, tree, seed, tests)
    actions = figures["actions"]
    table = 1e6 * (figures["cpu_s"] - figures["answering_s"]) / actions
    return table, 1e6 * figures["answering_s"] / actions, actions


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--seed", type=int, default=20261206)
    parser.add_argument("--other", type=Path, help="another checkout to compare (A/B)")
    args = parser.parse_args()
    trees = ab_trees(args.other)
    print(f"the table's CPU per action, one match at seed {args.seed}, {args.runs} run(s)")
    print(f"{'run':>4} {'tree':6} {'actions':>8} {'table us':>9} {'answering us':>13}", flush=True)
    results: dict[str, list[float]] = {name: [] for name in trees}
    for run in range(1, args.runs + 1):
        for name in trees if run % 2 else reversed(trees):
            table, answering, actions = one_run(trees[name], args.seed)
            results[name].append(table)
            print(f"{run:>4} {name:6} {actions:>8} {table:>9.1f} {answering:>13.1f}", flush=True)
    for name, figures in results.items():
        print(
            f"{name}: median {statistics.median(figures):.1f} us an action "
            f"({min(figures):.1f}-{max(figures):.1f})"
        )
    if args.other is not None:
        ratio = statistics.median(results["this"]) / statistics.median(results["other"])
        print(f"this/other {ratio:.3f}")


if __name__ == "__main__":
    main()
