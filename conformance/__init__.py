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
    Event,
    ExtractTurn,
    FaultTurn,
    FieldSpec,
    FinalTurn,
    LMCall,
    Outcome,
    ParamSpec,
    ResumeRequest,
    SignatureSpec,
    Step,
    StepTurn,
    ToolCall,
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
    "Event",
    "ExtractTurn",
    "FaultTurn",
    "FieldSpec",
    "FinalTurn",
    "LMCall",
    "Outcome",
    "ParamSpec",
    "ResumeRequest",
    "ScriptedModel",
    "SignatureSpec",
    "Step",
    "StepTurn",
    "SuiteTool",
    "ToolCall",
    "ToolSpec",
    "Turn",
    "UnexpectedModelCall",
]
