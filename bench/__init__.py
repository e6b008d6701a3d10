"""Benchmarks: `faguan bench [--json]` measures the bot against the limits of its machine.

Every figure is printed beside a baseline measured in the same run on the same machine, so the
ratio says how much of the machine's own limit the bot's code leaves unused:

- `ingest`: vote posts through the whole path (parse → load → decide → commit events and outbox
  → effects to a no-op performer) against raw durable appends to the same store;
- `restart`: rebuilding the active games as a starting bot does, against a raw read of the rows;
- `deadlines`: how late deadline timers fire while ingest runs, against the same timers idle;
- `discord_calls`: REST calls per phase change of a 16-player game, counted on simcord;
- `engine_speed`: nights resolved and recorded games replayed per second.

Nothing here is asserted in the tests (tests/bench only runs it at tiny sizes): timings depend on
the machine. `bench.cli` holds the flags and the run; `bench.report` the table.
"""
