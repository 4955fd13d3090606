"""Bindings as third parties write them, against each contract version (tests/suite/test_contract.py)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import ClassVar

from conformance.bindings.reference import ReferenceBinding


class VersionOne(ReferenceBinding):
    """A binding exactly as contract version 1 had it: no contract_version, no not_claimed, the
    version-1 capability names."""

    name = "v1-reference"
    contract_version = 1
    capabilities = frozenset({"tool-errors", "tool-args", "max-steps-extract", "max-steps-error",
                              "stop-reason", "lm-retry", "human-in-the-loop", "async", "streaming",
                              "http", "adapter-override"})
    not_claimed: ClassVar[Mapping[str, str]] = {}


class VersionOneClaimingSignature(VersionOne):
    """Forgot `contract_version` while claiming a capability of a later version."""

    capabilities = frozenset({"signature", "async"})


class VersionTwoClaimingToolErrors(ReferenceBinding):
    """Declares version 2 but claims a capability that is core there."""

    capabilities = frozenset({"signature", "tool-errors"})


class UnclaimsTheCore(ReferenceBinding):
    """Tries to unclaim a core requirement."""

    not_claimed: ClassVar[Mapping[str, str]] = {"tool-errors": "we let tools crash"}


class FromTheFuture(ReferenceBinding):
    """Written against a contract this suite does not know yet."""

    contract_version = 4


class ClaimsAndUnclaims(ReferenceBinding):
    """Lists a claimed capability as not claimed too."""

    not_claimed: ClassVar[Mapping[str, str]] = {"async": "no"}
