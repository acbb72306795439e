"""Qt-free core of DiskLab: plans, tools, runner, library. Usable on a headless server."""
