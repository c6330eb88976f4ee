"""Draw guobiao's own SVG mahjong tile set into ``web/tiles/`` (stdlib only).

Run ``python3 web/tools/make_tiles.py`` from anywhere: it rewrites every ``*.svg`` in
``web/tiles/`` (``--out DIR`` writes elsewhere; the tests compare that output with the committed
files byte for byte, so edit this script, never the SVG files).

Why a generator: no permissively licensed tile set has the eight flowers, and the browser may
have no CJK font (headless Chromium in CI has none), so every mark is drawn here as paths,
circles and lines; there is no ``<text>`` anywhere and the art is the project's own (MIT).

Design
------
* Every tile is ``viewBox="0 0 60 80"`` (portrait). ``frame()`` draws a darker green slab one
  unit lower (the tile's thickness, which reads as an edge or shadow) and the ivory face on top
  of it, with a rounded border; outside the rounded rectangle the file is transparent. The face
  spans y 1..75, so the visual centre is (30, 38). ``wild.svg`` is a badge, not a tile: its
  viewBox is ``0 0 24 24`` and the client overlays it on a tile's corner with CSS.
* Chinese characters are strokes on a 0..100 grid (x right, y down), one string per stroke in
  ``GLYPHS``: pairs of numbers are points joined by straight lines, and ``Q`` before two pairs
  makes a quadratic curve (control point, end point) from the previous point. For example
  ``"14 22 86 22 Q 86 50 70 60"`` is a horizontal then a curve down to the lower left.
  ``glyph()`` maps the grid onto a box of the tile (x, y, width, height; a non-square box
  stretches it) and draws all strokes of a glyph as one stroked path with round caps and joins,
  so a stroke width of about 4.5 tile units gives a brush-like weight at phone size. To add a
  glyph: add its strokes to ``GLYPHS`` in the standard stroke order, one string per stroke
  (a turning stroke such as 横折 is one string), and look at it on a contact sheet.
* Colours: ``INK`` (near-black blue) for numerals and winds, ``RED`` for 万, 中, the red dots and
  red sticks, ``GREEN`` for 发, bamboo and green dots, ``BLUE`` for blue dots and the 白 frame.
  Flower numbers (1-4 in a corner) are ``RED`` for the flowers f1-f4 and ``BLUE`` for the
  seasons f5-f8, so the two groups differ at a glance.
* Coordinates are rounded to one decimal and shared attributes (round caps and joins) sit on the
  root element, which keeps each file under about 3 KB.
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path

VIEWBOX = "0 0 60 80"
BADGE_VIEWBOX = "0 0 24 24"

INK = "#1c2340"
RED = "#c42b24"
GREEN = "#16774a"
BLUE = "#1f55a3"
FACE = "#fcf8ee"
BORDER = "#b9af95"
SLAB = "#2f7657"
GOLD = "#e6a817"
PINK = "#e0607e"
BROWN = "#7a4a2a"
LIGHT_GREEN = "#d9eed8"

Box = tuple[float, float, float, float]
Point = tuple[float, float]

# Strokes on a 0..100 grid; see the module docstring for the format.
GLYPHS: dict[str, tuple[str, ...]] = {
    "一": ("8 54 92 48",),
    "二": ("22 30 78 27", "8 74 92 70"),
    "三": ("20 16 80 13", "26 48 74 46", "8 84 92 80"),
    "四": (
        "14 20 14 88",
        "14 20 86 20 86 88",
        "40 20 Q 40 50 26 62",
        "60 20 60 54 Q 60 62 68 62 74 62",
        "14 84 86 84",
    ),
    "五": ("16 14 84 14", "48 14 36 50", "36 50 74 50 72 86", "8 86 92 86"),
    "六": ("48 4 56 18", "8 34 92 34", "38 50 Q 30 72 14 88", "62 50 Q 74 70 86 86"),
    "七": ("10 48 90 36", "40 10 40 76 Q 40 88 54 88 86 88 86 76"),
    "八": ("40 20 Q 36 62 10 86", "58 18 Q 64 64 92 84"),
    "九": ("44 8 Q 44 62 10 90", "12 36 66 36 Q 62 74 66 84 Q 70 90 80 90 90 90 90 78"),
    "万": ("8 16 92 16", "38 44 80 44 Q 80 80 70 90 60 84", "42 16 Q 40 66 10 92"),
    "东": ("12 22 88 22", "48 6 24 54 86 54", "54 24 54 94 44 86", "32 66 16 84", "70 66 86 84"),
    "南": (
        "12 14 88 14",
        "50 2 50 26",
        "16 32 16 96",
        "16 32 84 32 84 88 Q 84 96 74 94",
        "36 42 42 52",
        "64 42 58 52",
        "28 60 72 60",
        "24 76 76 76",
        "50 60 50 96",
    ),
    "西": (
        "8 12 92 12",
        "16 34 16 92",
        "16 34 84 34 84 92",
        "40 12 40 48 Q 38 60 26 68",
        "60 12 60 60 Q 60 68 68 68 84 68",
        "16 88 84 88",
    ),
    "北": (
        "36 8 36 74",
        "12 40 36 40",
        "8 86 40 70",
        "88 26 62 44",
        "62 8 62 80 Q 62 90 72 90 92 90 92 78",
    ),
    "中": ("16 28 16 68", "16 28 84 28 84 68", "16 64 84 64", "50 4 50 98"),
    "发": (
        "30 8 18 32 88 32",
        "54 4 Q 52 62 8 94",
        "46 52 80 52 Q 68 80 38 92",
        "46 60 Q 64 84 94 92",
        "70 10 80 22",
    ),
    # Arabic numerals for the flowers' corner numbers.
    "1": ("30 24 54 8 54 94",),
    "2": ("18 28 Q 20 6 50 6 Q 82 6 80 32 Q 76 54 16 94 86 94",),
    "3": ("18 14 Q 50 -4 74 16 Q 84 42 44 48 Q 88 52 82 78 Q 70 100 16 86",),
    "4": ("64 94 64 6 12 66 90 66",),
}

NUMERALS = "一二三四五六七八九"
WINDS = {"E": "东", "S": "南", "W": "西", "N": "北"}


def num(value: float) -> str:
    """One decimal at most, no trailing zeros: the files stay small and stable."""
    text = f"{round(value, 1):.1f}".rstrip("0").rstrip(".")
    return "0" if text == "-0" else text


def el(tag: str, **attrs: float | str) -> str:
    """An empty SVG element; ``stroke_width`` becomes ``stroke-width``."""
    parts = [
        f'{key.replace("_", "-")}="{num(v) if isinstance(v, float | int) else v}"'
        for key, v in attrs.items()
    ]
    return f"<{tag} {' '.join(parts)}/>"


def stroke(d: str, colour: str, width: float, **extra: float | str) -> str:
    """An unfilled path; caps and joins are round by the root element's attributes."""
    return el("path", d=d, fill="none", stroke=colour, stroke_width=width, **extra)


def fill(d: str, colour: str) -> str:
    return el("path", d=d, fill=colour)


def circle(x: float, y: float, r: float, colour: str, **extra: float | str) -> str:
    return el("circle", cx=x, cy=y, r=r, fill=colour, **extra)


def ring(x: float, y: float, r: float, colour: str, width: float, **extra: float | str) -> str:
    return circle(x, y, r, "none", stroke=colour, stroke_width=width, **extra)


def pt(p: Point) -> str:
    return f"{num(p[0])} {num(p[1])}"


def polyline(points: Sequence[Point], close: bool = False) -> str:
    """``M`` then implicit line-tos; ``Z`` when closed."""
    return "M" + " ".join(pt(p) for p in points) + ("Z" if close else "")


def segments(lines: Iterable[tuple[Point, Point]]) -> str:
    """Many separate straight lines as one path."""
    return "".join(f"M{pt(a)} {pt(b)}" for a, b in lines)


def stroke_commands(stroke_text: str) -> list[tuple[str, list[float]]]:
    """Parse one grid stroke into ``("M" | "L", [x, y])`` and ``("Q", [cx, cy, x, y])``.

    A malformed stroke (an odd coordinate, a ``Q`` without both of its points, a stroke that
    opens with ``Q``) raises ``ValueError`` quoting the stroke, so a typo in ``GLYPHS`` fails
    the generator instead of drawing a wrong character.
    """
    tokens = stroke_text.split()
    commands: list[tuple[str, list[float]]] = []
    i = 0
    while i < len(tokens):
        name, size = ("Q", 4) if tokens[i] == "Q" else ("L" if commands else "M", 2)
        start = i + 1 if name == "Q" else i
        try:
            values = [float(t) for t in tokens[start : start + size]]
        except ValueError:
            values = []
        if len(values) != size or (not commands and name == "Q"):
            raise ValueError(f"bad glyph stroke {stroke_text!r} at token {i + 1}")
        commands.append((name, values))
        i = start + size
    if not commands:
        raise ValueError(f"empty glyph stroke {stroke_text!r}")
    return commands


def glyph_path(strokes: Sequence[str], box: Box) -> str:
    """The path data of grid strokes mapped onto ``box`` (see the module docstring)."""
    x0, y0, w, h = box

    def at(values: Sequence[float]) -> str:
        return " ".join(
            pt((x0 + values[j] * w / 100, y0 + values[j + 1] * h / 100))
            for j in range(0, len(values), 2)
        )

    out: list[str] = []
    for text in strokes:
        previous = ""
        for name, values in stroke_commands(text):
            # A line-to after M or L needs no letter; after Q it does.
            letter = " " if name == "L" and previous != "Q" else name
            out.append(letter + at(values))
            previous = name
    return "".join(out)


def glyph(char: str, box: Box, colour: str, width: float) -> str:
    return stroke(glyph_path(GLYPHS[char], box), colour, width)


def polar(cx: float, cy: float, r: float, degrees: float) -> Point:
    """A point ``r`` from the centre; 0 degrees is straight up, clockwise positive."""
    a = math.radians(degrees)
    return (cx + r * math.sin(a), cy - r * math.cos(a))


def leaf(base: Point, degrees: float, length: float, width: float) -> str:
    """A pointed leaf (two quadratic sides) from ``base`` towards ``degrees``."""
    tip = polar(*base, length, degrees)
    left = polar(*polar(*base, length / 2, degrees), width, degrees - 90)
    right = polar(*polar(*base, length / 2, degrees), width, degrees + 90)
    return f"M{pt(base)}Q{pt(left)} {pt(tip)}Q{pt(right)} {pt(base)}Z"


# ---------------------------------------------------------------------------- the tile itself


def frame() -> list[str]:
    """The slab (thickness, a green edge below the face) and the ivory face with its border."""
    return [
        el("rect", x=1, y=3, width=58, height=76, rx=6, fill=SLAB),
        el("rect", x=1, y=1, width=58, height=74, rx=6, fill=FACE, stroke=BORDER, stroke_width=1),
    ]


def svg(body: Iterable[str], viewbox: str = VIEWBOX) -> str:
    head = (
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="{viewbox}" '
        'stroke-linecap="round" stroke-linejoin="round">'
    )
    return "\n".join([head, *body, "</svg>"]) + "\n"


def tile(body: Iterable[str]) -> str:
    return svg([*frame(), *body])


# ---------------------------------------------------------------------------- characters


def characters(n: int) -> str:
    """The classic look: the numeral in ink on top, a red 万 below."""
    return tile(
        [
            glyph(NUMERALS[n - 1], (13, 6, 34, 31), INK, 4.6),
            glyph("万", (12, 41, 36, 31), RED, 4.4),
        ]
    )


# ---------------------------------------------------------------------------- dots

DOT_LAYOUTS: dict[int, Sequence[tuple[float, float, str]]] = {
    2: [(30, 21, GREEN), (30, 55, BLUE)],
    3: [(16, 17, BLUE), (30, 38, RED), (44, 59, GREEN)],
    4: [(18, 22, BLUE), (42, 22, GREEN), (18, 54, GREEN), (42, 54, BLUE)],
    5: [(16, 16, BLUE), (44, 16, GREEN), (30, 38, RED), (16, 60, GREEN), (44, 60, BLUE)],
    6: [(19, 14, GREEN), (41, 14, GREEN)] + [(x, y, RED) for y in (40, 62) for x in (19, 41)],
    7: [(14, 12, GREEN), (30, 19, GREEN), (46, 26, GREEN)]
    + [(x, y, RED) for y in (46, 64) for x in (19, 41)],
    8: [(x, y, BLUE) for y in (11, 29, 47, 65) for x in (19, 41)],
    9: [(x, y, c) for y, c in ((15, BLUE), (38, RED), (61, GREEN)) for x in (14, 30, 46)],
}
DOT_RADIUS = {2: 11.0, 3: 9.0, 4: 10.0, 5: 9.0, 6: 8.5, 7: 7.5, 8: 7.8, 9: 7.4}


def dot(x: float, y: float, r: float, colour: str) -> list[str]:
    """A coin: a thick ring, a thin inner ring and a centre."""
    return [
        ring(x, y, r * 0.76, colour, r * 0.44),
        ring(x, y, r * 0.38, colour, r * 0.1),
        circle(x, y, r * 0.2, colour),
    ]


def one_dot() -> list[str]:
    """The big ornate 1 of dots: a beaded blue ring around a green and red medallion."""
    cx, cy = 30, 38
    petals = [leaf((cx, cy), a, 12, 3.2) for a in range(0, 360, 45)]
    return [
        ring(cx, cy, 23, GREEN, 1.6),
        ring(cx, cy, 19.5, BLUE, 5, stroke_dasharray="4.2 1.9"),
        ring(cx, cy, 15, GREEN, 1.2),
        fill("".join(petals), GREEN),
        circle(cx, cy, 6.5, RED),
        ring(cx, cy, 3.2, FACE, 1.4),
    ]


def dots(n: int) -> str:
    if n == 1:
        return tile(one_dot())
    body: list[str] = []
    for x, y, colour in DOT_LAYOUTS[n]:
        body += dot(x, y, DOT_RADIUS[n], colour)
    return tile(body)


# ---------------------------------------------------------------------------- bamboo

Stick = tuple[Point, Point, str]


def column(x: float, top: float, bottom: float, colour: str = GREEN) -> Stick:
    return ((x, top), (x, bottom), colour)


def sticks(items: Sequence[Stick]) -> list[str]:
    """Bamboo sticks: a body with a light pith line and nodes at the ends and the middle."""
    out: list[str] = []
    for colour in dict.fromkeys(c for _, _, c in items):
        mine = [(a, b) for a, b, c in items if c == colour]
        nodes = []
        pith = []
        for a, b in mine:
            deg = math.degrees(math.atan2(b[0] - a[0], a[1] - b[1]))
            length = math.dist(a, b)
            for f in (0.0, 0.5, 1.0):
                m = (a[0] + (b[0] - a[0]) * f, a[1] + (b[1] - a[1]) * f)
                nodes.append((polar(*m, 3.9, deg - 90), polar(*m, 3.9, deg + 90)))
            for f0, f1 in ((0.12, 0.4), (0.6, 0.88)):
                pith.append((polar(*a, length * f0, deg), polar(*a, length * f1, deg)))
        out += [
            stroke(segments(mine), colour, 5.2),
            stroke(segments(nodes), colour, 2.4),
            stroke(segments(pith), LIGHT_GREEN, 1.1),
        ]
    return out


def rows(xs: Sequence[float], spans: Sequence[tuple[float, float]]) -> list[Stick]:
    return [column(x, top, bottom) for top, bottom in spans for x in xs]


TWO_ROWS = ((8, 32), (44, 68))
THREE_ROWS = ((7, 23), (31, 47), (55, 71))

BAMBOO_LAYOUTS: dict[int, list[Stick]] = {
    2: [column(30, 7, 33), column(30, 43, 69)],
    3: [column(30, 8, 32), *rows((18, 42), TWO_ROWS[1:])],
    4: rows((18, 42), TWO_ROWS),
    5: [*rows((14, 46), TWO_ROWS), column(30, 26, 50, RED)],
    6: rows((14, 30, 46), TWO_ROWS),
    7: [column(30, 5, 23, RED), *rows((14, 30, 46), ((30, 48), (55, 73)))],
    8: [
        column(10, 8, 32),
        ((22, 32), (27, 8), GREEN),
        ((38, 32), (33, 8), GREEN),
        column(50, 8, 32),
        column(10, 44, 68),
        ((22, 44), (27, 68), GREEN),
        ((38, 44), (33, 68), GREEN),
        column(50, 44, 68),
    ],
    9: [column(x, t, b, RED if x == 30 else GREEN) for t, b in THREE_ROWS for x in (14, 30, 46)],
}


def bird() -> list[str]:
    """The 1 of bamboo: a sparrow on a bamboo twig, facing left, with a fanned tail."""
    feathers = (5, 25, 45, 65)
    tail = [leaf((30, 46), a, 27, 5.5) for a in feathers]
    spots = [circle(*polar(30, 46, 23, a), 2.5, RED) for a in feathers]
    return [
        stroke("M6 65 54 60", GREEN, 3),
        stroke("M40 58.5 41 64", "#0e5233", 1.6),
        fill("".join(tail), BLUE),
        *spots,
        fill(
            "M10 28Q12 20 18 21Q25 23 24 31Q34 36 35 48Q32 58 21 58Q11 55 11 43Q8 36 10 28Z", GREEN
        ),
        fill("M14 42Q24 36 33 46Q26 53 17 51Z", "#0e5233"),
        fill("M10 25 3 28 10 30Z", GOLD),
        stroke("M16 21Q18 14 25 13", RED, 2),
        circle(15.5, 27, 2.4, FACE),
        circle(15, 27, 1.2, INK),
        stroke("M19 58 17 63.5M25 58 27 63", BROWN, 1.8),
    ]


def bamboo(n: int) -> str:
    return tile(bird() if n == 1 else sticks(BAMBOO_LAYOUTS[n]))


# ---------------------------------------------------------------------------- honours


def wind(letter: str) -> str:
    return tile([glyph(WINDS[letter], (9, 13, 42, 50), INK, 5)])


def dragon(letter: str) -> str:
    if letter == "C":
        return tile([glyph("中", (8, 9, 44, 58), RED, 5.6)])
    if letter == "F":
        return tile([glyph("发", (8, 11, 44, 54), GREEN, 5.2)])
    return tile(
        [
            el(
                "rect",
                x=11,
                y=12,
                width=38,
                height=52,
                rx=2,
                fill="none",
                stroke=BLUE,
                stroke_width=3.4,
            ),
            el(
                "rect",
                x=16.5,
                y=17.5,
                width=27,
                height=41,
                rx=1,
                fill="none",
                stroke=BLUE,
                stroke_width=1.4,
            ),
        ]
    )


# ---------------------------------------------------------------------------- flowers


def blossom(x: float, y: float, r: float) -> list[str]:
    petals = [polar(x, y, r * 0.62, a) for a in range(0, 360, 72)]
    return [
        *(circle(px, py, r * 0.5, PINK) for px, py in petals),
        circle(x, y, r * 0.3, GOLD),
    ]


def plum() -> list[str]:
    return [
        stroke("M10 70Q20 50 36 44Q46 40 50 24M24 54Q18 40 22 28", BROWN, 2.6),
        *blossom(38, 38, 11),
        *blossom(20, 28, 8),
        *blossom(38, 17, 6),
        circle(14, 58, 2.4, PINK),
    ]


def orchid() -> list[str]:
    leaves = "M28 70Q24 40 8 30M30 70Q34 40 22 14M32 70Q40 44 54 36M30 70Q46 56 52 64"
    petals = [leaf((38, 30), a, 12, 4) for a in (-40, 40, 160, 200, 0)]
    return [
        stroke(leaves, GREEN, 2.6),
        fill("".join(petals), "#8e4fa6"),
        circle(38, 30, 2.2, RED),
    ]


def chrysanthemum() -> list[str]:
    cx, cy = 30, 32
    outer = [(polar(cx, cy, 5, a), polar(cx, cy, 18, a)) for a in range(0, 360, 20)]
    inner = [(polar(cx, cy, 4, a), polar(cx, cy, 11, a)) for a in range(10, 370, 30)]
    return [
        stroke("M30 50Q28 62 30 72", GREEN, 2.4),
        fill(leaf((30, 62), -60, 14, 4) + leaf((30, 66), 60, 14, 4), GREEN),
        stroke(segments(outer), GOLD, 3.4),
        stroke(segments(inner), "#d86a14", 2.8),
        circle(cx, cy, 4.5, BROWN),
    ]


def bamboo_flower() -> list[str]:
    leaves = [leaf((34, y), a, 17, 3.4) for y, a in ((28, 70), (28, 105), (46, 75), (46, 115))]
    knots = [((20.5, y), (27.5, y)) for y in (24, 42, 60)]
    return [
        stroke("M24 72V8", GREEN, 5),
        stroke(segments(knots), "#0e5233", 2),
        stroke("M24 48Q30 40 34 28M24 48 34 46", GREEN, 1.6),
        fill("".join(leaves), GREEN),
        fill(leaf((22, 52), 235, 16, 3.2), GREEN),
    ]


def sprout() -> list[str]:
    return [
        fill("M8 70Q30 54 52 70Z", BROWN),
        stroke("M30 64Q28 44 31 30", GREEN, 2.8),
        fill(leaf((30, 40), -55, 22, 7) + leaf((31, 32), 50, 20, 6.5), GREEN),
        circle(31, 28, 2.6, "#8bc34a"),
    ]


def sun() -> list[str]:
    cx, cy = 30, 38
    rays = [(polar(cx, cy, 15, a), polar(cx, cy, 21, a)) for a in range(0, 360, 30)]
    short = [(polar(cx, cy, 15, a), polar(cx, cy, 18, a)) for a in range(15, 375, 30)]
    return [
        stroke(segments(rays), "#e0700f", 3),
        stroke(segments(short), GOLD, 2.4),
        circle(cx, cy, 11, RED),
        circle(cx, cy, 7, "#e8531c"),
    ]


MAPLE = [
    (0, 1.0),
    (12, 0.58),
    (22, 0.7),
    (34, 0.4),
    (62, 0.95),
    (78, 0.62),
    (92, 0.72),
    (112, 0.36),
    (136, 0.68),
    (156, 0.32),
    (176, 0.2),
]


def maple() -> list[str]:
    cx, cy, r = 30, 42, 24
    half = [polar(cx, cy, r * f, a) for a, f in MAPLE]
    mirrored = [polar(cx, cy, r * f, -a) for a, f in reversed(MAPLE)]
    veins = [((cx, cy), polar(cx, cy, r * 0.8, a)) for a in (0, 62, -62, 136, -136)]
    return [
        stroke("M30 44 31 72", BROWN, 2.2),
        fill(polyline(half + mirrored, close=True), "#d2471c"),
        stroke(segments(veins), "#f3b23a", 1.2),
    ]


def snowflake() -> list[str]:
    cx, cy, r = 30, 40, 22
    lines: list[tuple[Point, Point]] = []
    for a in range(0, 360, 60):
        lines.append(((cx, cy), polar(cx, cy, r, a)))
        for f, twig in ((0.5, 7.0), (0.78, 5.0)):
            m = polar(cx, cy, r * f, a)
            lines += [(m, polar(*m, twig, a - 45)), (m, polar(*m, twig, a + 45))]
    return [stroke(segments(lines), "#3b7fc4", 2.4), circle(cx, cy, 3, BLUE)]


FLOWERS: dict[int, Callable[[], list[str]]] = {
    1: plum,
    2: orchid,
    3: chrysanthemum,
    4: bamboo_flower,
    5: sprout,
    6: sun,
    7: maple,
    8: snowflake,
}


def flower(n: int) -> str:
    """The emblem, and the flower's number (1-4 in each group) in the top-right corner."""
    colour = RED if n <= 4 else BLUE
    return tile([*FLOWERS[n](), glyph(str((n - 1) % 4 + 1), (44, 4.5, 10, 16), colour, 2.8)])


# ---------------------------------------------------------------------------- back and badge


def back() -> str:
    return svg(
        [
            el("rect", x=1, y=3, width=58, height=76, rx=6, fill="#1f5a40"),
            el(
                "rect",
                x=1,
                y=1,
                width=58,
                height=74,
                rx=6,
                fill=SLAB,
                stroke="#1f5a40",
                stroke_width=1,
            ),
            el(
                "rect",
                x=6,
                y=6,
                width=48,
                height=64,
                rx=3.5,
                fill="none",
                stroke="#7fb89a",
                stroke_width=1.4,
            ),
            stroke(polyline([(30, 22), (44, 38), (30, 54), (16, 38)], close=True), "#7fb89a", 2),
            circle(30, 38, 4, "#7fb89a"),
        ]
    )


def wild() -> str:
    star = [polar(12, 12.6, 7.6 if i % 2 == 0 else 3.1, i * 36) for i in range(10)]
    return svg(
        [
            circle(12, 12, 11, GOLD, stroke="#fff", stroke_width=1.6),
            ring(12, 12, 8.8, "#9a6400", 0.8),
            fill(polyline(star, close=True), RED),
        ],
        BADGE_VIEWBOX,
    )


# ---------------------------------------------------------------------------- the set


def tile_set() -> dict[str, str]:
    """Every file of the set, by name, in a fixed order."""
    files: dict[str, str] = {}
    for n in range(1, 10):
        files[f"{n}m"] = characters(n)
        files[f"{n}p"] = dots(n)
        files[f"{n}s"] = bamboo(n)
    for letter in WINDS:
        files[letter] = wind(letter)
    for letter in "CFP":
        files[letter] = dragon(letter)
    for n in range(1, 9):
        files[f"f{n}"] = flower(n)
    files["back"] = back()
    files["wild"] = wild()
    return files


def write(out: Path) -> None:
    """Rewrite ``out``: every file of the set, and no stale ``.svg`` left behind."""
    out.mkdir(parents=True, exist_ok=True)
    files = tile_set()
    for old in out.glob("*.svg"):
        if old.stem not in files:
            old.unlink()
    for name, text in files.items():
        (out / f"{name}.svg").write_text(text, encoding="utf-8", newline="\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    default = Path(__file__).resolve().parent.parent / "tiles"
    parser.add_argument("--out", type=Path, default=default, help=f"default: {default}")
    write(parser.parse_args().out)


if __name__ == "__main__":
    main()
