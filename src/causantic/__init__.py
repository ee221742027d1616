"""Causantic: long-term, local, episodic memory for AI coding agents.

Importing the package is cheap on purpose: heavy libraries (numpy, faiss, onnxruntime,
scikit-learn) load inside the functions that need them, so hooks and `--help` stay fast.
"""

__version__ = "0.1.0"
