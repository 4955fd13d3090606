"""react-conformance: a conformance suite for ReAct agent modules.

A binding adapts one library to the suite (see `conformance.binding`); `pytest --impl NAME` runs
every feature against it and gives a verdict per requirement.
"""

from conformance._guard import BindingError
from conformance._model import ScriptedModel, UnexpectedModelCall
from conformance._tools import SuiteTool
from conformance.binding import (
    CAPABILITIES,
    AdapterName,
    AgentSpec,
    Binding,
    CallRequest,
    ErrorInfo,
    ExtractTurn,
    FaultTurn,
    FieldSpec,
    LMCall,
    Outcome,
    ParamSpec,
    SignatureSpec,
    Step,
    StepTurn,
    ToolSpec,
    Turn,
)

__all__ = [
    "CAPABILITIES",
    "AdapterName",
    "AgentSpec",
    "Binding",
    "BindingError",
    "CallRequest",
    "ErrorInfo",
    "ExtractTurn",
    "FaultTurn",
    "FieldSpec",
    "LMCall",
    "Outcome",
    "ParamSpec",
    "ScriptedModel",
    "SignatureSpec",
    "Step",
    "StepTurn",
    "SuiteTool",
    "ToolSpec",
    "Turn",
    "UnexpectedModelCall",
]
