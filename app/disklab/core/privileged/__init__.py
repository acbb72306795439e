"""The root boundary: DiskLab's privileged helper and its client, one typed protocol between.

  protocol     one dataclass per request and answer, validated on arrival (both sides import it)
  client       Privileged (one helper per session) and PrivilegedTool (a tool run as root)
  helper       the helper's loop: parse, dispatch, answer; its start checks (trust) and its end
  trust        it runs only its own code: isolated, root-owned interpreter and package
  paths        the served user; directories opened without following links
  state        what one helper holds (and its root-owned record), and its command log
  loops        block and loop devices: classify, identity, attach, detach
  partitions   GPT partitions of a device
  filesystems  wipefs, mkfs (dry run first), mount, umount, read-back
  queue        read-ahead, scheduler, drop_caches
  toolruns     benchmark tools run as root
  groups       memory cgroups of cases with a page-cache limit
"""
