#!/usr/bin/env python3
"""Command-line shim of overlap.models.gpt (python/overlap/models/gpt.py)."""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(
    os.path.dirname(os.path.abspath(__file__)))), "python"))

from overlap.models.gpt import main  # noqa: E402

main()
