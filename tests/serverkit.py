"""The settings of the servers the tests start (tests/server/conftest.py and the tests that
build a ``Config`` of their own): short timers, no rate limit for bots that answer at once."""

from __future__ import annotations

from server.config import LimitsSection, TimersSection

TEST_TIMERS = TimersSection(
    turn_seconds=3,
    min_turn_seconds=1,
    disconnected_seconds=0.2,
    hand_pause_seconds=0,
    unattended_move_seconds=0,  # tables nobody watches play at full speed in tests
    restart_grace_seconds=0.5,
    claim_window_ms=0,  # windows are still held; tests that time them set their own
)
# The bots answer at once: let them (tests that check the rate limit ask for the defaults).
TEST_LIMITS = LimitsSection(messages_per_second=10_000, message_burst=10_000)
