"""Language models: the protocol, and an OpenAI-compatible chat-completions client with retries."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any, Protocol, runtime_checkable

import httpx


@runtime_checkable
class LanguageModel(Protocol):
    """Anything that answers a list of chat messages with text."""

    def complete(self, messages: list[dict[str, str]]) -> str:
        """The assistant's reply to `messages` (each `{"role": ..., "content": ...}`)."""
        ...


class LMError(RuntimeError):
    """A model call that failed for good: not transient, or retried until the retries ran out."""


_TRANSIENT = {408, 409, 425, 429}


class LM:
    """An OpenAI-compatible chat-completions client that retries transient failures with backoff."""

    def __init__(self, model: str, *, base_url: str, api_key: str | None = None, max_retries: int = 3,
                 backoff: float = 0.5, sleep: Callable[[float], None] = time.sleep,
                 http_client: httpx.Client | None = None, timeout: float = 30.0) -> None:
        self.model = model
        self.url = base_url.rstrip("/") + "/chat/completions"
        self.max_retries = max_retries
        self.backoff = backoff
        self.sleep = sleep
        self.timeout = timeout
        self._client = http_client or httpx.Client()
        self._headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}

    def complete(self, messages: list[dict[str, str]]) -> str:
        """Send `messages`; retry timeouts, connection errors, 429 and 5xx; raise one LMError."""
        body = {"model": self.model, "messages": messages}
        failure = ""
        for attempt in range(self.max_retries + 1):
            delay = self.backoff * 2**attempt
            try:
                response = self._client.post(self.url, json=body, headers=self._headers,
                                             timeout=self.timeout)
            except httpx.TransportError as exc:
                failure = f"{type(exc).__name__}: {exc}"
            else:
                status = response.status_code
                if status < 400:
                    return _content(response)
                if status not in _TRANSIENT and status < 500:
                    raise LMError(f"the model endpoint answered HTTP {status} ({_reason(response)}); "
                                  f"not retried, since a {status} is not transient")
                failure = f"HTTP {status} ({_reason(response)})"
                delay = _retry_after(response, delay)
            if attempt < self.max_retries:
                self.sleep(delay)
        raise LMError(f"the model call failed {self.max_retries + 1} times (retried "
                      f"{self.max_retries} times with backoff); the last failure was {failure}")


def _content(response: httpx.Response) -> str:
    try:
        content = response.json()["choices"][0]["message"]["content"]
    except (ValueError, KeyError, IndexError, TypeError) as exc:
        raise LMError(f"the model endpoint's reply has no choices[0].message.content: "
                      f"{response.text[:200]!r}") from exc
    if not isinstance(content, str):
        raise LMError(f"the model replied with no text content: {content!r}")
    return content


def _reason(response: httpx.Response) -> str:
    try:
        error: Any = response.json().get("error", {})
        return str(error.get("message", response.reason_phrase))
    except (ValueError, AttributeError):
        return response.reason_phrase


def _retry_after(response: httpx.Response, default: float) -> float:
    try:
        return max(0.0, float(response.headers["Retry-After"]))
    except (KeyError, ValueError):
        return default
