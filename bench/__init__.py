"""Benchmarks: `faguan bench [--json]` measures the bot against the limits of its machine.

Every figure is printed beside a baseline measured in the same run on the same machine, so the
ratio says how much of the machine's own limit the bot's code leaves unused:

- `ingest`: vote posts through the whole path (parse → load → decide → commit events and outbox
  → effects to a no-op performer) with 1, 10, 100 games, against the drivers alone (C `sqlite3`,
  `asyncpg`) appending the same rows to the same database (`bench.baselines`); CPU per post;
- `restart`: rebuilding the active games as a starting bot does, against a C read + `json.loads`
  of the same rows; memory per active game;
- `deadlines`: how late deadline timers fire, and how long from a deadline to its lock committed
  and performed, while ingest runs; against the same timers idle;
- `day`: one 5,000-post day: CPU and bytes written per post late in the day against early;
- `discord_calls`: REST calls per phase change of a 16-player game, counted on simcord;
- `engine_speed`: nights resolved and recorded games replayed per second.

Nothing here is asserted in the tests (tests/bench only runs it at tiny sizes): timings depend on
the machine. `bench.cli` holds the flags and the run; `bench.report` the table.
"""
