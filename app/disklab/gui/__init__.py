"""The desktop workbench: PySide6 over disklab.core (the only package that imports Qt).

All work happens off the GUI thread: runs in a RunWorker on a QThread (worker.py), short blocking
calls (device lists, plan checks) in a thread pool (threads.py). The live plots are painted by
one canvas (livepaint.py) once per refresh.
"""
