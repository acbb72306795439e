"""Filesystem configurations: the options and their checks (`options`), the exact commands of
applying one (`commands`), the tools' reports (`parsers`), what was really applied
(`readback`), and applying and undoing configurations on a target (`apply`).
"""
