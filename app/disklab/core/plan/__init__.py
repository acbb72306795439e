"""A plan, read and checked before anything runs: its TOML read with every key's line (parse,
keylines), the checks that look at the machine and the target (checks, direct_io), its
`[report]` (report), its keys (keys), cases (matrix), targets (targets), JSON Schema (schema),
and the window's draft (draft). It starts nothing of its own: what it asks the machine goes
through core.system and core.proc (import contract plan-starts-nothing)."""
