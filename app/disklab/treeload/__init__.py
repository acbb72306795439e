"""The file-tree workload: `python -m disklab.treeload`, a tool of its own like the engine.

It reproduces the RAID study's dd/rm tables (create D directories x N files of size S with
`dd bs=B`, flush server and device caches, then `rm -Rf` the tree), timing each phase as
real/user/sys seconds of this process and as files/s and bytes/s. It prints JSON lines, one
object a line and flushed at once, because the runner reads them live from a pipe:

  {"type": "progress", "phase": "create", "files": 120, "planned": 1000, "bytes": ...,
   "elapsed": 0.5}                                       while a phase runs
  {"type": "flush", "done": [...], "skipped": [...]}       what the flush between phases did
  {"type": "phase", "phase": "create", "seconds": ..., "user": ..., "sys": ..., "files": ...,
   "bytes": ...}                                           when a phase ends
  {"type": "summary", "phases": [...], "partial": false}   at the end (also when stopped)
  {"type": "error", "message": "..."}                      an I/O error, in the system's words

The tree is removed before the process exits, whatever happens short of SIGKILL (the runner
removes the tree root named in Command.files after that too).
"""
