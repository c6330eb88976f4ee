"""Tournament seating (server.tournaments.seating) over whole events, against random retry.

    .venv/bin/python benchmarks/bench_seating.py [--seed 1] [--retries 100]

For each event (128 players x 7 sessions, then 16 x 4, 15 x 4 with byes, 17 x 4 with byes,
64 x 4): the ``avoid`` method session by session, and "random retry": each session seated
at random up to K times (``--retries``, default 100), keeping the seating with the fewest
repeat pairings. Printed: repeat pairings over the event (a pair's every meeting after its
first), the worst wind imbalance (most sat wind - least, per player; every method, random
included, puts each table's four on their best winds), the byes spread, and the time of
the whole event. Figures only; nothing is asserted.
"""

from __future__ import annotations

import argparse
import time

from server.tournaments.seating import Seating, report, seat_session

EVENTS = [(128, 7), (16, 4), (15, 4), (17, 4), (64, 4)]


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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--retries", type=int, default=100, help="K, tries per session")
    args = parser.parse_args()
    print(f"random retry: K = {args.retries} random seatings per session, the fewest repeats kept")
    print(f"{'event':>10} {'method':>14} {'repeats':>8} {'winds':>6} {'byes':>6} {'seconds':>8}")
    for n, sessions in EVENTS:
        players = [f"p{i:03d}" for i in range(n)]
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


if __name__ == "__main__":
    main()
