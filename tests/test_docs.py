"""The product documents its own rules: docs/rules.md agrees with the code and its links hold.

- The fan tables of ``docs/rules.md`` list every ``engine.fans.Fan``, in order, with its
  English name, Chinese name and value, and nothing else.
- Every link from ``docs/rules.md`` to a heading of ``docs/rulings.md`` finds that heading.
- No file of the product points at the folder of source documents outside the repository:
  users don't have it.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from engine.fans import Fan

REPO = Path(__file__).resolve().parent.parent
RULES = REPO / "docs" / "rules.md"
RULINGS = REPO / "docs" / "rulings.md"

# A row of a fan table: | # | English | 中文 | value | what it is | not counted with it |
FAN_ROW = re.compile(r"^\| (?:\d+|MIL|★) \| ([^|]+) \| ([^|]+) \| (\d+) \|", re.MULTILINE)


def test_the_fan_tables_list_every_fan_with_its_names_and_value() -> None:
    rows = [(en, zh, int(value)) for en, zh, value in FAN_ROW.findall(RULES.read_text("utf-8"))]
    assert rows == [(fan.en, fan.zh, fan.points) for fan in Fan]


def test_the_rule_book_numbers_run_1_to_81() -> None:
    numbers = re.findall(r"^\| (\d+) \| ", RULES.read_text("utf-8"), re.MULTILINE)
    assert [int(n) for n in numbers] == list(range(1, 82))


def github_anchor(heading: str) -> str:
    """The anchor GitHub gives a heading: lower case, punctuation dropped, spaces to '-'."""
    kept = "".join(c for c in heading.strip().lower() if c.isalnum() or c in " -_")
    return kept.replace(" ", "-")


def test_github_anchor() -> None:
    assert github_anchor("T5. Dealer repeat (连庄) and the doubled dealer") == (
        "t5-dealer-repeat-连庄-and-the-doubled-dealer"
    )


def test_links_to_the_rulings_find_their_heading() -> None:
    headings = re.findall(r"^#+ (.+)$", RULINGS.read_text("utf-8"), re.MULTILINE)
    anchors = {github_anchor(heading) for heading in headings}
    links = re.findall(r"\]\(rulings\.md#([^)]+)\)", RULES.read_text("utf-8"))
    assert links, "docs/rules.md links no ruling"
    missing = sorted(set(links) - anchors)
    assert not missing, f"docs/rules.md links headings that docs/rulings.md lacks: {missing}"


def test_nothing_points_outside_the_repository_for_the_rules() -> None:
    outside = re.compile("(?:\\.\\./)?" + "shared" + r"/(?:rules|corpora)")
    skip = {".venv", ".git", "build", "dist", "node_modules", "__pycache__"}
    offenders = []
    for folder, subfolders, files in os.walk(REPO):
        subfolders[:] = sorted(name for name in subfolders if name not in skip)
        for name in sorted(files):
            path = Path(folder, name)
            if path.suffix not in {".py", ".md", ".toml", ".txt"}:
                continue
            for number, line in enumerate(path.read_text("utf-8").splitlines(), 1):
                if outside.search(line):
                    offenders.append(f"{path.relative_to(REPO)}:{number}: {line.strip()}")
    assert not offenders, "\n".join(offenders)
