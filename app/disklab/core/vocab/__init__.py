"""The words every layer shares: the plan's and a run's data (model), sizes and rates (units),
every error (errors), a run's events (events), the JSON documents' header (jsonformat).
A leaf: it imports nothing else of disklab (import contract vocab-is-a-leaf)."""
