"""DiskLab: a workbench for storage and filesystem benchmarks on Linux."""

__version__ = "0.1.0"
