"""The desktop workbench: PySide6 over disklab.core (the only package that imports Qt).

All work happens off the GUI thread: runs in a RunWorker on a QThread (worker.py), short blocking
calls (device lists, plan checks) in a thread pool (threads.py). The live plots are pyqtgraph plots
(plots.py) redrawn once per refresh.
"""
