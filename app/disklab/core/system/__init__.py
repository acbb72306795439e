"""Facts of the system DiskLab runs on, read from the kernel's own files.

`sysfs` (block devices by number, their queues), `mountinfo` (what is mounted where), `devices`
(block devices and what DiskLab may destroy), `host` (the facts stored with every session),
`cgroups` (the memory controller and the per-case groups of a page-cache limit). The
package imports nothing of its own here, so that the engine process importing `mountinfo` pays
for nothing else.
"""
