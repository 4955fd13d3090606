"""LM: an OpenAI-compatible client that retries transient failures; tested with MockTransport."""

from __future__ import annotations

import json
from collections.abc import Callable

import httpx
import pytest

from reference import LM, LanguageModel, LMError

Outcome = httpx.Response | Exception
MESSAGES = [{"role": "user", "content": "hi"}]


def ok(content: str = "hello") -> httpx.Response:
    return httpx.Response(200, json={"choices": [{"message": {"role": "assistant",
                                                               "content": content}}]})


def fail(status: int, retry_after: str | None = None) -> httpx.Response:
    headers = {"Retry-After": retry_after} if retry_after is not None else {}
    return httpx.Response(status, headers=headers, json={"error": {"message": "nope"}})


class Server:
    """Answers each request with the next scripted outcome, and records the requests."""

    def __init__(self, *outcomes: Outcome) -> None:
        self.outcomes = list(outcomes)
        self.requests: list[httpx.Request] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        outcome = self.outcomes.pop(0)
        if isinstance(outcome, Exception):
            raise outcome
        return outcome


def make(server: Server, **kwargs: object) -> tuple[LM, list[float]]:
    sleeps: list[float] = []
    sleep: Callable[[float], None] = sleeps.append
    client = httpx.Client(transport=httpx.MockTransport(server))
    return LM("gpt-test", base_url="http://model.invalid/v1/", sleep=sleep, http_client=client,
              **kwargs), sleeps  # type: ignore[arg-type]


def test_a_completion_posts_model_and_messages_and_returns_the_content() -> None:
    server = Server(ok("hello there"))
    lm, sleeps = make(server, api_key="sk-test", timeout=7.0)
    assert isinstance(lm, LanguageModel)
    assert lm.complete(MESSAGES) == "hello there"
    request = server.requests[0]
    assert request.method == "POST" and str(request.url) == "http://model.invalid/v1/chat/completions"
    assert json.loads(request.content) == {"model": "gpt-test", "messages": MESSAGES}
    assert request.headers["Authorization"] == "Bearer sk-test"
    assert request.extensions["timeout"]["read"] == 7.0
    assert sleeps == []


def test_no_api_key_sends_no_authorization_header() -> None:
    server = Server(ok())
    make(server)[0].complete(MESSAGES)
    assert "Authorization" not in server.requests[0].headers


def test_a_429_with_retry_after_is_retried_after_that_delay() -> None:
    server = Server(fail(429, "2"), ok())
    lm, sleeps = make(server)
    assert lm.complete(MESSAGES) == "hello"
    assert len(server.requests) == 2 and sleeps == [2.0]


def test_a_503_honours_retry_after_and_a_500_uses_exponential_backoff() -> None:
    server = Server(fail(500, "9"), fail(503, "0.25"), fail(502), ok())
    lm, sleeps = make(server, backoff=0.5)
    assert lm.complete(MESSAGES) == "hello"
    assert sleeps == [0.5, 0.25, 2.0]


def test_a_retry_after_that_is_not_a_finite_number_falls_back_to_backoff() -> None:
    server = Server(fail(429, "Wed, 21 Oct 2015 07:28:00 GMT"), fail(429, "inf"), ok())
    lm, sleeps = make(server, backoff=1.0)
    assert lm.complete(MESSAGES) == "hello" and sleeps == [1.0, 2.0]


def test_timeouts_and_connection_errors_are_retried() -> None:
    request = httpx.Request("POST", "http://model.invalid")
    server = Server(httpx.ConnectError("reset", request=request),
                    httpx.ReadTimeout("slow", request=request), ok())
    lm, sleeps = make(server)
    assert lm.complete(MESSAGES) == "hello" and sleeps == [0.5, 1.0]


@pytest.mark.parametrize("status", [400, 401, 403, 404, 408, 422])
def test_other_client_errors_are_not_retried(status: int) -> None:
    server = Server(fail(status, "1"))
    lm, sleeps = make(server)
    with pytest.raises(LMError, match=f"HTTP {status} \\(nope\\); not retried") as info:
        lm.complete(MESSAGES)
    assert "attempts: 1" in str(info.value)
    assert (info.value.attempts, info.value.status) == (1, status)
    assert len(server.requests) == 1 and sleeps == []


def test_a_client_error_after_a_retry_counts_both_attempts() -> None:
    server = Server(fail(500), fail(401))
    lm, sleeps = make(server)
    with pytest.raises(LMError, match="attempts: 2") as info:
        lm.complete(MESSAGES)
    assert info.value.attempts == 2 and sleeps == [0.5]


def test_exhaustion_raises_one_error_saying_status_attempts_and_retries() -> None:
    server = Server(*[fail(500)] * 4)
    lm, sleeps = make(server, max_retries=3, backoff=0.5)
    with pytest.raises(LMError) as info:
        lm.complete(MESSAGES)
    message = str(info.value)
    assert "failed 4 times" in message and "retried 3 times" in message
    assert "HTTP 500 (nope)" in message
    assert (info.value.attempts, info.value.status) == (4, 500)
    assert len(server.requests) == 4 and sleeps == [0.5, 1.0, 2.0]


def test_exhaustion_by_connection_errors_names_the_exception() -> None:
    request = httpx.Request("POST", "http://model.invalid")
    server = Server(*[httpx.ConnectError("reset", request=request)] * 2)
    lm, sleeps = make(server, max_retries=1)
    with pytest.raises(LMError, match=r"failed 2 times .* ConnectError: reset") as info:
        lm.complete(MESSAGES)
    assert info.value.status is None and sleeps == [0.5]


def test_no_retries_means_one_attempt() -> None:
    server = Server(fail(429))
    lm, sleeps = make(server, max_retries=0)
    with pytest.raises(LMError, match=r"failed 1 times \(retried 0 times"):
        lm.complete(MESSAGES)
    assert sleeps == []


@pytest.mark.parametrize("body", [{"choices": []}, {"choices": [{"message": {}}]},
                                  {"choices": [{"message": {"content": None}}]}, ["x"]])
def test_a_reply_without_text_content_is_a_clear_error(body: object) -> None:
    lm, _ = make(Server(httpx.Response(200, json=body)))
    with pytest.raises(LMError, match=r"no choices\[0\]\.message\.content"):
        lm.complete(MESSAGES)
