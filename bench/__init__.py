"""Benchmarks of the reference ReAct against dspy and udspy (not shipped): `python -m bench`."""
