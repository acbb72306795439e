"""A run of a plan, as a generator of events: `runner.run_plan` (setup, cases, repeats,
teardown, cancel; one path for one or several targets), `planning` (what a plan will run, and
the work it adds up to), `watch` (a measured step followed to its end, and its pure outcome()),
`recorded` (RecordedRun: a run whose every event is stored in the library as it comes);
`summary` (what a run of a plan will be, before it starts, for both front ends), `progress`
(the session's overall share and ETA), `monitor` and `live_rates` (the live samplers, and what
they cannot see), `resume` (what a resumed session may run). Only this package starts a tool's
process (import contract run-starts-the-tools)."""
