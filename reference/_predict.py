"""Predict: one model call that turns a signature's inputs into its outputs."""

from __future__ import annotations

from typing import Any

from reference._adapters import Adapter, ChatAdapter
from reference._lm import LanguageModel
from reference._settings import settings
from reference._signature import Signature


class Prediction:
    """Output values as attributes (`p.answer`, `p["answer"]`), plus how the run went."""

    def __init__(self, outputs: dict[str, Any], **run: Any) -> None:
        self._outputs = outputs
        #: The steps taken, a snapshot the caller owns (ReAct only).
        self.trajectory: list[Any] = run.get("trajectory", [])
        #: Why the loop stopped: "finish", "max_iters" or "repeated_tool_errors" (ReAct only).
        self.stop_reason: str | None = run.get("stop_reason")
        #: How many step calls the run made (ReAct only).
        self.iterations: int = run.get("iterations", 0)
        #: A message for the user when the run did not finish normally (ReAct only).
        self.fallback: str | None = run.get("fallback")
        #: The last tool errors, oldest first, at most ten (ReAct only).
        self.tool_errors: list[Any] = run.get("tool_errors", [])

    def __getattr__(self, name: str) -> Any:
        try:
            return self.__dict__["_outputs"][name]
        except KeyError:
            raise AttributeError(f"the prediction has no field {name!r}") from None

    def __getitem__(self, name: str) -> Any:
        return self._outputs[name]

    def outputs(self) -> dict[str, Any]:
        """The output values by field name."""
        return dict(self._outputs)

    def __repr__(self) -> str:
        return f"Prediction({self._outputs!r})"


def check_inputs(signature: Signature, inputs: dict[str, Any]) -> None:
    """Fail, naming the fields, when `inputs` lacks a required input or has an unknown one."""
    missing = [n for n in signature.inputs if n not in inputs]
    unknown = sorted(set(inputs) - set(signature.inputs))
    if missing or unknown:
        problems = [f"missing input(s) {', '.join(missing)}"] if missing else []
        problems += [f"unknown input(s) {', '.join(unknown)}"] if unknown else []
        raise ValueError(f"{' and '.join(problems)} for signature {signature}")


class Predict:
    """Asks the model for a signature's outputs, through an adapter."""

    def __init__(self, signature: object, *, adapter: Adapter | None = None,
                 lm: LanguageModel | None = None) -> None:
        self.signature = Signature.coerce(signature)
        self.adapter = adapter
        self.lm = lm

    def __call__(self, **inputs: Any) -> Prediction:
        return self.forward(**inputs)

    def forward(self, **inputs: Any) -> Prediction:
        """One model call: format, complete, parse."""
        check_inputs(self.signature, inputs)
        current = settings()
        lm = self.lm or current.lm
        if lm is None:
            raise RuntimeError("no language model: pass lm= or call reference.configure(lm=...)")
        adapter = self.adapter or current.adapter or _DEFAULT_ADAPTER
        reply = lm.complete(adapter.format(self.signature, inputs))
        return Prediction(adapter.parse(self.signature, reply))


_DEFAULT_ADAPTER = ChatAdapter()
