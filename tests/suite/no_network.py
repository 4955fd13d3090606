"""A plugin for child runs of the suite (`-p tests.suite.no_network`): the scripted server cannot
start and no socket can connect, so whatever passes was answered from cassettes."""

from __future__ import annotations

import socket
from typing import Any

import pytest

from conformance import server


def _no_server(self: object) -> Any:
    raise AssertionError("the scripted server was started, but this run must replay cassettes only")


def _no_connect(self: socket.socket, address: object) -> None:
    raise ConnectionRefusedError(f"the network is off in this run: connect to {address!r} refused")


def pytest_configure(config: pytest.Config) -> None:
    server.ScriptedServer.__enter__ = _no_server  # type: ignore[method-assign]
    socket.socket.connect = _no_connect  # type: ignore[method-assign]
