"""The vendored library is the recorded one: its file hashes to what web/js/vendor/README.md
says, so an update cannot slip in unrecorded."""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

VENDOR = Path(__file__).resolve().parent.parent.parent / "web" / "js" / "vendor"


def test_every_vendored_file_matches_its_recorded_hash() -> None:
    readme = (VENDOR / "README.md").read_text()
    recorded = dict(re.findall(r"^\| `([^`]+)` \|.*\| `([0-9a-f]{64})` \|", readme, re.M))
    scripts = sorted(path.name for path in VENDOR.glob("*.js"))
    assert sorted(recorded) == scripts, "every vendored script has one row in the README"
    for name, digest in recorded.items():
        assert hashlib.sha256((VENDOR / name).read_bytes()).hexdigest() == digest, name
        assert (VENDOR / f"{name.removesuffix('.js')}.LICENSE.txt").is_file(), name
