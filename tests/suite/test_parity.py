"""Every bundled binding says, for each rule of the contract's parity (`conformance.binding.PARITY`),
how it fills that field for its library, in the rule's form (docs/writing-a-binding.md, "Parity").

A Python binding's `parity` is read from its module's source (its entry point names the module and
class), so the test needs none of the peer libraries; a Node harness's from its welcome, as the
suite reads it.
"""

from __future__ import annotations

import ast
import importlib.util
import re
from importlib.metadata import entry_points
from pathlib import Path

import pytest

from conformance import _loader
from conformance._report import Report
from conformance.binding import PARITY
from tests.peer_envs import outside_ci
from tests.test_peers import DOCS, OUTSIDE_CI

#: The entry points of the bindings this checkout bundles (a user's own binding may say nothing).
BUNDLED = sorted(ep.name for ep in entry_points(group=_loader.GROUP)
                 if ep.value.startswith("conformance.bindings."))
#: How a value starts: where the field comes from; `concurrency` says whether runs share an agent.
FORMS = {rule: ("library:", "derived:", "none:") for rule in PARITY} | {
    "concurrency": ("shared", "per-run:")}


def _class_attribute(module: Path, class_name: str, attribute: str) -> dict[str, str] | None:
    """The literal dict `attribute` of `class_name` in `module`, following its bases in the same
    module; None when neither the class nor a base assigns one."""
    tree = ast.parse(module.read_text(encoding="utf-8"))
    classes = {node.name: node for node in tree.body if isinstance(node, ast.ClassDef)}
    node = classes.get(class_name)
    while node is not None:
        for statement in node.body:
            if not isinstance(statement, ast.AnnAssign | ast.Assign) or statement.value is None:
                continue
            target = statement.target if isinstance(statement, ast.AnnAssign) else statement.targets[0]
            if isinstance(target, ast.Name) and target.id == attribute:
                value = ast.literal_eval(statement.value)
                assert isinstance(value, dict), f"{class_name}.{attribute} is not a literal dict"
                return value
        bases = [b.id for b in node.bases if isinstance(b, ast.Name)]
        node = classes.get(bases[0]) if bases else None
    return None


def _python_parity(name: str) -> dict[str, str]:
    (point,) = (ep for ep in entry_points(group=_loader.GROUP) if ep.name == name)
    module_name, _, class_name = point.value.partition(":")
    spec = importlib.util.find_spec(module_name)
    assert spec is not None and spec.origin is not None, f"{module_name} is not importable"
    return _class_attribute(Path(spec.origin), class_name, "parity") or {}


def _harness_parity(name: str) -> dict[str, str]:
    if name in outside_ci():
        # Its library cannot be installed here: its committed report holds the parity its welcome gave.
        report = Path(__file__).resolve().parents[2] / "docs" / "conformance" / f"{name}.json"
        return dict(Report.model_validate_json(report.read_text(encoding="utf-8")).binding.parity)
    # The harness process ends at exit, as in a suite run (conformance._process).
    return dict(_loader.load_binding(name).parity)


def _problems(parity: dict[str, str]) -> list[str]:
    problems = [f"{rule}: not declared" for rule in PARITY if rule not in parity]
    problems += [f"{rule}: not a rule of PARITY" for rule in parity if rule not in PARITY]
    for rule, value in parity.items():
        forms = FORMS.get(rule, ())
        if not value.startswith(forms):
            problems.append(f"{rule}: {value!r} starts with none of {', '.join(forms)}")
        elif value != "shared" and len(value.partition(":")[2].strip()) < 10:
            problems.append(f"{rule}: {value!r} does not say where")
    return problems


@pytest.mark.parametrize("name", BUNDLED)
def test_a_python_binding_declares_every_parity_rule(name: str) -> None:
    problems = _problems(_python_parity(name))
    assert not problems, (f"{name}'s Binding.parity: " + "; ".join(problems)
                          + ". Declare each rule of conformance.binding.PARITY as the docs' Parity says.")


@pytest.mark.parametrize("name", [n for n in _loader.HARNESSES if n not in OUTSIDE_CI])
def test_a_node_harness_declares_every_parity_rule(name: str) -> None:
    problems = _problems(_harness_parity(name))
    assert not problems, (f"{name}'s welcome parity: " + "; ".join(problems)
                          + ". Declare each rule of conformance.binding.PARITY as the docs' Parity says.")


@pytest.mark.parametrize("name", sorted(OUTSIDE_CI))
def test_a_harness_ci_cannot_run_declared_every_parity_rule_in_its_committed_report(name: str) -> None:
    # Its library is not installable here (tests/test_peers.py, OUTSIDE_CI): its welcome is read
    # from the report of the run made outside CI.
    report = Report.model_validate_json((DOCS / f"{name}.json").read_text(encoding="utf-8"))
    problems = _problems(report.binding.parity)
    assert not problems, f"{name}'s welcome parity: " + "; ".join(problems)


@pytest.mark.parametrize(("parity", "problem"), [
    ({}, "stop_reason: not declared"),
    ({"stop_reason": "ours"}, "starts with none of library:, derived:, none:"),
    ({"stop_reason": "library:"}, "does not say where"),
    ({"concurrency": "per-run"}, "starts with none of shared, per-run:"),
    ({"speed": "library: fast"}, "speed: not a rule of PARITY"),
])
def test_the_check_refuses_a_parity_out_of_form(parity: dict[str, str], problem: str) -> None:
    assert any(re.search(re.escape(problem), p) for p in _problems(parity))


def test_the_docs_state_every_rule_of_parity() -> None:
    docs = (Path(__file__).resolve().parents[2] / "docs" / "writing-a-binding.md").read_text(encoding="utf-8")
    section = docs.partition("### Parity")[2].partition("\n## ")[0]
    assert [rule for rule in PARITY if f"- `{rule}`" not in section] == []
