"""The tile set in web/tiles/ is exactly what web/tools/make_tiles.py draws, and fit to serve.

The generator runs in a subprocess into a temporary folder, as a developer runs it, and its
output is compared byte for byte with the committed files: a hand edit of an SVG, or a script
change without regenerating, fails here. The other checks are what the client relies on: every
tile name it asks for exists, each file is a well-formed SVG with the set's viewBox, nothing in
it needs a font (no <text>: headless Chromium has no CJK font), and the files are small.
"""

import importlib.util
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[2]
TILES = ROOT / "web" / "tiles"
SCRIPT = ROOT / "web" / "tools" / "make_tiles.py"
SVG = "{http://www.w3.org/2000/svg}"

# Written out here rather than taken from the script, so that a tile the script stops drawing
# is a failure rather than a shorter list.
SUITED = [f"{n}{suit}" for suit in "mps" for n in range(1, 10)]
HONOURS = ["E", "S", "W", "N", "C", "F", "P"]
FLOWERS = [f"f{n}" for n in range(1, 9)]
TILE_NAMES = [*SUITED, *HONOURS, *FLOWERS, "back"]
ALL_NAMES = [*TILE_NAMES, "wild"]

# Only shapes: no text, fonts, images, scripts, styles or links to other files.
ALLOWED_ELEMENTS = {"svg", "path", "circle", "rect"}


def load_script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("make_tiles", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def committed() -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(TILES.glob("*.svg"))}


def test_committed_files_are_the_generators_output(tmp_path: Path) -> None:
    subprocess.run([sys.executable, str(SCRIPT), "--out", str(tmp_path)], check=True)
    generated = {p.name: p.read_bytes() for p in sorted(tmp_path.glob("*.svg"))}
    assert sorted(generated) == sorted(committed())
    for name, data in generated.items():
        assert data == (TILES / name).read_bytes(), f"{name} differs: run make_tiles.py"


def test_the_generator_removes_stale_tiles_and_keeps_other_files(tmp_path: Path) -> None:
    (tmp_path / "9z.svg").write_text("<svg/>")
    (tmp_path / "README.md").write_text("kept")
    load_script().write(tmp_path)
    assert not (tmp_path / "9z.svg").exists()
    assert (tmp_path / "README.md").read_text() == "kept"
    assert sorted(p.stem for p in tmp_path.glob("*.svg")) == sorted(ALL_NAMES)


def test_every_name_the_client_needs_exists() -> None:
    assert sorted(p.stem for p in TILES.glob("*.svg")) == sorted(ALL_NAMES)


@pytest.mark.parametrize("name", ALL_NAMES)
def test_each_file_is_a_font_free_svg_with_the_sets_viewbox(name: str) -> None:
    root = ET.parse(TILES / f"{name}.svg").getroot()
    assert root.tag == f"{SVG}svg"
    assert root.get("viewBox") == ("0 0 24 24" if name == "wild" else "0 0 60 80")
    tags = {element.tag.removeprefix(SVG) for element in root.iter()}
    assert tags <= ALLOWED_ELEMENTS, f"{name}.svg uses {sorted(tags - ALLOWED_ELEMENTS)}"
    for element in root.iter():
        assert not any("href" in attribute for attribute in element.attrib), name


def test_files_are_small() -> None:
    sizes = {name: len(data) for name, data in committed().items()}
    too_big = {name: size for name, size in sizes.items() if size > 3 * 1024}
    assert not too_big
    assert sum(sizes.values()) < 120 * 1024


# The standard stroke counts of the characters the set draws: a glyph with a stroke missing
# or doubled is a different (or no) character.
STROKE_COUNTS = {
    "一": 1, "二": 2, "三": 3, "四": 5, "五": 4, "六": 4, "七": 2, "八": 2, "九": 2,
    "万": 3, "东": 5, "南": 9, "西": 6, "北": 5, "中": 4, "发": 5,
}  # fmt: skip


def test_each_character_has_its_standard_stroke_count() -> None:
    glyphs = load_script().GLYPHS
    assert {char: len(glyphs[char]) for char in STROKE_COUNTS} == STROKE_COUNTS


def test_every_glyph_stroke_parses_and_stays_near_the_grid() -> None:
    script = load_script()
    for char, strokes in script.GLYPHS.items():
        for text in strokes:
            for _, values in script.stroke_commands(text):
                assert all(-10 <= v <= 110 for v in values), (char, text)


@pytest.mark.parametrize(
    ("stroke", "token"),
    [("10 20 30", 3), ("Q 1 2 3 4", 1), ("10 20 Q 30 40 50", 3), ("10 x", 1), ("", None)],
)
def test_a_malformed_stroke_is_an_error_quoting_it(stroke: str, token: int | None) -> None:
    with pytest.raises(ValueError, match="glyph stroke") as error:
        load_script().stroke_commands(stroke)
    assert repr(stroke) in str(error.value)
    if token is not None:
        assert f"at token {token}" in str(error.value)
