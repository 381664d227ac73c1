"""zeus-bench: measure, replay and cut the GPU energy of deep-learning training.

The core (trace store, cost model, simulator, analysis helpers) imports without torch; the
device layer needs ``nvidia-ml-py`` only when it talks to a real GPU, and the training
workloads (top-level package ``workloads``) need the ``workloads`` extra.
"""

__version__ = "0.1.0"
