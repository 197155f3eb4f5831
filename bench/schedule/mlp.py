#!/usr/bin/python3
"""Command-line shim of overlap.models.mlp (python/overlap/models/mlp.py)."""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(
    os.path.dirname(os.path.abspath(__file__)))), "python"))

from overlap.models.mlp import main  # noqa: E402

main()
