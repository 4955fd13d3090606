"""Language models: the protocol, and an OpenAI-compatible chat-completions client with retries."""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

if TYPE_CHECKING:
    import httpx


@runtime_checkable
class LanguageModel(Protocol):
    """Anything that answers a list of chat messages with text."""

    def complete(self, messages: list[dict[str, str]]) -> str:
        """The assistant's reply to `messages` (each `{"role": ..., "content": ...}`)."""
        ...


class LMError(RuntimeError):
    """A model call that failed for good; says why, after how many attempts, and if it retried."""

    def __init__(self, message: str, *, attempts: int, status: int | None = None) -> None:
        super().__init__(message)
        self.attempts = attempts
        self.status = status


class LM:
    """An OpenAI-compatible chat-completions client: retries timeouts, connection errors, 429, 5xx.

    Attempt `n` (from 0) that fails transiently waits `backoff * 2**n` seconds, or the numeric
    `Retry-After` of a 429 or 503, then tries again, `max_retries` times at most.
    """

    def __init__(self, model: str, *, base_url: str, api_key: str | None = None,
                 max_retries: int = 3, backoff: float = 0.5,
                 sleep: Callable[[float], None] = time.sleep,
                 http_client: httpx.Client | None = None, timeout: float = 30.0) -> None:
        self.model = model
        self.url = base_url.rstrip("/") + "/chat/completions"
        self.max_retries = max_retries
        self.backoff = backoff
        self.sleep = sleep
        self.timeout = timeout
        # httpx is imported by the first LM built, not by `import reference`, which it would slow by half.
        import httpx

        self._client = http_client or httpx.Client()
        self._headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}

    def complete(self, messages: list[dict[str, str]]) -> str:
        """POST `messages`; the reply's `choices[0].message.content`, or one LMError."""
        import httpx  # loaded by __init__ already

        body = {"model": self.model, "messages": messages}
        failure, status = "", None
        for attempt in range(self.max_retries + 1):
            delay = self.backoff * 2**attempt
            try:
                response = self._client.post(self.url, json=body, headers=self._headers,
                                             timeout=self.timeout)
            except httpx.TransportError as exc:
                failure, status = f"{type(exc).__name__}: {exc}", None
            else:
                status = response.status_code
                if status < 400:
                    return _content(response, attempt + 1)
                failure = f"HTTP {status} ({_reason(response)})"
                if status != 429 and status < 500:
                    raise LMError(f"the model call failed with {failure}; not retried, since "
                                  f"HTTP {status} is not transient (attempts: {attempt + 1})",
                                  attempts=attempt + 1, status=status)
                if status in (429, 503):
                    delay = _retry_after(response, delay)
            if attempt < self.max_retries:
                self.sleep(delay)
        attempts = self.max_retries + 1
        raise LMError(f"the model call failed {attempts} times (retried {attempts - 1} times with "
                      f"backoff); the last failure was {failure}", attempts=attempts, status=status)


def _content(response: httpx.Response, attempts: int) -> str:
    try:
        content = response.json()["choices"][0]["message"]["content"]
    except (ValueError, KeyError, IndexError, TypeError):
        content = None
    if not isinstance(content, str):
        raise LMError(f"the model endpoint's reply has no choices[0].message.content text: "
                      f"{response.text[:200]!r}", attempts=attempts, status=response.status_code)
    return content


def _reason(response: httpx.Response) -> str:
    try:
        error: Any = response.json().get("error", {})
        return str(error.get("message", response.reason_phrase))
    except (ValueError, AttributeError):
        return response.reason_phrase


def _retry_after(response: httpx.Response, default: float) -> float:
    try:
        seconds = float(response.headers["Retry-After"])
    except (KeyError, ValueError):
        return default
    return max(0.0, seconds) if math.isfinite(seconds) else default
