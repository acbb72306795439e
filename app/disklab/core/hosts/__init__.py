"""Several machines: fio servers DiskLab connects to (already running) or starts over SSH, the
SSH port forwards that reach them, and the facts each one reports (see ARCHITECTURE.md)."""
