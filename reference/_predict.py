"""Predict: one model call that turns a signature's inputs into its outputs."""

from __future__ import annotations

from typing import Any

from reference._adapters import Adapter, ChatAdapter
from reference._lm import LanguageModel
from reference._prediction import Prediction
from reference._settings import settings
from reference._signature import Signature

_DEFAULT_ADAPTER = ChatAdapter()


class Predict:
    """Asks a language model for a signature's outputs, through an adapter.

    At call time it uses its own adapter, else the contextual/global one, else a ChatAdapter; and
    its own language model, else the contextual/global one.
    """

    def __init__(self, signature: object, *, adapter: Adapter | None = None,
                 lm: LanguageModel | None = None) -> None:
        self.signature = Signature.coerce(signature)
        self.adapter = adapter
        self.lm = lm

    def __call__(self, **inputs: Any) -> Prediction:
        return self.forward(**inputs)

    def forward(self, **inputs: Any) -> Prediction:
        """One model call: check the inputs, format, complete, parse."""
        check_inputs(self.signature, inputs)
        current = settings()
        lm = self.lm or current.lm
        if lm is None:
            raise RuntimeError("no language model: pass lm= or run inside reference.context(lm=...)")
        adapter = self.adapter or current.adapter or _DEFAULT_ADAPTER
        reply = lm.complete(adapter.format(self.signature, inputs))
        return Prediction(adapter.parse(self.signature, reply))


def check_inputs(signature: Signature, inputs: dict[str, Any]) -> None:
    """A ValueError naming the fields when `inputs` lacks a required input or has an unknown one."""
    if inputs.keys() == signature.inputs.keys():  # the usual case, checked at every model call
        return
    missing = [n for n in signature.inputs if n not in inputs]
    unknown = sorted(set(inputs) - set(signature.inputs))
    if missing or unknown:
        # Only the fields at fault: quoting the whole signature would name every field (SIG-6).
        problems = [f"missing input(s) {', '.join(missing)}"] if missing else []
        problems += [f"unexpected input(s) {', '.join(unknown)}"] if unknown else []
        raise ValueError(f"{' and '.join(problems)}; pass exactly the signature's inputs")
