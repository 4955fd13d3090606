"""Reference ReActs whose HTTP client is broken the way a library's could be: the http scenarios
must report NET-1 as failed for each. Used as `--impl tests.suite.http_bindings:NAME`."""

from __future__ import annotations

from typing import Any

import reference
from conformance import CallRequest, Outcome, ScriptedModel
from conformance.bindings.reference import ReferenceBinding, _Agent, _failed, _succeeded


class _RetriesRefusals(reference.LM):
    """Sends a request refused with 400 or 401 once more, as if it were transient."""

    def complete(self, messages: list[dict[str, str]]) -> str:
        try:
            return super().complete(messages)
        except reference.LMError as exc:
            if exc.status not in (400, 401):
                raise
            return super().complete(messages)


class _AmendsRetries(reference.LM):
    """Retries a failed request with a note appended, instead of sending it again unchanged."""

    def complete(self, messages: list[dict[str, str]]) -> str:
        once = reference.LM(self.model, base_url=self.url.removesuffix("/chat/completions"),
                            max_retries=0, backoff=0.0)
        try:
            return once.complete(messages)
        except reference.LMError:
            return super().complete([*messages, {"role": "user", "content": "(retrying)"}])


class _BrokenClient(ReferenceBinding):
    lm: type[reference.LM]

    def run(self, agent: object, call: CallRequest, model: ScriptedModel) -> Outcome:
        assert isinstance(agent, _Agent) and call.base_url, "only for http scenarios"
        lm = self.lm("scripted", base_url=call.base_url, backoff=0.0)
        inputs: dict[str, Any] = dict(call.inputs)
        with reference.context(lm=lm):
            try:
                prediction = agent.react.forward(**inputs)
            except Exception as exc:
                return _failed(agent, exc)
        return _succeeded(agent, prediction)


class RetriesRefusals(_BrokenClient):
    """Its client retries a 400 and a 401."""

    lm = _RetriesRefusals


class AmendsRetries(_BrokenClient):
    """Its client changes the request it retries."""

    lm = _AmendsRetries
