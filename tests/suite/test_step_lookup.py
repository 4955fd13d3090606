"""The suite's cached step lookup finds, for every step, the definitions pytest-bdd's own finds."""

from __future__ import annotations

import re
from pathlib import Path

from tests.suite.conftest import suite_run


def test_every_step_finds_the_definitions_pytest_bdd_finds(tmp_path: Path) -> None:
    run = suite_run(tmp_path, "reference", "-p", "tests.suite.step_lookup_check")
    assert run.returncode == 0, run.output[-3000:]
    [(checked, differing)] = re.findall(r"step lookups: (\d+) checked, (\d+) differing", run.output)
    assert int(checked) > 1000 and int(differing) == 0, run.output[-3000:]
