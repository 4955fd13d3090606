"""reference: the minimal ReAct that passes the whole conformance suite."""

from reference._adapters import Adapter, AdapterParseError, ChatAdapter, JSONAdapter
from reference._args import ToolArgsError, parse_tool_args
from reference._lm import LM, LanguageModel, LMError
from reference._predict import Predict, Prediction
from reference._settings import Settings, configure, context, settings
from reference._signature import FieldInfo, InputField, OutputField, Signature, SignatureError
from reference._tool import Tool
from reference.react import MaxIterationsError, ReAct, Step, ToolErrorRecord

__all__ = [
    "LM",
    "Adapter",
    "AdapterParseError",
    "ChatAdapter",
    "FieldInfo",
    "InputField",
    "JSONAdapter",
    "LMError",
    "LanguageModel",
    "MaxIterationsError",
    "OutputField",
    "Predict",
    "Prediction",
    "ReAct",
    "Settings",
    "Signature",
    "SignatureError",
    "Step",
    "Tool",
    "ToolArgsError",
    "ToolErrorRecord",
    "configure",
    "context",
    "parse_tool_args",
    "settings",
]
