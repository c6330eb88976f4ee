"""Tournaments: an event of several sessions, its seating, its table points and standings.

- ``seating``: who sits at which table and wind for each session (random, balanced, repeat
  opponents avoided with winds balanced, Swiss by standings, top four together), byes or
  substitutes when the player count is not a multiple of four, the director's seat swaps.
  Pure, no I/O: deterministic from a recorded seed.
- ``scoring``: table points, standings, the director's corrections and duplicate results.
  Pure, no I/O.
"""
