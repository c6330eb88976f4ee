"""The ranking ladder: rated play, the rating, seasons, matchmaking (docs/ladder.md).

- ``rating``: the rating arithmetic (OpenSkill Plackett–Luce), ranks with ties, the
  conservative leaderboard figure, the soft reset between seasons. Pure, no I/O.
- ``store``: the ladder's tables in the database: applying a finished rated match (inside the
  transaction that finishes it), seasons, leaderboards, a player's history, recompute.
- ``matchmaking``: forming tables of four from a queue (pure); ``queue``: the server's queue.
"""
