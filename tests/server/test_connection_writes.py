"""How a connection writes its frames (``server.connection``): each text frame made
without websockets' frame objects is byte for byte what its protocol makes. That the frames
arrive is every socket test's business."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st
from websockets.protocol import State
from websockets.server import ServerProtocol

from server.connection import frame_head

# Each length's head is one of three forms; their edges, and any length between.
EDGES = [0, 1, 125, 126, 127, 65535, 65536, 70000]


def protocol_frame(data: bytes) -> bytes:
    """The text frame websockets' own server protocol (no extension) writes for ``data``."""
    protocol = ServerProtocol()
    protocol.state = State.OPEN
    protocol.send_text(data)
    return b"".join(protocol.data_to_send())


@given(st.one_of(st.sampled_from(EDGES), st.integers(0, 70000)))
def test_a_frame_head_and_its_text_are_the_frame_websockets_writes(length: int) -> None:
    data = bytes(i % 251 for i in range(length))
    assert frame_head(length) + data == protocol_frame(data)
