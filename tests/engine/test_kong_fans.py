"""Three and Four Kongs: the kongs' own fans are in them, their concealed kongs still count as
concealed pungs (docs/rules.md, docs/rulings.md ruling 7).

The rule book's 三杠 says "暗杠加计": read, as the reference calculators read it, as the
concealed kongs counting on as concealed pungs (Two or Three Concealed Pungs), not as
Concealed Kong or Two Concealed Kongs scored beside Three Kongs. These hands fix that reading
in the calculator's own terms; each total was worked out by hand.
"""

from __future__ import annotations

import pytest

from engine.errors import InvalidHand
from engine.notation import parse_hand
from engine.scoring import WinContext, score
from engine.tiles import Wind

KONG_FANS = {
    "Melded Kong",
    "Concealed Kong",
    "Two Melded Kongs",
    "Two Concealed Kongs",
    "Concealed Kong and Melded Kong",
}


@pytest.mark.parametrize(
    ("hand", "total", "fans"),
    [
        pytest.param(
            "[1111m][5555p,1][9999s,1]234m6p6p",
            36,
            {"Three Kongs": 1, "Pung of Terminals or Honors": 2, "No Honors": 1, "Single Wait": 1},
            id="three-kongs-one-concealed",
        ),
        pytest.param(
            "[1111m][5555p][9999s,1]234m6p6p",
            38,
            {
                "Three Kongs": 1,
                "Two Concealed Pungs": 1,
                "Pung of Terminals or Honors": 2,
                "No Honors": 1,
                "Single Wait": 1,
            },
            id="three-kongs-two-concealed",
        ),
        pytest.param(
            "[1111m][5555p][9999s][2222m,1]6p6p",
            107,
            {
                "Four Kongs": 1,
                "Three Concealed Pungs": 1,
                "Pung of Terminals or Honors": 2,
                "No Honors": 1,
            },
            id="four-kongs-three-concealed",
        ),
    ],
)
def test_three_and_four_kongs_hold_the_kong_fans_and_count_concealed_pungs(
    hand: str, total: int, fans: dict[str, int]
) -> None:
    result = score(parse_hand(hand), WinContext(seat_wind=Wind.SOUTH, round_wind=Wind.EAST))
    got = {fc.fan.en: fc.count for fc in result.fans}
    assert not KONG_FANS & got.keys(), got
    assert (result.total, got) == (total, fans)


def test_robbing_a_kong_is_never_on_the_walls_last_tile() -> None:
    """A kong is declared only while a tile is left to replace it (ruling T6), so a win
    robbing one (``kong`` on a discard) cannot be the wall's last tile: asked for both, the
    calculator refuses rather than score Robbing The Kong with Last Tile Claim. A kong's
    replacement that is the last tile and wins scores both of its own fans (ruling T6)."""
    with pytest.raises(InvalidHand, match="kong and wall_last cannot both be set on a discard"):
        WinContext(kong=True, wall_last=True)
    drawn = score(
        parse_hand("[234m,1][567p,1][8888s,2]56sNN4s"),
        WinContext(self_drawn=True, kong=True, wall_last=True),
    )
    got = {fc.fan.en for fc in drawn.fans}
    assert {"Out with Replacement Tile", "Last Tile Draw"} <= got, got
