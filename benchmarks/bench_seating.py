"""Tournament seating (server.tournaments.seating) over whole events: its time, against random
retry, and the exact search's hardest cases.

    .venv/bin/python benchmarks/bench_seating.py [--seed 1] [--retries 100] [--runs 5]
    .venv/bin/python benchmarks/bench_seating.py --hard [--sessions 12] [--seeds 2]

Without ``--hard``:

1. 128 players x 7 sessions with ``avoid``, ``--runs`` times (seeds ``--seed`` on): each
   run's seconds (wall clock and CPU), repeat pairings and worst wind imbalance, then the
   fastest, median and slowest run.
2. Events (128 x 7, 16 x 4, 15 x 4 with byes, 17 x 4 with byes, 64 x 4) seated by ``avoid``
   session by session, and "random retry": each session seated at random up to K times
   (``--retries``), keeping the seating with the fewest repeat pairings. Printed: repeat
   pairings over the event (a pair's every meeting after its first), the worst wind
   imbalance (most sat wind - least, per player; every method, random included, puts each
   table's four on their best winds), the byes spread, the time of the whole event.

With ``--hard``, the exact search (up to 24 seats) on the hardest events we could make: 13 to
27 players, byes or substitutes, ``--sessions`` sessions each seated by ``avoid`` (or by a
method drawn at random, or by ``balanced``) from a history built the same way, ``--seeds``
histories each. Per event: the slowest exact search (seconds of CPU, its work in tables
looked at, proven or not, the session), and the slowest whole seating. The search is timed
by wrapping ``Partition.fewest``. Figures only; nothing is asserted.
"""

from __future__ import annotations

import argparse
import random
import statistics
import time
from collections.abc import Callable
from typing import Any

from server.tournaments import partition
from server.tournaments.seating import Seating, report, seat_session

EVENTS = [(128, 7), (16, 4), (15, 4), (17, 4), (64, 4)]
HARD = [
    (n, fill)
    for n in range(27, 12, -1)
    for fill in ("byes", "substitutes")
    if fill == "byes" or (n % 4 and n < 24)
]


def random_retry(players: list[str], sessions: int, seed: int, retries: int) -> list[Seating]:
    history: list[Seating] = []
    for k in range(sessions):
        best: Seating | None = None
        for attempt in range(retries):
            seating = seat_session(
                players, history, "random", seed * 1_000_003 + k * 1009 + attempt
            )
            if best is None or len(seating.repeats) < len(best.repeats):
                best = seating
            if not best.repeats:
                break
        assert best is not None
        history.append(best)
    return history


def avoid(players: list[str], sessions: int, seed: int) -> list[Seating]:
    history: list[Seating] = []
    for k in range(sessions):
        history.append(seat_session(players, history, "avoid", seed * 1_000_003 + k))
    return history


def names(n: int) -> list[str]:
    return [f"p{i:03d}" for i in range(n)]


def big_event(args: argparse.Namespace) -> None:
    print(f"128 players x 7 sessions, avoid, {args.runs} runs")
    print(f"{'seed':>6} {'wall s':>7} {'cpu s':>7} {'repeats':>8} {'winds':>6}")
    walls = []
    for seed in range(args.seed, args.seed + args.runs):
        wall, cpu = time.perf_counter(), time.process_time()
        history = avoid(names(128), 7, seed)
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
        walls.append(wall)
        figures = report(history)
        print(
            f"{seed:>6} {wall:>7.3f} {cpu:>7.3f} {figures.repeat_pairings:>8} "
            f"{figures.wind_imbalance:>6}"
        )
    print(
        f"wall clock: fastest {min(walls):.3f} s, median {statistics.median(walls):.3f} s, "
        f"slowest {max(walls):.3f} s"
    )


def events(args: argparse.Namespace) -> None:
    print(f"random retry: K = {args.retries} random seatings per session, the fewest repeats kept")
    print(f"{'event':>10} {'method':>14} {'repeats':>8} {'winds':>6} {'byes':>6} {'seconds':>8}")
    for n, sessions in EVENTS:
        players = names(n)
        for label in ("avoid", f"random x{args.retries}"):
            start = time.perf_counter()
            if label == "avoid":
                history = avoid(players, sessions, args.seed)
            else:
                history = random_retry(players, sessions, args.seed, args.retries)
            seconds = time.perf_counter() - start
            figures = report(history)
            print(
                f"{n:>4} x {sessions:<3} {label:>14} {figures.repeat_pairings:>8} "
                f"{figures.wind_imbalance:>6} {figures.byes_min:>2}-{figures.byes_max:<3} "
                f"{seconds:>8.3f}"
            )


def hard(args: argparse.Namespace) -> None:
    searches: list[tuple[float, int, bool, int]] = []
    original = partition.Partition.fewest

    def timed(self: partition.Partition, below: int, step_limit: int = partition.STEP_LIMIT) -> Any:
        start = time.process_time()
        found = original(self, below, step_limit)
        searches.append((time.process_time() - start, found.steps, found.complete, self.n))
        return found

    partition.Partition.fewest = timed  # type: ignore[method-assign]
    print(
        f"the exact search, {args.sessions} sessions, {args.seeds} histories per event "
        f"(its limit: {partition.STEP_LIMIT:,} tables looked at)"
    )
    print(
        f"{'event':>16} {'method':>9} {'search s':>9} {'work':>10} {'proven':>7} "
        f"{'seats':>6} {'session':>8} {'seating s':>10}"
    )
    worst: tuple[float, str] = (0.0, "")
    unproven = 0
    for mix in args.methods.split(","):
        for n, fill in HARD:
            slowest: tuple[float, int, bool, int, int] = (0.0, 0, True, 0, 0)
            slowest_seating = 0.0
            for seed in range(args.seeds):
                pick = _methods(mix, random.Random(seed * 7 + n))
                history: list[Seating] = []
                players = names(n)
                rng = random.Random(seed * 7 + n)
                for k in range(args.sessions):
                    standings = list(players)
                    rng.shuffle(standings)
                    searches.clear()
                    start = time.process_time()
                    history.append(
                        seat_session(
                            players,
                            history,
                            pick(),  # type: ignore[arg-type]
                            rng.randrange(10**9),
                            fill=fill,  # type: ignore[arg-type]
                            standings=standings,
                            budget=args.budget,
                        )
                    )
                    slowest_seating = max(slowest_seating, time.process_time() - start)
                    for seconds, steps, complete, seats in searches:
                        unproven += not complete
                        if seconds > slowest[0]:
                            slowest = (seconds, steps, complete, seats, k + 1)
            seconds, steps, complete, seats, session = slowest
            event, proven = f"{n} {fill}", "yes" if complete else "NO"
            print(
                f"{event:>16} {mix:>9} {seconds:>9.3f} {steps:>10,} {proven:>7} "
                f"{seats:>6} {session:>8} {slowest_seating:>10.3f}"
            )
            worst = max(worst, (seconds, f"{event}, {mix}, session {session}"))
    print(f"slowest exact search: {worst[0]:.3f} s ({worst[1]}); searches not finished: {unproven}")


def _methods(mix: str, rng: random.Random) -> Callable[[], str]:
    """The method of each session: ``mix`` itself, or ``mixed``: one drawn at random."""
    if mix != "mixed":
        return lambda: mix
    choices = ["random", "avoid", "swiss", "top4", "balanced", "avoid"]
    return lambda: rng.choice(choices)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--retries", type=int, default=100, help="K, tries per session")
    parser.add_argument("--runs", type=int, default=5, help="runs of 128 x 7")
    parser.add_argument("--hard", action="store_true", help="the exact search's hardest cases")
    parser.add_argument("--sessions", type=int, default=12, help="sessions per hard event")
    parser.add_argument("--seeds", type=int, default=2, help="histories per hard event")
    parser.add_argument(
        "--methods", default="avoid,mixed,balanced", help="hard events seated by these"
    )
    parser.add_argument(
        "--budget", type=int, default=1000, help="local search moves per hard session"
    )
    args = parser.parse_args()
    if args.hard:
        hard(args)
        return
    big_event(args)
    print()
    events(args)


if __name__ == "__main__":
    main()
