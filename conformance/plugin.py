"""The pytest plugin: `pytest --impl NAME` runs every feature against the binding NAME.

Without `--impl` it does nothing at all, so installing react-conformance never changes another
project's test run.
"""

from __future__ import annotations

import difflib
import importlib
import json
import os
import shutil
import sys
import tempfile
import threading
from collections.abc import Callable, Generator, Iterator, Mapping
from datetime import UTC, datetime
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

import pytest
from _pytest.runner import runtestprotocol

from conformance import _attribution, _guard, _http, _identity, _known_failures, _report, _report_paths, _text
from conformance._features import catalogue
from conformance._fixtures import WORLD
from conformance._loader import CMD, HARNESSES, load_binding
from conformance._report import Report, ScenarioResult
from conformance._steps import MODULES
from conformance.binding import Binding, effective_capabilities

_SUITE = Path(__file__).resolve().parent / "_suite" / "test_conformance.py"
#: The suite module's node id wherever it is installed: the id it has in a checkout, so a failing
#: test's node id can be copied to rerun it (`pytest --impl NAME <node id>`) from any directory.
SUITE_ID = "conformance/_suite/test_conformance.py"
_PROPERTY = "conformance"
#: The workerinput key naming the file an xdist worker writes its selection to (see `_Selection`).
_SELECTION = "conformance_selection"
#: Each selected scenario's node id, with its requirement, feature file and scenario name.
_Selection = dict[str, tuple[str, str, str]]
#: The whole failure text (traceback and message) may be this many times a message's limit.
_LONGREPR_LINES = 10


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("react-conformance", "ReAct conformance suite")
    group.addoption("--impl", metavar="NAME", default=None,
                    help="run the conformance suite against the binding NAME (an entry point of "
                         "react_conformance.bindings, or module:attr)")
    group.addoption("--conformance-json", metavar="PATH", default=None,
                    help="write the verdicts as JSON to PATH")
    group.addoption("--conformance-markdown", metavar="PATH", default=None,
                    help="write the requirement-by-verdict matrix as Markdown to PATH")
    group.addoption("--conformance-timeout", metavar="SECONDS", type=float,
                    default=_guard.DEFAULT_TIMEOUT,
                    help="seconds one binding operation may take before its scenario fails as hung "
                         f"(default {_guard.DEFAULT_TIMEOUT:g})")
    group.addoption("--conformance-cassettes", choices=_http.MODES, default="auto",
                    help="how http scenarios reach the model: replay their cassettes, record them "
                         "against the loopback server, or off (the live loopback server, no "
                         "cassettes); auto (default) replays when the cassette directory has a "
                         "folder for the binding, else runs live")
    group.addoption("--conformance-cassette-dir", metavar="DIR", default=None,
                    help="the cassettes, as DIR/<binding>/<feature>/<scenario>.yaml (default: the "
                         "ones shipped with react-conformance)")
    group.addoption("--conformance-examples", metavar="N", type=int, default=None,
                    help="how many generated tool arguments ARGS-1 sends (default: the feature's "
                         "count, 40, or the --hypothesis-profile's max_examples if larger: the `fuzz` "
                         "profile's is 5000); more fuzzes the binding harder")
    group.addoption("--conformance-seed", metavar="SEED", default=None,
                    help="seed the generated tool arguments with SEED (an integer, or `random` for "
                         "a fresh one, printed); default: derandomised, the same examples every run")
    group.addoption("--harness-debug", metavar="PATH", default=None, type=Path,
                    help="for a harness process (--impl cmd:...): validate every message in both "
                         "directions against the protocol and append the transcript to PATH")
    group.addoption("--conformance-run-outside-ci", metavar="WHY", default=None,
                    help="mark the report as made outside CI, saying why (a library CI cannot "
                         "install): the report, the comparison and the site show it")
    group.addoption("--conformance-isolate", action="store_true", default=False,
                    help="run a Python binding in a worker process that speaks the harness "
                         "protocol, so a crash or os._exit in it costs one scenario, not the run")


class _Session:
    """The plugin's state for one run with `--impl`."""

    def __init__(self, config: pytest.Config, binding: Binding) -> None:
        self.config = config
        self.binding = binding
        self.capabilities = effective_capabilities(binding)
        #: What ran, as the report's `binding.digest` records it (`conformance._identity`).
        self.digest = _identity.binding_digest(str(config.getoption("impl")), binding,
                                               in_process=not _in_another_process(binding))
        #: The reports that could not be written (each said once, not after every scenario).
        self.unwritable: set[str] = set()
        self.results: dict[str, ScenarioResult] = {}
        #: `tool_args.feature:116`, the scenario of each node id (for GitHub annotations).
        self.locations: dict[str, str] = {}
        self.broken: str | None = None
        #: Every selected scenario, to tell which requirements a partial run judged on all their
        #: scenarios. An xdist controller collects nothing: its workers write theirs to
        #: `selection_file` (every worker collects the same scenarios).
        self.selected: _Selection | None = None
        self.selection_file: Path | None = None
        #: The xdist workers that stopped on a KeyboardInterrupt (the scenario each was running has
        #: no verdict, as in a serial run), and how many ended in a scenario.
        self.interrupted_workers: set[str] = set()
        self.crashed_workers = 0
        self.interrupted_in: str | None = None
        self.running: str | None = None
        self.stopped_by: str | None = None
        self.smoke_checked = False
        #: The format (adapter) of a well-formed step reply a smoke scenario's run ended on, the
        #: binding declaring it: the library reads no such reply, so every run that ends on a step
        #: reply in that format is blocked by STEP-4.
        self.unread_format: str | None = None
        self.threads_before = set(threading.enumerate())
        self.exitstatus: int = 0
        self.complete = True

    # -- collection -------------------------------------------------------------------------

    @pytest.hookimpl(tryfirst=True)
    def pytest_collection_modifyitems(self, items: list[pytest.Item]) -> None:
        ours = [item for item in items if _requirement(item) is not None]
        self._check_known_failures(ours)
        for item in ours:
            _record_junit_properties(item)
            missing = self._missing(item)
            if missing:
                reasons = "; ".join(
                    f"{need}: {self.binding.not_claimed.get(need, 'no reason given')}"
                    if "|" not in need else f"none of {need.replace('|', ', ')}"
                    for need in missing
                )
                item.add_marker(pytest.mark.skip(
                    reason=_text.terminal(f"not claimed: {self.binding.name} does not claim {reasons}")
                ))
                continue
            cannot = self._cannot_express(item)
            if cannot is not None:
                item.add_marker(pytest.mark.skip(reason=_text.terminal(
                    f"not claimed: {_report.CANNOT_EXPRESS}: {cannot}")))
                continue
            known = self._known_failure(item)
            if known is not None:
                # An entry naming the requirement covers only its scenarios that fail: one that
                # passes is passed (`_stale_requirements` keeps the entry strict as a whole).
                reason, by_requirement = known
                item.add_marker(pytest.mark.xfail(strict=not by_requirement,
                                                  reason=_text.terminal(f"known failure: {reason}")))
        # The smoke tier runs first: if it fails, the binding is broken, not the library.
        items.sort(key=lambda item: 0 if item.get_closest_marker("conformance_smoke") else 1)

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        _freeze_heap()
        self.selected = {item.nodeid: (req, *_feature_and_name(item)) for item in session.items
                         if (req := _requirement(item)) is not None}
        path = getattr(self.config, "workerinput", {}).get(_SELECTION)
        if path:
            _report.write_atomically(Path(path), json.dumps(self.selected))

    def selection(self) -> _Selection | None:
        """The selected scenarios, if known yet (an xdist controller knows them once a worker has
        collected)."""
        if self.selected is None and self.selection_file is not None and self.selection_file.is_file():
            raw = json.loads(self.selection_file.read_text(encoding="utf-8"))
            self.selected = {nodeid: (req, feature, name) for nodeid, (req, feature, name) in raw.items()}
        return self.selected

    # -- pytest-xdist (a dependency, but `-p no:xdist` unloads it: hence optional hooks) ----------

    @pytest.hookimpl(optionalhook=True)
    def pytest_configure_node(self, node: Any) -> None:
        if self.selection_file is None:
            self.selection_file = Path(tempfile.mkdtemp(prefix="conformance-")) / "selection.json"
        node.workerinput[_SELECTION] = str(self.selection_file)

    @pytest.hookimpl(optionalhook=True)
    def pytest_testnodedown(self, node: Any, error: object | None) -> None:
        if error == "keyboard-interrupt":
            self.interrupted_workers.add(str(node.gateway.id))

    @pytest.hookimpl(optionalhook=True)
    def pytest_handlecrashitem(self, crashitem: str, report: pytest.TestReport, sched: Any) -> None:
        """A worker process that ended in a scenario: that scenario is errored (the binding, or the
        library beneath it, ended the process), unless the worker was interrupted."""
        node = getattr(report, "node", None)
        if node is not None and str(node.gateway.id) in self.interrupted_workers:
            self.interrupted_in = crashitem
            return
        known = (self.selection() or {}).get(crashitem)
        if known is None:
            return
        self.crashed_workers += 1
        requirement, feature, name = known
        result = ScenarioResult(
            id=crashitem.split("::", 1)[-1], feature=feature, name=name, requirement=requirement,
            verdict="errored", message=(
                f"the process running this scenario ended in it ({report.longrepr}): the binding, "
                "or the library beneath it, ended the process (os._exit, a crash in native code). "
                "pytest-xdist started another process for the scenarios after it. Run this "
                "scenario alone to see where it ends the process."))
        report.user_properties.append((_PROPERTY, result.model_dump_json()))

    def _missing(self, item: pytest.Item) -> list[str]:
        """The capability tags of `item` the binding does not meet (`a|b`: it claims neither)."""
        return sorted(need for need in _capabilities(item)
                      if not set(need.split("|")) & self.capabilities)

    def _known_lists(self) -> list[Mapping[str, str]]:
        """The known failures that apply to this run: in a run fuzzing at scale, the failures
        found only at scale come first."""
        lists = [self.binding.known_failures]
        if self.binding.fuzz_known_failures and _fuzzing_at_scale(self.config):
            lists.insert(0, self.binding.fuzz_known_failures)
        return lists

    def _known_failure(self, item: pytest.Item) -> tuple[str, bool] | None:
        """The reason `item` is listed for, and whether only its requirement's ID lists it."""
        # The most precise entry wins: a scenario's own reason over its requirement's.
        requirement = _requirement(item)
        keys = (_scenario_name(item), item.name, requirement)
        return next(((known[k], k == requirement) for known in self._known_lists() for k in keys
                     if k is not None and k in known), None)

    def _listed(self, result: ScenarioResult) -> bool:
        """Whether an applying known-failures entry lists `result` (by name, test id or ID)."""
        keys = (result.name, result.id, result.requirement)
        return any(k in known for known in self._known_lists() for k in keys)

    def _cannot_express(self, item: pytest.Item) -> str | None:
        """Why the library cannot express `item`'s setup, if the binding says so (the most
        precise entry wins, as for known failures)."""
        listed: Mapping[str, str] = getattr(self.binding, "cannot_express", {})
        keys = (_scenario_name(item), item.name, _requirement(item))
        return next((listed[k] for k in keys if k is not None and k in listed), None)

    def _resolved(self, complete: bool) -> list[ScenarioResult]:
        """The results, blocked scenarios attributed (`_attribution.resolve_blocked`) and, in a
        complete run, each requirement listed by ID whose every judged scenario passed failed as
        a stale entry."""
        results = _attribution.resolve_blocked(list(self.results.values()), complete)
        if not complete:
            return results
        stale = self._stale_requirements(results)
        return [r.model_copy(update={"verdict": "failed", "message": (
                    f"{_report.UNEXPECTED_PASS}: {r.requirement} is listed by ID and every one of "
                    f"its scenarios passed; remove it from the binding's known_failures")})
                if r.requirement in stale and r.verdict == "passed" else r for r in results]

    def _listed_requirements(self) -> set[str]:
        """The requirement IDs the applying known failures list."""
        return {name for known in self._known_lists() for name in known if name in catalogue()}

    def _stale_requirements(self, results: list[ScenarioResult]) -> set[str]:
        by_requirement: dict[str, list[str]] = {}
        for r in results:
            by_requirement.setdefault(r.requirement, []).append(r.verdict)
        return {rid for rid in self._listed_requirements()
                if "passed" in (verdicts := by_requirement.get(rid, []))
                and set(verdicts) <= {"passed", "not-claimed"}}

    def _check_known_failures(self, items: list[pytest.Item]) -> None:
        """Every name listed is a scenario or a requirement of the whole catalogue, whichever
        scenarios this run selected (a node id, `-k`): a list never goes stale, and never makes a
        rerun of one scenario a usage error."""
        if not items:
            return
        names = _catalogue_names(items) | set(catalogue())
        for attribute in ("known_failures", "fuzz_known_failures", "cannot_express"):
            stale = sorted(set(getattr(self.binding, attribute, {})) - names)
            if stale:
                closest = "; ".join(
                    f"{entry!r}: did you mean {', '.join(map(repr, near))}?"
                    if (near := difflib.get_close_matches(entry, names, n=3, cutoff=0.5))
                    else f"{entry!r}: nothing close"
                    for entry in stale)
                raise pytest.UsageError(
                    f"binding {self.binding.name!r} lists {attribute} that name no scenario or "
                    f"requirement: {stale}. Use a scenario name, an Outline row's test id "
                    f"(`test_x[row]`; a bare Outline id covers no row) or a requirement ID. "
                    f"Closest names: {closest}."
                )
        whole = _whole_core_requirements(items, set(getattr(self.binding, "cannot_express", {})))
        if whole:
            raise pytest.UsageError(
                f"binding {self.binding.name!r} lists in cannot_express every scenario of the core "
                f"requirement(s) {whole}: core requirements cannot be unclaimed, so a library is "
                "always judged on them. List only the scenarios whose setup its API cannot express, "
                "and let the others judge the requirement; what it does wrong is a known failure.")

    @pytest.hookimpl(tryfirst=True)
    def pytest_bdd_apply_tag(self, tag: str, function: Any) -> bool | None:
        """`@req:X`, `@capability:Y`, `@smoke` become the registered markers of the suite."""
        kind, _, value = tag.partition(":")
        if kind in ("req", "capability") and value:
            getattr(pytest.mark, f"conformance_{kind}")(value)(function)
            return True
        if tag == "smoke":
            pytest.mark.conformance_smoke(function)
            return True
        return None

    @pytest.hookimpl(tryfirst=True)
    def pytest_pycollect_makemodule(self, module_path: Path, parent: pytest.Collector) -> Any:
        """The suite module, with its checkout node id wherever it is installed: outside the rootdir
        pytest would give it an empty one (`::test_x`, which reruns nothing), and in a virtualenv
        inside the library's repository (nox's `.nox/<session>/lib/...`) one that names that
        virtualenv. The checkout's id reruns from any directory (see `_rerun_arg`)."""
        if module_path != _SUITE:
            return None
        return pytest.Module.from_parent(parent, path=module_path, nodeid=SUITE_ID)

    # -- running ----------------------------------------------------------------------------

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_protocol(self, item: pytest.Item, nextitem: pytest.Item | None) -> None:
        """Under xdist, each worker runs the smoke tier (unreported) before its first other
        scenario: a broken binding is then told the same way as in a serial run, whichever worker
        runs which scenario."""
        if self.smoke_checked or not hasattr(self.config, "workerinput"):
            return
        if item.get_closest_marker("conformance_smoke") or _requirement(item) is None:
            return
        self.smoke_checked = True
        smoke = [i for i in item.session.items if i.get_closest_marker("conformance_smoke")]
        for index, scenario in enumerate(smoke):
            following = smoke[index + 1] if index + 1 < len(smoke) else item
            runtestprotocol(scenario, log=False, nextitem=following)

    def pytest_runtest_logstart(self, nodeid: str) -> None:
        self.running = nodeid

    def pytest_runtest_setup(self, item: pytest.Item) -> None:
        smoke = item.get_closest_marker("conformance_smoke")
        if self.broken and _requirement(item) is not None and not smoke:
            pytest.skip(f"binding broken: {self.broken}")

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_call(self, item: pytest.Item) -> Generator[None, None, None]:
        try:
            return (yield)
        except Exception as exc:
            # Out of a binding call (whose own are BindingErrors): a step reading what the binding
            # returned. Said as what ran out, in the traceback, -ra and JUnit too.
            exhausted = _guard.ran_out("the scenario", exc)
            if exhausted is None or _requirement(item) is None:
                raise
            raise _guard.ResourceExhausted(exhausted) from exc

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_makereport(
        self, item: pytest.Item, call: pytest.CallInfo[None]
    ) -> Generator[None, pytest.TestReport, pytest.TestReport]:
        report = yield
        requirement = _requirement(item)
        if requirement is None:
            return report
        # Every phase's report: the teardown's holds the whole scenario's captured output, which
        # JUnit takes from it (`junit_logging`).
        report.sections = [(title, _text.terminal(content) if _unsafe(content) else content)
                           for title, content in report.sections]
        verdict, message, observed = _attribution.verdict(report, call, self.broken, requirement)
        if verdict is None:
            return report
        # Capped and made safe before any writer sees it: the terminal, JUnit, xdist's channel.
        message = _text.safe(message)
        if report.skipped and isinstance(report.longrepr, tuple) and (found := _template(item)):
            # pytest places a skip at the test function, pytest-bdd's own file in the machine's
            # Python installation: `-ra` then names a folder of that machine. The scenario's place
            # in the catalogue says where it is, on any machine.
            place = f"features/{Path(found.feature.filename).name}"
            report.longrepr = (place, found.line_number, report.longrepr[2])
        _tidy_longrepr(report)
        error = call.excinfo.value if call.excinfo is not None and report.when == "call" else None
        blocked_by = _attribution.blocked_by(error, requirement)
        world = item.stash.get(WORLD, None)
        if isinstance(error, _guard.ImplementationHung) and world is not None:
            # A call that hung before its precondition could be checked: the requirement the
            # scenario names for that call judges the hang, not this one.
            steps = [str(getattr(step, "name", "")) for step in getattr(_template(item), "steps", ())]
            blocked_by = _attribution.precondition_of_call(steps, len(world.outcomes) + 1, requirement)
            if blocked_by is not None:
                verdict, message, observed = "blocked", f"blocked by {blocked_by}: {message}", ""
        if blocked_by is not None:
            # Not a failure of its own: the run fails (or not) on the requirement that blocked it.
            report.outcome = "skipped"
            report.longrepr = (str(item.path), item.location[1] or 0, f"Skipped: {message}")
        smoke = item.get_closest_marker("conformance_smoke")
        # A smoke scenario blocked by another requirement's failure is the library's only where
        # the binding declares it (a known failure, its reason verified): else a binding whose
        # every run ends at once would pass for a library that fails one requirement.
        undeclared = verdict == "blocked" and not observed
        if (verdict in ("failed", "errored") or undeclared) and smoke and not self.broken:
            self.broken = f"smoke scenario {_scenario_name(item)!r} {verdict}"
        if smoke and verdict == "blocked" and not undeclared and world is not None:
            self.unread_format = self.unread_format or world.unread_format
        feature, name = _feature_and_name(item)
        result = ScenarioResult(
            id=item.nodeid.split("::", 1)[-1],
            feature=feature,
            name=name,
            requirement=requirement,
            verdict=verdict,
            message=message,
            blocked_by=blocked_by,
            observed=_report.capped(observed),
            auxiliary_calls=_auxiliary_calls(world),
        )
        report.user_properties.append((_PROPERTY, result.model_dump_json()))
        if not any(key == "verdict" for key, _ in item.user_properties):
            # On the item, so the teardown report carries them too: JUnit XML writes its properties.
            item.user_properties.append(("verdict", verdict))
            if verdict != "passed" and message:
                item.user_properties.append(("reason", message))
        return report

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        properties = dict(report.user_properties)
        scenario = properties.get("scenario")
        if scenario is not None:
            self.locations[report.nodeid] = str(scenario)
            _junit_classname(self.config, report, str(scenario).partition(".feature")[0])
        for key, value in report.user_properties:
            if key != _PROPERTY:
                continue
            result = ScenarioResult.model_validate_json(str(value))
            earlier = self.results.get(report.nodeid)
            if earlier is None or earlier.verdict == "passed":
                self.results[report.nodeid] = result
            if self.broken is None and result.message.startswith(_attribution.NOT_RUN):
                self.broken = result.message.removeprefix(_attribution.NOT_RUN).removesuffix(")")
            self._write(complete=False)

    def pytest_keyboard_interrupt(self, excinfo: pytest.ExceptionInfo[BaseException]) -> None:
        running = self.running
        typename = excinfo.typename
        if type(excinfo.value).__module__.startswith("xdist"):
            # pytest-xdist's Interrupted: a worker stopped on a KeyboardInterrupt, in its scenario.
            running, typename = self.interrupted_in, "KeyboardInterrupt in a pytest-xdist worker"
        where = f" in {running.split('::', 1)[-1]}" if running else ""
        self.stopped_by = f"interrupted by {typename}{where}"

    # -- reporting --------------------------------------------------------------------------

    def report(self, complete: bool = True) -> Report:
        results = self._resolved(complete)
        b = self.binding
        verdicts = _report.requirement_verdicts(results, catalogue())
        if not complete:
            # Never judge a requirement on part of its scenarios.
            selected = self.selection()
            unfinished = {req for nodeid, (req, _, _) in (selected or {}).items()
                          if nodeid not in self.results}
            verdicts = {rid: v for rid, v in verdicts.items()
                        if selected is not None and rid not in unfinished}
        return Report(
            binding=_report.BindingInfo(
                name=b.name, version=_safe_version(b), capabilities=sorted(self.capabilities),
                not_claimed=dict(sorted(b.not_claimed.items())), contract_version=b.contract_version,
                cannot_express=dict(sorted(getattr(b, "cannot_express", {}).items())),
                dependencies=_report.dependency_versions(b),
                auxiliary_calls=dict(b.auxiliary_calls), parity=dict(b.parity),
                digest=self.digest,
                run_outside_ci=self.config.getoption("conformance_run_outside_ci"),
            ),
            suite_version=_suite_version(),
            generated=datetime.now(UTC).isoformat(timespec="seconds"),
            requirements=verdicts,
            levels=_report.levels(verdicts, catalogue()),
            conforms=_report.conforms_if_judged(verdicts, self.capabilities, catalogue())
            if complete else None,
            judged=_report.judged(results, verdicts, self._listed_requirements()),
            reasons=_report.requirement_reasons(results, verdicts),
            scenarios=results,
            complete=complete,
            stopped_by=None if complete else (
                self.stopped_by or "the run had not finished when this report was written: the "
                "process ended early, or is still running"),
        )

    @pytest.hookimpl(tryfirst=True)  # before JUnit XML writes its file
    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        self.exitstatus = int(exitstatus)
        if session.shouldstop and not self.stopped_by:
            self.stopped_by = f"stopped early: {session.shouldstop}"
        if session.shouldfail and not self.stopped_by:
            self.stopped_by = f"stopped early: {session.shouldfail}"
        selected = self.selection() or {}
        never_ran = [nodeid for nodeid in selected if nodeid not in self.results]
        if never_ran and not self.stopped_by and not hasattr(self.config, "workerinput"):
            # pytest-xdist stops replacing workers that end in a scenario after a few, and then the
            # session ends without a word to the plugin.
            why = (f": {self.crashed_workers} worker processes ended in a scenario, and "
                   "pytest-xdist stops starting new ones after a few" if self.crashed_workers else "")
            self.stopped_by = f"{len(never_ran)} of the {len(selected)} selected scenarios never ran{why}"
        self.complete = self.stopped_by is None and exitstatus != pytest.ExitCode.INTERRUPTED
        self._write(self.complete)
        if not hasattr(self.config, "workerinput") and self._report_blocked_by_passed():
            # A scenario blocked by a requirement that passed is a failure of its own; so is a
            # passed scenario of a requirement listed by ID whose every scenario passed.
            if exitstatus == pytest.ExitCode.OK:
                session.exitstatus = pytest.ExitCode.TESTS_FAILED
        summary = os.environ.get("GITHUB_STEP_SUMMARY")
        if summary and not hasattr(self.config, "workerinput"):
            # GitHub Actions shows this file on the run's page: the requirement-by-verdict table.
            # Its folder is made if missing, as the reports' are.
            Path(summary).parent.mkdir(parents=True, exist_ok=True)
            with open(summary, "a", encoding="utf-8") as out:
                out.write(_report.markdown(self.report(self.complete), catalogue()) + "\n")

    def _report_blocked_by_passed(self) -> bool:
        """Re-report, as failed, each scenario reported as blocked by a requirement that passed,
        and each passed one of a stale requirement entry (known only once every scenario ran): in
        the terminal's tally and summary, and in JUnit XML. Whether there was any."""
        nodeids = list(self.results)
        resolved = self._resolved(self.complete)
        failed = {nodeid: r.message for nodeid, r in zip(nodeids, resolved, strict=True)
                  if r.verdict == "failed" and self.results[nodeid].verdict in ("blocked", "passed")}
        if not failed:
            return False
        terminal = self.config.pluginmanager.get_plugin("terminalreporter")
        stats: dict[str, list[Any]] = getattr(terminal, "stats", {})
        for kind, report in [(k, r) for k in ("skipped", "passed", "xpassed")
                             for r in stats.get(k, []) if getattr(r, "nodeid", None) in failed]:
            stats[kind].remove(report)
            report.outcome = "failed"
            report.longrepr = _text.terminal(failed[report.nodeid])
            stats.setdefault("failed", []).append(report)
        _junit_failures(self.config, {nodeid.rpartition("::")[2]: message
                                      for nodeid, message in failed.items()})
        return True

    def _write(self, complete: bool) -> None:
        """Write the reports asked for; rewritten after every scenario, so that a process killed
        in a scenario (`os._exit` in a binding) leaves a valid partial report."""
        if hasattr(self.config, "workerinput"):
            return
        json_path = self.config.getoption("conformance_json")
        md_path = self.config.getoption("conformance_markdown")
        if not json_path and not md_path:
            return
        report = self.report(complete)
        writers: dict[str, Callable[[], None]] = {}
        if json_path:
            writers[json_path] = lambda: _report.write_json(report, Path(json_path))
        if md_path:
            writers[md_path] = lambda: _report.write_atomically(
                Path(md_path), _report.markdown(report, catalogue()))
        for path, write in writers.items():
            try:  # each on its own: one that cannot be written (a full disk) loses none of the others
                write()
            except OSError as exc:
                if path not in self.unwritable:
                    self.unwritable.add(path)
                    shown = _report_paths.shown(self.config, path)
                    sys.stderr.write(_text.terminal(
                        f"the report {shown} could not be written: {exc.strerror or exc}") + "\n")

    def leaked_threads(self) -> list[threading.Thread]:
        """Threads that are not daemons, started during the run and still alive."""
        return [t for t in threading.enumerate()
                if t.is_alive() and not t.daemon and t is not threading.main_thread()
                and t not in self.threads_before]

    @pytest.hookimpl(trylast=True)
    def pytest_unconfigure(self, config: pytest.Config) -> None:
        """A thread the binding leaked would keep the process alive for ever: end it once the
        reports are written and the output flushed (not in an xdist worker, whose controller
        still reads from it)."""
        _freeze_heap(collect=True)
        if self.selection_file is not None:
            shutil.rmtree(self.selection_file.parent, ignore_errors=True)
        if hasattr(config, "workerinput") or not self.leaked_threads():
            return
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(self.exitstatus)

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        if hasattr(self.config, "workerinput"):
            return
        report = self.report(self.complete)
        tr = terminalreporter
        tr.section(_text.terminal(f"conformance of {report.binding.name} {report.binding.version}"))
        for rid in report.requirements:
            reason = report.reasons.get(rid)
            why = _report.one_line(reason, 100) if reason else ""
            level = report.levels.get(rid, "must").upper()
            tr.write_line(_text.terminal(
                f"{rid:<9} {level:<6} {_report.verdict_text(report, rid):<20} {why}".rstrip()))
        tally = ", ".join(f"{n} {v}" for v, n in sorted(_report.counts(report).items()))
        tr.write_line(f"requirements: {tally or 'none ran'}")
        if report.requirements:
            tr.write_line(_text.terminal(_report.conformance_line(report, catalogue())),
                          green=report.conforms is True,
                          red=report.conforms is False)
        if self.broken:
            tr.write_line(_text.terminal(
                f"the binding looks broken ({self.broken}): no other scenario ran. Fix the binding "
                "or harness first; if the library itself fails that scenario by design, list it in "
                "known_failures with its reason"), red=True)
        if self.stopped_by:
            tr.write_line(_text.terminal(f"partial report: {self.stopped_by}"), yellow=True)
        self._suggest_known_failures(tr, report)
        leaked = self.leaked_threads()
        if leaked:
            names = _text.name(", ".join(repr(t.name) for t in leaked))
            tr.write_line(f"the binding left {len(leaked)} non-daemon thread(s) running: {names}; "
                          "the process exits without waiting for them", yellow=True)
        if os.environ.get("GITHUB_ACTIONS") == "true":
            for line in self.annotations():
                tr.write_line(line)

    def _suggest_known_failures(self, tr: Any, report: Report) -> None:
        """After a failing run, the `known_failures` entries that would list what failed."""
        # Under pytest's --runxfail the listed known failures run as plain failures: they are
        # listed already, so only the others are suggested.
        listed = [r for r in report.scenarios if self._listed(r)]
        names = _known_failures.entries(r for r in report.scenarios if not self._listed(r))
        if self.config.getoption("runxfail") and any(r.verdict == "failed" for r in listed):
            tr.write_line(f"--runxfail: {sum(r.verdict == 'failed' for r in listed)} scenario(s) "
                          "listed in known_failures ran as plain failures, to show what they observe")
        if not names:
            return
        impl = str(self.config.getoption("impl"))
        harness = impl in HARNESSES or impl.startswith(CMD)
        where = "in the harness's welcome" if harness else "in the binding class"
        tr.write_line(_text.terminal(
            f"known_failures that would list what failed ({where}; replace each reason with what "
            "the library does and where in its source, or fix the binding if it is its fault):"))
        entries = _known_failures.as_json(names) if harness else _known_failures.as_python(names)
        for line in entries.splitlines():
            tr.write_line(_text.terminal(line))

    def annotations(self) -> list[str]:
        """A GitHub Actions `::error` line for each scenario that failed or errored, at the
        binding's file in the library's repository (see `_annotations`)."""
        from conformance._annotations import error_lines

        return error_lines(((result, self.locations.get(nodeid, result.feature))
                            for nodeid, result in self.results.items()), self.binding)


def _auxiliary_calls(world: object) -> dict[str, int]:
    """How many auxiliary model calls of each kind the scenario's runs made."""
    tally: dict[str, int] = {}
    for calls in getattr(world, "calls_per_run", ()):
        for c in calls:
            if c.kind == "auxiliary":
                tally[c.auxiliary or "unnamed"] = tally.get(c.auxiliary or "unnamed", 0) + 1
    return tally


def _tidy_longrepr(report: pytest.TestReport) -> None:
    """Make a failure text (terminal, JUnit, xdist's channel) safe: each line capped to a message's
    limit and made `_text.terminal` (no lone surrogate, escape or workflow command from a binding's
    message), the whole to a few times that. A short, plain one keeps pytest's own formatting; so
    does an unsafe one, cut in place where pytest's structure allows."""
    longrepr = report.longrepr
    if isinstance(longrepr, tuple):  # a skip's (path, line, reason)
        report.longrepr = (longrepr[0], longrepr[1], _text.terminal(str(longrepr[2])))
        return
    # pytest prints a crash message raw, whole lines and all, in `-ra`'s summary when it runs on CI.
    crashes = [crash.message for _, crash, _ in getattr(longrepr, "chain", ()) if crash is not None]
    if longrepr is None or not (_unsafe(str(longrepr)) or any(map(_unsafe, crashes))):
        return
    tidy = _text.terminal
    try:  # pytest's own structure, cut in place: the terminal and JUnit keep the crash message
        for traceback, crash, _ in getattr(longrepr, "chain", ()):
            for entry in traceback.reprentries:
                if getattr(entry, "lines", None):
                    entry.lines[:] = [tidy(line) for line in entry.lines]
                if getattr(entry, "reprfuncargs", None):
                    entry.reprfuncargs.args[:] = [(k, tidy(str(v))) for k, v in entry.reprfuncargs.args]
                if getattr(entry, "reprlocals", None):
                    entry.reprlocals.lines[:] = [tidy(line) for line in entry.reprlocals.lines]
                if getattr(entry, "reprfileloc", None):
                    entry.reprfileloc.message = tidy(entry.reprfileloc.message)
            if crash is not None:
                crash.message = tidy(crash.message)
        for _, _, description in getattr(longrepr, "chain", ()):
            if description and _unsafe(description):
                raise ValueError("an unsafe chain description")  # not settable in place: the text
        sections = getattr(longrepr, "sections", [])
        sections[:] = [(t, tidy(c), sep) for t, c, sep in sections]
    except (AttributeError, TypeError, ValueError):
        pass
    text = str(longrepr)
    if _unsafe(text):
        lines = "\n".join(tidy(line) for line in text.splitlines())
        report.longrepr = _text.capped(lines, _text.MESSAGE_LIMIT * _LONGREPR_LINES)


def _unsafe(text: str) -> bool:
    lines = text.splitlines()
    return (len(text) > (_text.MESSAGE_LIMIT + 40) * _LONGREPR_LINES
            or any(_text.terminal(line) != line for line in lines))


def _record_junit_properties(item: pytest.Item) -> None:
    """What JUnit XML shows of a scenario, as pytest's own test properties (`record_property`)."""
    template = _template(item)
    if template is not None:
        scenario = f"{Path(template.feature.filename).name}:{template.line_number}"
        item.user_properties.append(("scenario", scenario))
    item.user_properties.append(("requirement", _requirement(item)))
    requirement = catalogue().get(str(_requirement(item)))
    item.user_properties.append(("level", requirement.level if requirement else "must"))
    item.user_properties.append(("capability", ", ".join(sorted(_capabilities(item))) or "core"))


def _junit_failures(config: pytest.Config, messages: dict[str, str]) -> None:
    """Turn the `skipped` of each JUnit test case named in `messages` into a `failure` with its
    message; pytest writes the file at the session's end, from the test cases it kept."""
    from xml.etree import ElementTree

    from _pytest.junitxml import bin_xml_escape, xml_key

    xml = config.stash.get(xml_key, None)
    if xml is None:
        return
    for reporter in xml.node_reporters_ordered:
        case = reporter.to_xml()
        skipped = case.find("skipped")
        message = messages.get(str(case.get("name")))
        if message is None or skipped is None:
            continue
        case.remove(skipped)
        failure = ElementTree.SubElement(case, "failure", message=bin_xml_escape(message))
        failure.text = bin_xml_escape(message)
        xml.stats["skipped"] -= 1
        xml.stats["failure"] += 1


def _junit_classname(config: pytest.Config, report: pytest.TestReport, feature: str) -> None:
    """The test case's classname in JUnit XML: the feature (`tool_args`), not the suite module."""
    from _pytest.junitxml import xml_key

    xml = config.stash.get(xml_key, None)
    if xml is None:
        return
    classname = f"{xml.prefix}.{feature}" if xml.prefix else feature
    # Kept by pytest as a user-set attribute when it fills in the test case (see record_xml_attribute).
    xml.node_reporter(report).attrs["classname"] = classname


def _template(item: pytest.Item) -> Any:
    from pytest_bdd.scenario import scenario_wrapper_template_registry

    obj = getattr(item, "obj", None)
    return scenario_wrapper_template_registry.get(obj) if obj is not None else None


def _scenario_name(item: pytest.Item) -> str:
    template = _template(item)
    return str(template.name) if template is not None else item.name


def _feature_and_name(item: pytest.Item) -> tuple[str, str]:
    """The feature file's name and the scenario's name of a suite item."""
    template = _template(item)
    return (Path(template.feature.filename).name if template else ""), _scenario_name(item)


def _scenarios(items: list[pytest.Item]) -> Iterator[tuple[str, Any, list[str]]]:
    """Every scenario of the suite module of `items`, collected whole whichever of its tests a run
    selects: its test name, its pytest-bdd template and its Outline rows' test ids (none for a
    plain scenario)."""
    from pytest_bdd.scenario import collect_example_parametrizations, scenario_wrapper_template_registry

    modules = {id(m): m for item in items if (m := item.getparent(pytest.Module)) is not None}
    for module in modules.values():
        for attr, obj in vars(module.obj).items():
            template = scenario_wrapper_template_registry.get(obj) if callable(obj) else None
            if template is not None:
                rows = collect_example_parametrizations(template) or []
                yield attr, template, [f"{attr}[{row.id}]" for row in rows]


def _catalogue_names(items: list[pytest.Item]) -> set[str]:
    """Every scenario's name and test name (an outline's rows too) in the suite module of `items`."""
    names: set[str] = set()
    for attr, template, rows in _scenarios(items):
        # An Outline's bare test id names no test: only its rows' ids (`attr[row]`) do.
        names |= {str(template.name)} | (set(rows) if rows else {attr})
    return names


def _whole_core_requirements(items: list[pytest.Item], listed: set[str]) -> list[str]:
    """The core requirements of which `listed` covers every scenario (by the requirement's ID, a
    scenario's name, or every row of an Outline), in the suite module of `items`."""
    if not listed:
        return []
    covered: dict[str, list[bool]] = {}
    for attr, template, rows in _scenarios(items):
        rid = next((t.partition(":")[2] for t in template.tags if t.startswith("req:")), None)
        if rid is None:
            continue
        every_row = bool(rows) and all(row in listed for row in rows)
        covered.setdefault(rid, []).append(
            rid in listed or str(template.name) in listed or attr in listed or every_row)
    requirements = catalogue()
    return sorted(rid for rid, scenarios in covered.items()
                  if all(scenarios) and rid in requirements and requirements[rid].profile == "core")


def _fuzzing_at_scale(config: pytest.Config) -> bool:
    """Whether ARGS-1 sends more generated arguments than the feature's default in this run."""
    from conformance._fuzz import DEFAULT_EXAMPLES, example_count

    return example_count(config, DEFAULT_EXAMPLES) > DEFAULT_EXAMPLES


def _requirement(item: pytest.Item) -> str | None:
    mark = item.get_closest_marker("conformance_req")
    return str(mark.args[0]) if mark is not None else None


def _in_another_process(binding: Binding) -> bool:
    process = sys.modules.get("conformance._process")  # not imported: no binding can be one
    return process is not None and isinstance(binding, process.ProcessBinding)


def http_profile(item: pytest.Item, binding: Binding) -> _http.HttpProfile:
    """The endpoint an `http` scenario's calls go to, as the cassette options say."""
    from conformance import _cassettes

    config = item.config
    given = config.getoption("conformance_cassette_dir")
    root = Path(given) if given else _cassettes.bundled_dir()
    given_mode = config.getoption("conformance_cassettes")
    # A cassette patches the HTTP client in this process; a harness process (or an isolated
    # binding's worker) sends its requests from its own, so it always talks to the live server.
    mode = "off" if _in_another_process(binding) else _http.resolve(given_mode, root, binding.name)
    template = _template(item)
    feature = Path(template.feature.filename).stem if template is not None else "unknown"
    return _http.HttpProfile(mode, _cassettes.cassette_path(root, binding.name, feature, item.name))


def _capabilities(item: pytest.Item) -> set[str]:
    return {str(mark.args[0]) for mark in item.iter_markers("conformance_capability")}


def _safe_version(binding: Binding) -> str:
    try:
        return str(binding.version)
    except Exception as exc:  # a broken binding still gets a report
        return f"unknown ({type(exc).__name__})"


def _suite_version() -> str:
    try:
        return version("react-conformance")
    except PackageNotFoundError:
        return "unknown"


# -- the plugin's entry: inert unless --impl is given -------------------------------------------


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config: pytest.Config) -> None:
    name = config.getoption("impl", default=None)
    if name is None:
        return
    if not name.strip():
        raise pytest.UsageError(
            "--impl was given an empty name: name a binding (an entry point of "
            "react_conformance.bindings), module:attr, or cmd:<command line>."
        )
    _report_paths.resolve(config)
    binding = load_binding(name, timeout=config.getoption("conformance_timeout"),
                           transcript=config.getoption("harness_debug"),
                           isolate=config.getoption("conformance_isolate"))
    if _in_another_process(binding) and config.getoption("conformance_cassettes") in ("record",
                                                                                       "replay"):
        raise pytest.UsageError(
            f"--impl {name}: --conformance-cassettes={config.getoption('conformance_cassettes')} "
            "needs the binding in this process (a cassette patches this process's HTTP client); a "
            "harness process or --conformance-isolate runs http scenarios against the live "
            "loopback server (--conformance-cassettes=off)."
        )
    config.addinivalue_line("markers", "conformance_req(id): the requirement a scenario checks")
    config.addinivalue_line("markers", "conformance_capability(name): a capability it needs "
                                       "(`a|b`: either)")
    config.addinivalue_line("markers", "conformance_smoke: runs first; failing means a broken binding")
    if config.args_source != pytest.Config.ArgsSource.ARGS:
        config.args = [str(_SUITE)]
    else:
        config.args = [_rerun_arg(config, arg) for arg in config.args]
    if config.getoption("hypothesis_profile", None):
        from conformance._fuzz import register_fuzz_profile

        register_fuzz_profile()  # before hypothesis's plugin loads the profile named
    from conformance._steps.run import fuzz_seed

    fuzz_seed(config.getoption("conformance_seed"))  # a bad seed is a usage error before any test
    examples = config.getoption("conformance_examples")
    if examples is not None and examples < 1:
        raise pytest.UsageError("--conformance-examples must be at least 1.")
    from conformance._bdd import cache_step_lookup

    cache_step_lookup()
    _freeze_heap()
    config.stash[_SESSION] = session = _Session(config, binding)
    config.pluginmanager.register(session, "react-conformance-session")
    for module in MODULES:
        config.pluginmanager.register(importlib.import_module(module), module)


def _freeze_heap(collect: bool = False) -> None:
    """Move every object alive now (modules, classes, pydantic schemas, collected items: all live
    until the process ends) out of the garbage collector's reach. Each full collection otherwise
    walks them all, about 0.1 s with the peers installed: pytest runs five at the end of a session
    (looking for unraisable exceptions), hypothesis one before its first example, and Python some
    during the run. Objects made afterwards are collected as usual; what little cyclic garbage
    start-up left is kept until the process ends. At the end of the run (`collect`), one collection
    first: the garbage the scenarios left is collected (and its unraisable exceptions reported)
    once, not five times over everything imported on the way (vcrpy, hypothesis)."""
    import gc

    if collect:
        gc.collect()
    gc.freeze()


def _rerun_arg(config: pytest.Config, arg: str) -> str:
    """A node id of the suite (`conformance/_suite/test_conformance.py::test_x`) copied from a run
    elsewhere, pointed at the installed suite when no such file is here."""
    path, sep, rest = arg.partition("::")
    if path != SUITE_ID or (config.invocation_params.dir / path).exists():
        return arg
    return f"{_SUITE}{sep}{rest}"


_SESSION = pytest.StashKey[_Session]()


def session_of(config: pytest.Config) -> _Session:
    """The plugin's state for this run (only present with --impl)."""
    return config.stash[_SESSION]
