"""Bindings that say the library's API cannot express a scenario's setup (`Binding.cannot_express`),
for tests/suite/test_cannot_express.py."""

from __future__ import annotations

from collections.abc import Mapping
from typing import ClassVar

from conformance.bindings.reference import ReferenceBinding

NO_TOOL_EDIT = "An edit that names no tool never runs anything, and the person or the agent is told"
REASON = "its approval API takes new args only, never another tool's name"


class CannotNameAnotherToolInAnEdit(ReferenceBinding):
    """Lists one HITL-7 scenario by name: HITL-7 passes on the others, k of n."""

    cannot_express: ClassVar[Mapping[str, str]] = {NO_TOOL_EDIT: REASON}


class CannotExpressAnyEdit(ReferenceBinding):
    """Lists HITL-7 by ID: every one of its scenarios is not claimed."""

    cannot_express: ClassVar[Mapping[str, str]] = {"HITL-7": "edits are not part of its API"}


class GivesNoReason(ReferenceBinding):
    cannot_express: ClassVar[Mapping[str, str]] = {NO_TOOL_EDIT: " "}


class NamesNoScenario(ReferenceBinding):
    cannot_express: ClassVar[Mapping[str, str]] = {NO_TOOL_EDIT.replace("tool", "tol"): REASON}


class ListsItTwice(ReferenceBinding):
    cannot_express: ClassVar[Mapping[str, str]] = {NO_TOOL_EDIT: REASON}
    known_failures: ClassVar[Mapping[str, str]] = {NO_TOOL_EDIT: "it fails"}


class CannotExpressACoreRequirement(ReferenceBinding):
    """Lists a core requirement by ID: refused, core cannot be unclaimed."""

    cannot_express: ClassVar[Mapping[str, str]] = {"LOOP-2": "it has no finish"}


class CannotExpressAnyScenarioOfACoreRequirement(ReferenceBinding):
    """Lists every scenario of a core requirement by name: refused as the ID is."""

    cannot_express: ClassVar[Mapping[str, str]] = {
        "Choosing finish stops the loop at once": "it has no finish",
        "Choosing finish first runs no tool at all": "it has no finish",
    }


class CannotExpressOneScenarioOfACoreRequirement(ReferenceBinding):
    """Lists one scenario of a core requirement: allowed, the other still judges it."""

    cannot_express: ClassVar[Mapping[str, str]] = {"Choosing finish first runs no tool at all": REASON}
