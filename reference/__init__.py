"""reference: the minimal, typed, DSPy-shaped ReAct that passes the whole conformance suite.

- ReAct: the tool-using agent loop (think, call a tool, observe; then extract the outputs); sync,
  async (`aforward`), streamed (`stream`), and resumable after a person answers (`resume`).
- Event: one item of a ReAct stream: a step, or the final `done` with the prediction.
- HumanInTheLoopRequired: a ReAct run paused for a person: `ask_to_user`, or a call to approve.
- ToolCall: the call an interrupt asks a person to approve: tool name, args, call id.
- Signature: a prediction's named, typed inputs and outputs, and its instructions.
- InputField / OutputField: declare the fields of a Signature subclass, with a description.
- FieldInfo: one field of a signature: name, annotation, description.
- Predict: one model call from a signature's inputs to its outputs.
- Prediction: the output values of a call, plus a ReAct run's trajectory and stop reason.
- Step: one step of a trajectory: thought, tool name, tool args, observation.
- ToolErrorRecord: a tool call that raised: tool, exception type name, message.
- Tool: a function the agent may call, with a JSON argument schema and validation (`validate`).
- Adapter: formats a signature and inputs as chat messages and parses the reply.
- ChatAdapter: the `[[ ## field ## ]]` section format.
- JSONAdapter: the one-JSON-object reply format.
- LanguageModel: the protocol of a model: `complete(messages) -> str`.
- LM: an OpenAI-compatible chat-completions client with retries and backoff.
- configure: set the process-wide default adapter.
- context: set the language model, or override the adapter, within a block, for the current
  thread or asyncio task only.
- settings / Settings: the language model and adapter in force here.
- parse_tool_args: a model's tool-argument text as a JSON object, or a ToolArgsError.
- MaxIterationsError: the step budget ran out (raise mode), with the run's structured context.
- AdapterParseError: a reply that does not fit the signature (names the field, quotes the reply).
- SignatureError: a malformed signature (names the problem and the offending text or field).
- ToolArgsError: tool arguments that cannot be used (names the reason or the field).
- LMError: a model call that failed for good (status or exception, attempts, retried or not).
"""

from reference._adapters import Adapter, AdapterParseError, ChatAdapter, JSONAdapter
from reference._args import ToolArgsError, parse_tool_args
from reference._interrupt import HumanInTheLoopRequired, ToolCall
from reference._lm import LM, LanguageModel, LMError
from reference._predict import Predict
from reference._prediction import Prediction, Step, ToolErrorRecord
from reference._settings import Settings, configure, context, settings
from reference._signature import FieldInfo, InputField, OutputField, Signature, SignatureError
from reference._tool import Tool
from reference.react import Event, MaxIterationsError, ReAct

__all__ = [
    "LM",
    "Adapter",
    "AdapterParseError",
    "ChatAdapter",
    "Event",
    "FieldInfo",
    "HumanInTheLoopRequired",
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
    "ToolCall",
    "ToolErrorRecord",
    "configure",
    "context",
    "parse_tool_args",
    "settings",
]
