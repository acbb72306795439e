"""The root helper: the code that runs as root (`python -I -m disklab.core.root_helper`).

  helper       its loop: parse, dispatch, answer; its start checks (trust) and its end
  trust        it runs only its own code: isolated, root-owned interpreter and package
  paths        the served user; directories opened without following links
  state        what one helper holds (and its root-owned record), and its command log
  loops        block and loop devices: classify, identity, attach, detach
  partitions   GPT partitions of a device
  filesystems  wipefs, mkfs (dry run first), mount, umount, read-back
  queue        read-ahead, scheduler, drop_caches
  toolruns     benchmark tools run as root
  groups       memory cgroups of cases with a page-cache limit

Its client is disklab.core.helper_client; the two share one module,
disklab.core.helper_client.protocol (nothing else of the client is imported here, and nothing
here by the client).
"""
