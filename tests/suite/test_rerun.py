"""Run from any directory, a failing test's node id can be copied to rerun just that test."""

from __future__ import annotations

import re
from pathlib import Path

from tests.suite.conftest import suite_run


def test_a_failing_node_id_from_outside_the_checkout_reruns_that_test(tmp_path: Path) -> None:
    first = suite_run(tmp_path, "tests.suite.bindings:IgnoresTheCap", "-n", "2")
    failed = re.findall(r"^FAILED (\S+)", first.output, re.M)
    assert failed, first.output[-3000:]
    assert all(node.startswith("conformance/_suite/test_conformance.py::") for node in failed)
    again = suite_run(tmp_path, "tests.suite.bindings:IgnoresTheCap", failed[0])
    assert again.returncode == 1, again.output[-3000:]
    assert re.findall(r"^FAILED (\S+)", again.output, re.M) == [failed[0]]
    assert "1 failed" in again.output and "passed" not in again.output.split("requirements:")[-1]
