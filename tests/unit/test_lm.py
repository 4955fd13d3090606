"""The HTTP LM: retries what is transient with backoff, nothing else, and fails once, clearly."""

from __future__ import annotations

from collections.abc import Callable

import httpx
import pytest

from reference import LM, LMError

Reply = Callable[[httpx.Request], httpx.Response]
OK = httpx.Response(200, json={"choices": [{"message": {"role": "assistant", "content": "hi"}}]})


def _lm(
    *replies: httpx.Response | Exception, max_retries: int = 3
) -> tuple[LM, list[float], list[httpx.Request]]:
    queue = list(replies)
    sleeps: list[float] = []
    seen: list[httpx.Request] = []

    def handle(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        reply = queue.pop(0)
        if isinstance(reply, Exception):
            raise reply
        return reply

    client = httpx.Client(transport=httpx.MockTransport(handle))
    lm = LM("m", base_url="http://model.test/v1/", api_key="k", max_retries=max_retries,
            backoff=0.5, sleep=sleeps.append, http_client=client)
    return lm, sleeps, seen


def test_a_plain_call_sends_model_messages_and_key() -> None:
    lm, sleeps, seen = _lm(OK)
    assert lm.complete([{"role": "user", "content": "yo"}]) == "hi"
    assert str(seen[0].url) == "http://model.test/v1/chat/completions"
    assert seen[0].headers["Authorization"] == "Bearer k"
    assert sleeps == []


@pytest.mark.parametrize("failure", [
    httpx.Response(500), httpx.Response(503), httpx.Response(429),
    httpx.ConnectError("reset"), httpx.ReadTimeout("slow"),
])
def test_transient_failures_are_retried_with_exponential_backoff(failure: httpx.Response | Exception) -> None:
    lm, sleeps, seen = _lm(failure, failure, OK)
    assert lm.complete([]) == "hi"
    assert len(seen) == 3 and sleeps == [0.5, 1.0]


def test_retry_after_is_honoured() -> None:
    lm, sleeps, _ = _lm(httpx.Response(429, headers={"Retry-After": "7"}), OK)
    assert lm.complete([]) == "hi" and sleeps == [7.0]


@pytest.mark.parametrize("status", [400, 401, 403, 404])
def test_other_client_errors_are_not_retried(status: int) -> None:
    lm, sleeps, seen = _lm(httpx.Response(status, json={"error": {"message": "nope"}}))
    with pytest.raises(LMError, match=f"HTTP {status} \\(nope\\); not retried"):
        lm.complete([])
    assert len(seen) == 1 and sleeps == []


def test_running_out_of_retries_raises_one_clear_error() -> None:
    lm, sleeps, seen = _lm(*[httpx.Response(500)] * 3, max_retries=2)
    with pytest.raises(LMError, match="failed 3 times \\(retried 2 times with backoff\\); the last "
                                      "failure was HTTP 500"):
        lm.complete([])
    assert len(seen) == 3 and sleeps == [0.5, 1.0]


def test_a_reply_without_content_is_a_clear_error() -> None:
    lm, _, _ = _lm(httpx.Response(200, json={"choices": []}))
    with pytest.raises(LMError, match="no choices"):
        lm.complete([])
