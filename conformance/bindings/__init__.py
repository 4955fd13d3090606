"""Bindings bundled with the suite, one module per library."""
