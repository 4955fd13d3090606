"""The `http` profile: one scenario's model behind a base URL, live on loopback or from a cassette.

`--conformance-cassettes` picks how the endpoint answers:

- `off`: a `ScriptedServer` on loopback answers every request from the script; no cassette is used.
- `record`: the same, and every exchange is written to the scenario's cassette (replacing it).
- `replay`: no server runs; vcrpy answers every request from the scenario's cassette
  (`record_mode="none"`), and each replayed request is still logged with the script, so every check
  of the scenario holds. A request the cassette does not hold fails the scenario, naming it.
- `auto` (the default): `replay` when the cassette directory has a folder for the binding, else `off`.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import ExitStack
from pathlib import Path
from typing import TYPE_CHECKING, Literal, TypeVar

from conformance._guard import BindingError, CheckFailed
from conformance._model import ScriptedModel

if TYPE_CHECKING:
    # Imported when an http scenario opens its endpoint: the server imports httpx, the cassettes
    # vcrpy, and a run (or an xdist controller) with no http scenario needs neither.
    from conformance._cassettes import ReplayCassette
    from conformance.server import ScriptedServer

T = TypeVar("T")
Mode = Literal["auto", "off", "record", "replay"]
MODES: tuple[Mode, ...] = ("auto", "off", "record", "replay")
#: Where a replayed client is pointed: nothing listens there, so a request vcrpy misses fails fast.
REPLAY_URL = "http://127.0.0.1:9/v1"


class MissingCassette(BindingError):
    """Replay was asked for a scenario that has no cassette: a setup error, not a verdict."""


def resolve(mode: Mode, root: Path, binding: str) -> Literal["off", "record", "replay"]:
    """The mode a run uses: `auto` replays when `root` has cassettes for `binding`."""
    if mode == "auto":
        return "replay" if (root / binding).is_dir() else "off"
    return mode


class HttpProfile:
    """The endpoint of one scenario: opened when the scenario starts, closed when it ends."""

    def __init__(self, mode: Literal["off", "record", "replay"], cassette: Path) -> None:
        self.mode = mode
        self.cassette = cassette
        self._stack = ExitStack()
        self._server: ScriptedServer | None = None
        self._replay: ReplayCassette | None = None
        from conformance._cassettes import replay_cassette, use_cassette
        from conformance.server import ScriptedServer

        if mode == "replay":
            if not cassette.is_file():
                raise MissingCassette(
                    # binding/feature/scenario only: a report must not carry this machine's paths
                    f"no cassette for this scenario: {Path(*cassette.parts[-3:])} does not exist "
                    "in the cassette directory (--conformance-cassette-dir). Record it with "
                    "--conformance-cassettes=record (for the bundled bindings: nox -s cassettes), or "
                    "run against the live loopback server with --conformance-cassettes=off."
                )
            self._replay = self._stack.enter_context(use_cassette(cassette, "none", replay_cassette()))
        else:
            self._server = self._stack.enter_context(ScriptedServer(ScriptedModel()))
            if mode == "record":
                cassette.parent.mkdir(parents=True, exist_ok=True)
                self._stack.enter_context(use_cassette(cassette, "all"))

    @property
    def base_url(self) -> str:
        """The base URL the binding points the library's client at."""
        return self._server.url if self._server is not None else REPLAY_URL

    def run(self, operation: Callable[[ScriptedModel], T], model: ScriptedModel) -> T:
        """`operation(model)` with the endpoint answering from `model`."""
        if self._server is not None:
            self._server.model = model
            return operation(model)
        assert self._replay is not None
        self._replay.model, self._replay.unmatched = model, []
        result = operation(model)
        if self._replay.unmatched:
            raise CheckFailed(
                f"the implementation sent a model request that the cassette {self.cassette.name} does "
                "not hold: its request changed since the cassette was recorded. If the change is "
                "intended, re-record (--conformance-cassettes=record; nox -s cassettes for the "
                "bundled bindings) and review the cassette diff.\n\n" + self._replay.unmatched[0]
            )
        return result

    def close(self) -> None:
        """Stop the server; in `record` mode write the cassette (scrubbed, and never if it still holds
        a credential: the scenario fails instead)."""
        self._stack.close()
