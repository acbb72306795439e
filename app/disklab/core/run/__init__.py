"""A run of a plan, as a generator of events: `runner.run_plan` (setup, cases, repeats,
teardown, cancel; one path for one or several targets), `planning` (what a plan will run, and
the work it adds up to), `watch` (a measured step followed to its end, and its pure outcome()),
`recorded` (RecordedRun: a run whose every event is stored in the library as it comes)."""
