"""The parts of scripts/surface.py (its docstring says what they do)."""
