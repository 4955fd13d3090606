// The react-conformance harness for the OpenAI Agents SDK for JavaScript (npm `@openai/agents`),
// its agent loop: an Agent with function tools, run by a Runner.
//
//   pytest --impl openai-agents-js      (or --impl cmd:"node harnesses/openai-agents/harness.mjs")
//
// Seam: the SDK's default model, OpenAIResponsesModel (the Responses API, which its default provider
// uses unless told otherwise: OpenAIProvider.getModel takes useResponses from
// shouldUseResponsesByDefault, and defaults.ts sets DEFAULT_OPENAI_API = 'responses'), over an
// OpenAI client (npm `openai`, the SDK's dependency) whose documented `fetch` option answers from
// the script (harnesses/lib/responses-api.mjs): every Responses request the SDK builds is sent to the
// suite as the LMCall of its chat-completions form, and the scripted turn comes back as the
// `response` JSON (or its server-sent events, or the HTTP status) the API would answer. So the SDK's
// own request building, reply parsing, tool execution and the client's default retries (2, with
// backoff; the Runner adds none unless modelSettings.retry is set) all run, as in a user's run.
// `@openai/agents-core/testing` ships a ScriptedModel, but it sits above the client, where those
// retries live. In the `http` profile the same client points at CallRequest.base_url, whose
// `/responses` the suite's endpoint serves. This is the seam the Python openai-agents binding uses too.
//
// The step cap is `maxTurns`, an option of run(): one turn is one model call (the Runner throws
// MaxTurnsExceededError when `currentTurn > maxTurns` before a call, runner/turnPreparation.ts), so
// N steps map to maxTurns = N, and a per-call cap is the same option.
//
// Tools are the SDK's own `tool()` in its documented primary form, zod parameters
// (`parameters: z.object(...)`), with the SDK's defaults (strict schema, the default errorFunction);
// a tool taking a free-form object, which a strict schema cannot declare, gets `strict: false`. Approval: `needsApproval: true` pauses the run with
// `result.interruptions`; the pause is kept as the SDK's serialised RunState (`state.toString()`,
// its documented durable form) and answered with `RunState.fromString`, `state.approve` /
// `state.reject` and `run(agent, state)`. Streaming is `run(agent, input, {stream: true})`: a
// step event for each `tool_output` run item.
//
// `node harness.mjs --tool-not-found` is `openai-agents-js+tool-not-found`: the documented opt-in
// `toolNotFoundBehavior: 'return_error_to_model'` (a Runner option), which answers a call of an
// unknown tool with an error output instead of throwing ModelBehaviorError.

import {
  Agent, AgentsError, MaxTurnsExceededError, OpenAIResponsesModel, RunState, Runner,
  setTracingDisabled, tool,
} from '@openai/agents';
import OpenAI from 'openai';
import { z } from 'zod';
import { toolArgs } from '../lib/chat-completions.mjs';
import { modelCalls, responsesClient } from '../lib/responses-api.mjs';
import { callTool, deepArgsFailures, errorInfo, installedVersion, installedVersions, json, serve, unknownPause } from '../lib/protocol.mjs';
import { replyOutputs, userMessage, zodObject } from '../lib/render.mjs';

const VERSION = installedVersion(import.meta.url, '@openai/agents');

const TOOL_NOT_FOUND = process.argv.includes('--tool-not-found');
const NAME = TOOL_NOT_FOUND ? 'openai-agents-js+tool-not-found' : 'openai-agents-js';
// The Runner options of this harness's configuration (none: the defaults).
const SETTINGS = TOOL_NOT_FOUND ? { toolNotFoundBehavior: 'return_error_to_model' } : {};

// There is nowhere to export traces to.
setTracingDisabled(true);

// The contract this harness is written against: catalogue 3's capabilities, and each step's
// call_id (the function call's callId). is_error is null: a function_call_result item has no error
// flag (runner/toolExecution.ts, getToolCallOutputItem sets status 'completed' for every output,
// and a failing tool's output is only the errorFunction's text).
const PROTOCOL = 3;
const CAPABILITIES = ['max-steps-error', 'per-call-cap', 'tool-approval', 'durable-approvals', 'async', 'streaming',
                      'parallel-tool-calls', 'lm-retry', 'http'];
const NOT_CLAIMED = {
  adapters: 'no pluggable format-and-parse layer: the model class (here OpenAIResponsesModel) formats and parses every call',
  'cap-summary': 'by default maxTurns throws MaxTurnsExceededError (runner/turnPreparation.ts): no run returns on a cap to summarise',
  'repeated-error-stop': 'the Runner has no repeated-failure stop: it asks the model again after every tool error until maxTurns throws MaxTurnsExceededError (runner/turnPreparation.ts)',
  'approval-edit': 'RunState offers approve and reject only (runState.ts): the SDK cannot edit a pending call',
  signature: 'a native tool-calling loop: instructions and a user message, no signature',
  'max-steps-extract': 'on maxTurns the Runner throws MaxTurnsExceededError (runner/turnPreparation.ts); it makes no tool-less final call',
  'max-steps-return': "by default maxTurns throws MaxTurnsExceededError; the errorHandlers.maxTurns option (runner/errorHandlers.ts) returns only a finalOutput the caller's own handler writes",
  'ask-user': 'the SDK has no built-in tool for asking the person a question',
};
const GENERIC = "tool()'s default errorFunction, defaultToolErrorFunction (tool.ts), answers every failing call with the fixed 'An error occurred while running the tool. Please try again.'";
const UNKNOWN = "a call of a tool the agent lacks makes processModelResponse throw ModelBehaviorError('Tool <name> not found in agent <agent>.') out of run() (runner/modelOutputs.ts) unless the toolNotFoundBehavior option opts out";
const DEEP = "a RangeError 'Maximum call stack size exceeded' escapes run() at 5,000 levels of nesting, before the tool runs: preflightToolInvocations (runner/turnResolution.ts) fingerprints each call with getToolInvocationFingerprint, whose stableStringify (toolInvocation.ts) recurses through JSON.stringify (seen in the error's stack in a harness run)";
const REPLAY = 'a serialised RunState (toString/fromString, runState.ts) keeps no record that its approval was used: resuming the same snapshot again runs the tool again';
// How the harness fills the contract's derivable fields (conformance.binding.PARITY).
const PARITY = {
  stop_reason: 'library: MaxTurnsExceededError, thrown when a turn after maxTurns begins (runner/turnPreparation.ts), is the cap stop; a run that ends has finalOutput',
  iterations: "derived: counted from the RunState's model responses, one per model call (result.rawResponses; error.state._modelResponses, runState.ts)",
  max_iterations: "derived: the maxTurns the harness gave run(), read back from the error's RunState (error.state._maxTurns, runState.ts), which the error names only in its text 'Max turns (N) exceeded' (runner/turnPreparation.ts)",
  partial_run: "library: the RunState MaxTurnsExceededError carries (errors.ts, AgentsError.state): its generated items",
  concurrency: 'shared',
};
const KNOWN_FAILURES = {
  'When no tool ran, tools_used is empty': UNKNOWN,
  'An unknown tool name is never run, and the loop goes on': UNKNOWN,
  'An unknown tool name never crashes the run, also when it is the last step': UNKNOWN,
  'The agent is told that the tool it chose does not exist': UNKNOWN,
  'Resuming the same interrupt twice never runs the tool twice': REPLAY,
  'Answering a pause again after its resumed run paused again never runs a call twice': REPLAY,
  'HITL-8': REPLAY,
  'ERR-4': GENERIC,
  ...deepArgsFailures(DEEP),
  'ARGS-6': `the zod strictObject parameters refuse the undeclared key, but ${GENERIC}, which does not name it`,
  "Tool args that break the tool's schema never reach it with a wrong or missing value":
    `the zod parameters refuse the args and the tool does not run, but ${GENERIC}, which does not name the field`,
};

// The opt-in answers an unknown tool with an error output: those failures are not its own.
const KNOWN_FAILURES_OPT_IN = {
  ...Object.fromEntries(Object.entries(KNOWN_FAILURES).filter(([, reason]) => reason !== UNKNOWN)),
};

// tool()'s default strict schema cannot declare a free-form object (zod parameters need strict: true,
// and getSchemaAndParserFromInputType in utils/tools.ts refuses a record under it): a tool taking one
// gets the documented `strict: false` with a JSON schema, as REQUIREMENTS.md's rules for bindings
// say; every other tool keeps the zod default.
const JSON_TYPES = { str: 'string', int: 'integer', float: 'number', bool: 'boolean', list: 'array', dict: 'object' };
function parametersOf(spec) {
  if (!spec.parameters.some((p) => p.type === 'dict')) return { parameters: zodObject(z, spec) };
  const properties = Object.fromEntries(spec.parameters.map((p) => [p.name, { type: JSON_TYPES[p.type], description: p.description }]));
  return {
    strict: false,
    parameters: { type: 'object', properties, required: spec.parameters.map((p) => p.name), additionalProperties: false },
  };
}

// -- the model endpoint ---------------------------------------------------------------------------

// A Runner on the SDK's default model for an agent with tools or without (`hasTools`).
function runner(baseURL, hasTools) {
  return new Runner({ model: new OpenAIResponsesModel(responsesClient(OpenAI, baseURL, hasTools), 'scripted'),
                      tracingDisabled: true, ...SETTINGS });
}

// -- the agents -------------------------------------------------------------------------------------

function messageText(raw) {
  if (typeof raw.content === 'string') return raw.content;
  return (raw.content ?? []).map((p) => p.text ?? p.refusal ?? '').join('');
}

// The tool calls among the SDK's run items, in order, each with its output and the text of the
// model reply that made it (its thought).
function steps(items) {
  const outputs = new Map();
  for (const item of items) {
    if (item.type === 'tool_call_output_item') outputs.set(item.rawItem.callId, json(item.output));
  }
  const found = [];
  let thought = null;
  for (const item of items) {
    if (item.type === 'message_output_item') thought = messageText(item.rawItem) || null;
    else if (item.type === 'tool_call_item' && item.rawItem.type === 'function_call') {
      const raw = item.rawItem;
      found.push({ thought, tool_name: raw.name, tool_args: toolArgs(raw.arguments),
                   observation: outputs.has(raw.callId) ? outputs.get(raw.callId) : null, is_error: null,
                   call_id: raw.callId ?? null });
    } else if (item.type === 'tool_call_output_item') thought = null;
  }
  return found;
}

const agents = new Map();
// Every pause a call made, by its id, whichever agent made it: a person's answer may reach another
// agent than the paused one (HITL-6), and refusing it is the library's part, not the harness's.
const pauses = new Map();

function outcome(state, result, baseURL) {
  state.last = [result.newItems];
  const trajectory = steps(result.newItems);
  const iterations = result.rawResponses.length;
  if (result.interruptions?.length) {
    const item = result.interruptions[0];
    const callId = item.rawItem.callId;
    const pauseId = `${callId}#${pauses.size + 1}`;
    pauses.set(pauseId, { snapshot: result.state.toString(), baseURL });
    return {
      trajectory, iterations, error: {
        type: item.constructor.name, message: `the call of ${item.toolName ?? item.rawItem.name} needs approval`,
        kind: 'human-in-the-loop', fields: {
          // A RunToolApprovalItem carries the call, no question for the person.
          question: null,
          interrupt_id: pauseId,
          tool_call: { name: item.toolName ?? item.rawItem.name, args: toolArgs(item.rawItem.arguments), call_id: callId },
          context: { trajectory, iteration: iterations, input: json(result.input) },
        },
      },
    };
  }
  const final = result.finalOutput;
  return {
    outputs: replyOutputs(state.spec.signature, final ?? null), trajectory, iterations,
    stop_reason: final != null ? 'finish' : null,
  };
}

// An exception the SDK let escape; its run state (items, responses), where it carries one.
function failed(state, error) {
  const run = error instanceof AgentsError ? error.state : undefined;
  if (run == null) return { error: errorInfo(error) };
  const items = run._generatedItems ?? [];
  state.last = [items];
  const trajectory = steps(items);
  const iterations = (run._modelResponses ?? []).length;
  if (!(error instanceof MaxTurnsExceededError)) return { trajectory, iterations, error: errorInfo(error) };
  // MaxTurnsExceededError carries its message and the RunState: no structured fields of its own; the
  // cap is the maxTurns the harness gave, which the RunState keeps (PARITY.max_iterations).
  // A call of a name the agent lacks (answered with an error under toolNotFoundBehavior) used no tool.
  const own = new Set(state.spec.tools.map((t) => t.name));
  const seen = trajectory.filter((s) => s.observation != null);
  return {
    trajectory, iterations, stop_reason: 'max_steps', error: {
      ...errorInfo(error), kind: 'max-iterations', fields: {
        iterations, max_iterations: run._maxTurns,
        tools_used: seen.filter((s) => own.has(s.tool_name)).map((s) => s.tool_name),
        history: trajectory,
        last_observation: seen.length ? seen.at(-1).observation : null,
      },
    },
  };
}

async function streamed(state, agent, input, options, baseURL) {
  const events = [];
  let result;
  try {
    result = await runner(baseURL, state.spec.tools.length > 0).run(agent, input, { ...options, stream: true });
    for await (const event of result) {
      if (event.type === 'run_item_stream_event' && event.name === 'tool_output') {
        const done = steps(result.newItems).filter((s) => s.observation != null);
        events.push({ kind: 'step', model_calls: modelCalls(), step: done.at(-1) ?? null });
      }
    }
    await result.completed;
    if (result.error) throw result.error;
  } catch (error) {
    return { ...failed(state, error), events };
  }
  const out = outcome(state, result, baseURL);
  events.push({ kind: 'done', model_calls: modelCalls(), stop_reason: out.stop_reason ?? null, outputs: out.outputs ?? null });
  return { ...out, events };
}

serve({
  hello: () => ({ protocol: PROTOCOL, name: NAME, version: VERSION, dependencies: installedVersions(import.meta.url),
                  capabilities: CAPABILITIES, not_claimed: NOT_CLAIMED,
                  known_failures: TOOL_NOT_FOUND ? KNOWN_FAILURES_OPT_IN : KNOWN_FAILURES, parity: PARITY }),
  // The SDK has no reply formats to choose: every request is native tool calling.
  configure: () => ({}),
  global_adapter: () => ({ adapter: null }),
  build({ agent, spec }) {
    try {
      const built = new Agent({
        name: spec.name,
        instructions: spec.signature.instructions || undefined,
        tools: spec.tools.map((t) => tool({
          name: t.name, description: t.description, ...parametersOf(t),
          needsApproval: t.interruptible, execute: (input) => callTool(t.name, input),
        })),
      });
      agents.set(agent, { agent: built, spec, last: [] });
      return { error: null };
    } catch (error) {
      return { error: errorInfo(error) };
    }
  },
  async run({ agent, call }) {
    const state = agents.get(agent);
    state.last = [];
    const options = { maxTurns: call.max_steps ?? state.spec.max_steps };
    const input = userMessage(call.inputs);
    if (call.mode === 'stream') return { outcome: await streamed(state, state.agent, input, options, call.base_url) };
    try {
      const result = await runner(call.base_url, state.spec.tools.length > 0).run(state.agent, input, options);
      return { outcome: outcome(state, result, call.base_url) };
    } catch (error) {
      return { outcome: failed(state, error) };
    }
  },
  async resume({ agent, request }) {
    const state = agents.get(agent);
    const pause = pauses.get(request.interrupt_id);
    if (pause == null) return unknownPause(request.interrupt_id);
    const answer = request.response.trim();
    if (answer.startsWith('{') && answer.includes('edit')) {
      return { outcome: { error: { type: 'NotSupported', kind: 'other', fields: {},
        message: 'the SDK cannot edit a pending tool call: RunState offers approve and reject only (runState.ts)' } } };
    }
    state.last = [];
    try {
      const run = await RunState.fromString(state.agent, pause.snapshot);
      const item = run.getInterruptions()[0];
      if (['yes', 'y'].includes(answer.toLowerCase())) run.approve(item);
      else if (['no', 'n'].includes(answer.toLowerCase())) run.reject(item);
      else run.reject(item, { message: request.response }); // free text: the rejection message the model sees
      const result = await runner(pause.baseURL, state.spec.tools.length > 0).run(state.agent, run);
      return { outcome: outcome(state, result, pause.baseURL) };
    } catch (error) {
      return { outcome: failed(state, error) };
    }
  },
  // Native function calling: the model may name exactly the declared tools.
  step_tool_names: () => ({ names: null }),
  mutate_last_result({ agent, marker }) {
    const changed = [];
    for (const items of agents.get(agent).last) {
      changed.push(`result.newItems (${items.length} items)`);
      for (const item of items) {
        if (item.type === 'tool_call_output_item') item.output = marker;
      }
      items.push(marker);
    }
    return { changed };
  },
});
