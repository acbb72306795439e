"""Facts of the system DiskLab runs on, read from the kernel's own files.

`sysfs` (block devices by number, their queues), `mountinfo` (what is mounted where), `devices`
(block devices and what DiskLab may destroy), `host` (the facts stored with every session),
`cgroups` (the memory controller and the per-case groups of a page-cache limit), `directories`
(the library path, the state directory), `space` (free space), `syncfs` (syncfs(2)), `fsprobe`
(what a filesystem allows: O_DIRECT; its errors in its terms), `cleanup` (removing the files a
case wrote). The package imports nothing of its own here, so that the engine process importing
`fsprobe` pays for nothing else.
"""
