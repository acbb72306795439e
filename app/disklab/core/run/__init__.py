"""A run of a plan, as a generator of events: `runner.run_plan` (one path for one or several
targets) over its rooms: `session` (set-up, host record, first event), `targets` (the target's
shape), `sections` (each section's runs, the tally), `case` (one case x repeat), `cgroup_limit`
(page-cache limits), `records` (what a kill would leave), `helper` (the privileged helper, on
first use); `planning` (what a plan will run, and the work it adds up to), `watch` (a measured
step followed to its end, and its pure outcome()), `recorded` (RecordedRun: a run whose every
event is stored in the library as it comes); `summary` (what a run of a plan will be, before it
starts, for both front ends), `progress` (the session's overall share and ETA), `monitor` and
`live_rates` (the live samplers, and what they cannot see), `resume` (what a resumed session may
run). Only this package starts a tool's process (import contract run-starts-the-tools)."""
