"""Shared test configuration: hypothesis profiles."""

from __future__ import annotations

import os

import pytest


@pytest.hookimpl(tryfirst=True)  # before hypothesis's plugin loads `--hypothesis-profile`
def pytest_configure(config: pytest.Config) -> None:
    if config.getoption("impl", None):
        # The conformance suite's own run (`pytest --impl NAME` here): its plugin registers the
        # profile it needs, and hypothesis is imported only if it fuzzes.
        return
    from hypothesis import HealthCheck, settings

    from conformance._fuzz import register_fuzz_profile

    # too_slow is flaky on busy CI machines; deadlines likewise.
    settings.register_profile("default", deadline=None, suppress_health_check=[HealthCheck.too_slow])
    register_fuzz_profile()  # the profile `--hypothesis-profile fuzz` loads wherever the suite runs
    settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))
