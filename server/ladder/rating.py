"""The rating arithmetic of the ladder (docs/ladder.md): pure functions, no I/O.

Each player of a ladder has a rating ``(mu, sigma)``: the skill estimate and its uncertainty,
in OpenSkill's units (a new player: 25 and 25/3). A finished rated match is one
Plackett–Luce update of its four players, each a team of one, ranked by final score; equal
scores share a rank (standard competition ranking: 1, 2, 2, 4). The leaderboard orders by
the conservative figure ``mu - 3 * sigma`` (OpenSkill's ``ordinal``), so a player climbs by
being good *and* by being known to be.

Everything here is deterministic floating-point arithmetic on its inputs, so replaying the
stored results in the stored order gives back exactly the stored figures
(``guobiao ladder recompute``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from functools import cache
from typing import Any

from openskill.models import PlackettLuce

Z = 3.0  # the conservative figure is mu - Z * sigma


@dataclass(frozen=True, slots=True)
class Rating:
    mu: float
    sigma: float

    @property
    def conservative(self) -> float:
        """``mu - 3 * sigma``: what the leaderboard orders by."""
        return conservative(self.mu, self.sigma)


def conservative(mu: float, sigma: float) -> float:
    """The leaderboard figure of a rating: ``mu - 3 * sigma`` (OpenSkill's ``ordinal``)."""
    return mu - Z * sigma


@dataclass(frozen=True, slots=True)
class RatingParams:
    """The model of one season: a new player's ``mu`` and ``sigma``, the performance spread
    ``beta`` and the drift ``tau`` added to every sigma before an update (so that ratings
    never freeze); and the soft reset that starts the *next* season from this one:
    ``mu' = mu0 + reset_keep * (mu - mu0)``, ``sigma' = min(sigma0, max(sigma, reset_sigma))``.

    Stored with each season, so that a change of configuration never changes the history."""

    mu: float = 25.0
    sigma: float = 25.0 / 3
    beta: float = 25.0 / 6
    tau: float = 25.0 / 300
    reset_keep: float = 0.5
    reset_sigma: float = 6.0

    def __post_init__(self) -> None:
        for name in ("sigma", "beta"):
            if not getattr(self, name) > 0:
                raise ValueError(f"rating {name} must be positive, got {getattr(self, name)!r}")
        if not self.tau >= 0:
            raise ValueError(f"rating tau must be 0 or more, got {self.tau!r}")
        if not 0 <= self.reset_keep <= 1:
            raise ValueError(f"reset_keep must be 0..1, got {self.reset_keep!r}")
        if not self.reset_sigma >= 0:
            raise ValueError(f"reset_sigma must be 0 or more, got {self.reset_sigma!r}")

    @property
    def initial(self) -> Rating:
        """A new player's rating."""
        return Rating(self.mu, self.sigma)

    def to_dict(self) -> dict[str, float]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> RatingParams:
        known = {k: float(v) for k, v in data.items() if k in cls.__dataclass_fields__}
        return cls(**known)


@cache
def _model(mu: float, sigma: float, beta: float, tau: float) -> PlackettLuce:
    return PlackettLuce(mu=mu, sigma=sigma, beta=beta, tau=tau)


def ranks(scores: Sequence[int]) -> list[int]:
    """Standard competition ranks by score, highest first; equal scores share a rank.

    >>> ranks([120, -40, -40, -40]), ranks([30, 50, 30, -110]), ranks([0, 0, 0, 0])
    ([1, 2, 2, 2], [2, 1, 2, 4], [1, 1, 1, 1])
    """
    return [1 + sum(other > score for other in scores) for score in scores]


def rate(before: Sequence[Rating], scores: Sequence[int], params: RatingParams) -> list[Rating]:
    """The four players' ratings after a match with these final ``scores`` (by player index).

    One Plackett–Luce update, each player a team of one, ranked by ``ranks(scores)``.
    """
    if len(before) != len(scores) or len(scores) < 2:
        raise ValueError(f"need a rating per score (2 or more), got {len(before)} and {scores!r}")
    model = _model(params.mu, params.sigma, params.beta, params.tau)
    teams = [[model.rating(mu=r.mu, sigma=r.sigma)] for r in before]
    after = model.rate(teams, ranks=[float(r) for r in ranks(scores)])
    return [Rating(team[0].mu, team[0].sigma) for team in after]


def soft_reset(rating: Rating, params: RatingParams) -> Rating:
    """A player's first rating of a new season, from the last of the previous one (whose
    ``params`` say how): mu pulled toward the start, sigma widened (never past a new
    player's).

    >>> soft_reset(Rating(35.0, 2.0), RatingParams())
    Rating(mu=30.0, sigma=6.0)
    """
    mu = params.mu + params.reset_keep * (rating.mu - params.mu)
    sigma = min(params.sigma, max(rating.sigma, params.reset_sigma))
    return Rating(mu, sigma)


def is_provisional(matches: int, provisional_matches: int) -> bool:
    """A player is provisional in a season until ``provisional_matches`` rated matches."""
    return matches < provisional_matches
