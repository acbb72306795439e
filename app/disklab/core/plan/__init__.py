"""A plan: its TOML read with every key's line (parse), the checks that ask the target (direct_io),
its keys (keys), cases (matrix), targets (targets), JSON Schema (schema), and the window's draft
(draft). It starts no process but through core.proc (import contract plan-no-processes)."""
