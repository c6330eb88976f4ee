"""The seed commitments of a match (docs/protocol.md, "Fairness"): before each hand is dealt
every viewer gets ``commitment(seed, salt)`` of its wall, and once it is over (or, at a
duplicate session's table, once the session is over) its seed and salt, so anyone can check
that the wall was fixed before the hand began.

Pure functions of a match's seed and salt: the live table (``server.table``), the tournaments
(publishing a session's seeds) and ``guobiao verify`` use them alike, without a table.
"""

from __future__ import annotations

import hashlib
from typing import Any

from engine.match import hand_seed


def commitment(seed: int, salt: bytes) -> str:
    """``sha256(salt || seed as 8 bytes big-endian)`` in hex (docs/protocol.md, Fairness)."""
    return hashlib.sha256(salt + seed.to_bytes(8, "big")).hexdigest()


def hand_salt(match_salt: bytes, hand_no: int) -> bytes:
    return hashlib.sha256(match_salt + hand_no.to_bytes(2, "big")).digest()


def hand_reveal(match_seed: int, match_salt: bytes, hand_no: int) -> dict[str, Any]:
    """What hand ``hand_no``'s ``reveal`` tells of it: ``hand_no``, its wall ``seed`` (and
    ``seed_hex``, its 8 bytes as hashed: a JSON number above 2**53 loses digits in
    JavaScript, so a browser checks the commitment with this), its ``salt`` and the
    ``commitment`` sent before it was dealt."""
    seed = hand_seed(match_seed, hand_no)
    salt = hand_salt(match_salt, hand_no)
    return {
        "hand_no": hand_no,
        "seed": seed,
        "seed_hex": seed.to_bytes(8, "big").hex(),
        "salt": salt.hex(),
        "commitment": commitment(seed, salt),
    }


def hand_reveals(seed: int, salt_hex: str, hands: int) -> list[dict[str, Any]]:
    """``hand_reveal`` of hands 1..``hands`` of the match of ``seed`` and salt ``salt_hex``
    (a ``MatchRow``'s): the seeds a table with ``reveals`` false never sent, for the
    tournament to publish once its session is over (a duplicate session's walls)."""
    salt = bytes.fromhex(salt_hex)
    return [hand_reveal(seed, salt, hand_no) for hand_no in range(1, hands + 1)]
