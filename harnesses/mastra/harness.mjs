// The react-conformance harness for Mastra (npm `@mastra/core`), its Agent's tool loop.
//
//   pytest --impl mastra        (or --impl cmd:"node harnesses/mastra/harness.mjs")
//
// The agent is what a Mastra user writes: `new Agent({ id, name, instructions, model, tools })`,
// each suite tool a `createTool({ id, description, inputSchema, execute })` with a zod object of
// its parameters (strict, as the suite's schema has `additionalProperties: false`), and
// `requireApproval: true` when the suite says it must not run before a person approves it. A call
// is `agent.generate(prompt, { maxSteps })` (or `agent.stream`).
//
// The model is the AI SDK's test double, `MockLanguageModelV4` from `ai/test`, which Mastra takes
// as any AI SDK v7 model (llm/model: a v4 specification becomes an AISDKV7LanguageModel): every
// request its loop sends is shown to the suite, and the scripted turn comes back as the model's
// content (harnesses/lib/ai-sdk.mjs, shared with the ai harness). Mastra's retry (p-retry around
// doGenerate/doStream, in the agent's stream loop) sits above the mock, so a scripted transport
// fault is answered by the AI SDK's OpenAI-compatible client over a fetch that fails as scripted:
// its APICallError is what Mastra's isRetryableModelError judges. In `http` scenarios that client
// is the model of the call (the `model` execution option), pointed at the suite's endpoint.
//
// The step cap: a step is one model request, and `maxSteps` (an option of each call) stops the
// loop once that many completed. On the cap generate returns normally, its finish reason
// `tool-calls`; the harness reports `max_steps` when the result shows exactly that (N steps, the
// last one ending in tool calls).
//
// Approval is Mastra's: a `requireApproval` tool suspends the run (finishReason `suspended`, the
// call in suspendPayload); the run's snapshot lives in the storage of the Mastra instance the agent
// is registered with (one instance with an InMemoryStore for every agent, as an application has
// one), and `approveToolCallGenerate` / `declineToolCallGenerate({ runId, toolCallId, reason })`
// resume it.
//
// `node harness.mjs --retries` is `mastra+retries`: the Agent's documented `maxRetries` option
// (default 0, so by default a failed model request is not retried), set to 2.

import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { Agent } from '@mastra/core/agent';
import { Mastra } from '@mastra/core/mastra';
import { InMemoryStore } from '@mastra/core/storage';
import { createTool } from '@mastra/core/tools';
import { MockLanguageModelV4, convertArrayToReadableStream } from 'ai/test';
import { z } from 'zod';
import { faultFetch, generated, lmCall, streamChunks, trajectory } from '../lib/ai-sdk.mjs';
import { askModel, callTool, currentRun, errorInfo, installedVersion, installedVersions, json, serve, unknownPause, wire } from '../lib/protocol.mjs';
import { replyOutputs, userMessage, zodObject } from '../lib/render.mjs';

// `node harness.mjs --retries` is `mastra+retries`: the documented Agent option `maxRetries: 2`.
const RETRIES = process.argv.includes('--retries');
const NAME = RETRIES ? 'mastra+retries' : 'mastra';

const VERSION = installedVersion(import.meta.url, '@mastra/core');

// The contract this harness is written against (harnesses/lib/protocol.mjs still speaks 2 for the
// other harnesses): catalogue 3's capabilities, and each step's is_error and call_id.
const PROTOCOL = 3;

const CAPABILITIES = ['max-steps-return', 'per-call-cap', 'tool-approval', 'durable-approvals', 'async', 'streaming',
                      'parallel-tool-calls', 'lm-retry', 'http'];
// How the harness fills the contract's derivable fields (conformance.binding.PARITY).
const PARITY = {
  stop_reason: "derived: from the full output's finishReason and steps (stream/base/output.ts, getFullOutput): 'stop' is the answer, N steps of a maxSteps of N whose last ended in tool calls the cap stop, as Mastra flags none",
  iterations: "derived: counted from the full output's steps, one per model request (stream/base/output.ts, getFullOutput)",
  max_iterations: 'none: on maxSteps generate raises nothing; it returns the steps so far with finish reason tool-calls (stream/base/output.ts, getFullOutput)',
  partial_run: 'none: on maxSteps generate raises nothing; the full output holds its steps and messages',
  concurrency: 'shared',
};
const NOT_CLAIMED = {
  signature: 'a native tool-calling loop: an Agent takes instructions, a prompt and tools, no signature',
  adapters: 'no pluggable format-and-parse layer: the AI SDK model formats and parses every call',
  'cap-summary': 'on maxSteps generate returns the steps and their joined text (stream/base/output.ts, getFullOutput): nothing tells the user what was tried',
  'repeated-error-stop': "the loop has no repeated-failure stop: a throwing tool's error becomes its tool result and the agent is asked again until maxSteps",
  'approval-edit': 'an approval carries only approved and an optional reason (approveToolCall / declineToolCall, agent/agent.ts): the pending call cannot be changed',
  'max-steps-error': 'on maxSteps generate returns normally with finish reason tool-calls: Mastra has no max-iterations error',
  'max-steps-extract': 'on maxSteps generate returns the steps so far; it makes no tool-less final call',
  'ask-user': 'Mastra has no built-in tool through which the agent asks the person a question',
};

const TEXT = "the answer is generate's `text`, which joins every step's text (stream/base/output.ts, MastraModelOutput.getFullOutput: steps.map((step) => step.text).join('')): the thoughts beside earlier tool calls are prefixed to the final reply ('try itadd instead5' for '5')";
const REPAIR = "malformed tool-call JSON is repaired and run: convertFullStreamChunkToMastra (stream/aisdk/v5/transform.ts) falls back to tryRepairJson, which quotes bare keys, turns single quotes into double ones and drops trailing commas";
const NO_RETRY = "the Agent's maxRetries defaults to 0 (agent/agent.ts, constructor: config.maxRetries ?? 0), so the p-retry around the model call (agent's stream loop, retries: maxRetries) makes one attempt";
const NO_TIMEOUT = "no request timeout by default: modelSettings.timeout is unset, so createTimeoutAbortSignal (agent's stream loop) arms no timer and a request to an endpoint that never answers waits for ever"
const MALFORMED = 'test_malformed_json_tool_args_never_crash_the_run';
const LITERALS = 'test_python_literals_in_tool_args_are_malformed_json_never_guessed_at';
const KNOWN_FAILURES = {
  'The answer is the final reply alone, not joined with the text beside earlier tool calls': TEXT,
  'A pause answered through another agent is refused':
    "approveToolCallGenerate loads the suspended run by its runId alone (agent/agent.ts, #loadAgenticLoopSnapshotOrThrow: the 'agentic-loop' workflow snapshot in the storage of the agent's Mastra instance), never checking which agent suspended it: another agent registered on the same Mastra takes over the run and runs its tool (an agent on another Mastra instance, or none, finds no snapshot and throws)",
  // Only the rows tryRepairJson turns into JSON run the tool; the others never reach it.
  ...Object.fromEntries([
    `${MALFORMED}[{'amount': 50, 'recipient': 'Ann'}]`,
    `${MALFORMED}[{"amount": 50, "recipient": "Ann",}]`,
    `${LITERALS}[{"recipient": "Ann", "urgent": true,}]`,
  ].map((id) => [id, REPAIR])),
  ...Object.fromEntries([
    'Resuming keeps the budget the steps before the pause used',
    'Resuming keeps the step cap given to the call and the steps used before the pause',
  ].map((name) => [name, 'a resume (approveToolCallGenerate) runs the loop again from the snapshot with the whole maxSteps: the steps before the pause do not count, and the model is asked for more steps than the cap leaves'])),
  'Malformed JSON tool args never reach a tool that takes no arguments':
    'args that neither JSON.parse nor tryRepairJson reads become undefined (convertFullStreamChunkToMastra, stream/aisdk/v5/transform.ts), and validateToolInput (tools/validation.ts, normalizeNullishInput) turns undefined into {} for an object schema: a tool that takes no arguments runs on that guess',
};
const KNOWN_FAILURES_DEFAULT = {
  ...KNOWN_FAILURES,
  ...Object.fromEntries([
    'A transient model failure is retried and the run succeeds',
    'A rate limit or an unavailable endpoint is retried after the wait it asks for',
    'The backoff grows between tries',
    'When retries run out the caller gets one clear error and no tool runs',
    'Over HTTP, a rate limit or a server error is retried and the run succeeds',
    'Over HTTP, when retries run out the caller gets one clear error and the next call starts clean',
  ].map((name) => [name, NO_RETRY])),
  'A hung endpoint times out and the call is retried': `${NO_TIMEOUT}; and ${NO_RETRY}`,
};
// With maxRetries the model call is retried; what is left of NET-1 is the missing request timeout.
const KNOWN_FAILURES_RETRIES = {
  ...KNOWN_FAILURES,
  'A hung endpoint times out and the call is retried': NO_TIMEOUT,
};

// -- the model ------------------------------------------------------------------------------------

// Model requests per run: a streaming run's events say how many had been made when they arrived.
const modelCalls = new Map();

async function scripted(options) {
  await Promise.resolve();
  const run = currentRun();
  modelCalls.set(run, (modelCalls.get(run) ?? 0) + 1);
  // An answer the script did not expect throws here, in the model: a plain Error, not retried.
  return askModel(lmCall(options));
}

function openAICompatible(baseURL, fetch) {
  return createOpenAICompatible({ name: 'scripted', baseURL, apiKey: 'placeholder-key', ...(fetch ? { fetch } : {}) }).chatModel('scripted');
}

const FAULTS = 'http://scripted.invalid/v1';

const mock = new MockLanguageModelV4({
  provider: 'scripted',
  modelId: 'scripted',
  async doGenerate(options) {
    const turn = await scripted(options);
    if (turn.kind === 'fault') return openAICompatible(FAULTS, faultFetch(turn)).doGenerate(options);
    return generated(turn);
  },
  async doStream(options) {
    const turn = await scripted(options);
    if (turn.kind === 'fault') return openAICompatible(FAULTS, faultFetch(turn)).doStream(options);
    return { stream: convertArrayToReadableStream(streamChunks(turn)) };
  },
});

// -- the agents -----------------------------------------------------------------------------------

function mastraTool(spec) {
  return createTool({
    id: spec.name, description: spec.description, inputSchema: zodObject(z, spec),
    execute: (input) => callTool(spec.name, input),
    ...(spec.interruptible ? { requireApproval: true } : {}),
  });
}

const agents = new Map();

// The Mastra instance the approval-needing agents are registered with (an InMemoryStore, as the
// docs require storage for approval), made on first use.
let mastra = null;
function application() {
  mastra ??= new Mastra({ storage: new InMemoryStore(), logger: false });
  return mastra;
}

// Every pause a call made, by its id, whichever agent made it: a person's answer may reach another
// agent than the paused one (HITL-6), and refusing it is the library's part, not the harness's.
const pauses = new Map();
let agentIds = 0;

function stopReason(result, cap) {
  if (result.finishReason === 'stop') return 'finish';
  // Mastra says only that the last step ended in tool calls; with N of N steps taken, that is
  // maxSteps ending the loop.
  if (result.finishReason === 'tool-calls' && result.steps.length === cap) return 'max_steps';
  return result.finishReason ?? null;
}

// A failed call as Mastra reports it: an APICallError keeps the HTTP status in statusCode.
function callErrorInfo(error) {
  const info = errorInfo(error);
  const status = error?.statusCode ?? error?.lastError?.statusCode ?? error?.cause?.statusCode;
  return typeof status === 'number' ? { ...info, fields: { status } } : info;
}

// Mastra answers args that break the tool's schema with a result of its own error shape,
// { error: true, message, validationErrors } (tools/validation.ts, isValidationError): its flag.
function flagged(step) {
  const o = step.observation;
  const invalid = o != null && typeof o === 'object' && o.error === true && 'validationErrors' in o;
  return invalid ? { ...step, is_error: true } : step;
}

function outcome(state, result, cap, inputs, before) {
  const messages = [...before, ...(result.response?.messages ?? [])];
  state.last = { messages: result.response?.messages ?? [], result };
  const steps = trajectory(messages, { bound: true }).map(flagged);
  const base = { trajectory: steps, iterations: result.steps.length };
  if (result.error) return { ...base, error: callErrorInfo(result.error) };
  if (result.finishReason === 'suspended') {
    const pause = result.suspendPayload;
    const id = `${result.runId}#${pause.toolCallId}`;
    pauses.set(id, { runId: result.runId, toolCallId: pause.toolCallId, cap, inputs, messages });
    return { ...base, error: {
      type: 'ToolCallSuspended', kind: 'human-in-the-loop',
      message: `the call of ${pause.toolName} awaits approval`,
      fields: {
        // The suspend payload holds the call and no question for the person.
        question: null, interrupt_id: id,
        tool_call: { name: pause.toolName, args: json(pause.args), call_id: pause.toolCallId },
        context: { trajectory: steps, iteration: result.steps.length, input_args: json(inputs) },
      },
    } };
  }
  const reason = stopReason(result, cap);
  return { ...base, stop_reason: reason,
           outputs: reason === 'finish' ? replyOutputs(state.spec.signature, result.text) : null };
}

async function streamed(state, prompt, options, cap, inputs) {
  const run = currentRun();
  const events = [];
  try {
    const output = await state.agent.stream(prompt, options);
    for await (const chunk of output.fullStream) {
      if (chunk.type !== 'tool-result' && chunk.type !== 'tool-error') continue;
      const p = chunk.payload;
      events.push({ kind: 'step', model_calls: modelCalls.get(run) ?? 0, step: {
        thought: null, tool_name: p.toolName, tool_args: wire(json(p.args)),
        observation: json(chunk.type === 'tool-error' ? String(p.error?.message ?? p.error) : p.result),
        is_error: chunk.type === 'tool-error', call_id: p.toolCallId } });
    }
    const done = outcome(state, await output.getFullOutput(), cap, inputs, [{ role: 'user', content: prompt }]);
    events.push({ kind: 'done', model_calls: modelCalls.get(run) ?? 0, stop_reason: done.stop_reason ?? null,
                  outputs: done.outputs ?? null });
    return { ...done, events };
  } catch (error) {
    return { error: callErrorInfo(error), events };
  }
}

async function call(state, prompt, cap, inputs, mode, baseURL) {
  const options = { maxSteps: cap, ...(baseURL ? { model: openAICompatible(baseURL) } : {}) };
  state.last = null;
  if (mode === 'stream') return streamed(state, prompt, options, cap, inputs);
  try {
    return outcome(state, await state.agent.generate(prompt, options), cap, inputs, [{ role: 'user', content: prompt }]);
  } catch (error) {
    return { error: callErrorInfo(error) };
  }
}

serve({
  hello: () => ({ protocol: PROTOCOL, name: NAME, version: VERSION, dependencies: installedVersions(import.meta.url),
                  capabilities: CAPABILITIES, not_claimed: NOT_CLAIMED,
                  known_failures: RETRIES ? KNOWN_FAILURES_RETRIES : KNOWN_FAILURES_DEFAULT, parity: PARITY }),
  // Mastra has no adapters: nothing to configure, nothing to read back.
  configure: () => ({}),
  global_adapter: () => ({ adapter: null }),
  build({ agent, spec }) {
    try {
      const id = `agent-${++agentIds}`;
      const built = new Agent({
        id, name: id, instructions: spec.signature.instructions, model: mock, ...(RETRIES ? { maxRetries: 2 } : {}),
        tools: Object.fromEntries(spec.tools.map((t) => [t.name, mastraTool(t)])),
      });
      // Approval keeps the suspended run's snapshot in the storage of the Mastra instance the agent
      // is registered with: one instance for every agent, as an application has.
      if (spec.tools.some((t) => t.interruptible)) application().addAgent(built, id);
      agents.set(agent, { agent: built, spec, last: null });
      return { error: null };
    } catch (error) {
      return { error: errorInfo(error) };
    }
  },
  async run({ agent, run, call: request }) {
    const state = agents.get(agent);
    try {
      return { outcome: await call(state, userMessage(request.inputs), request.max_steps ?? state.spec.max_steps,
                                   request.inputs, request.mode, request.base_url) };
    } finally {
      modelCalls.delete(run);
    }
  },
  async resume({ agent, run, request }) {
    const state = agents.get(agent);
    const pause = pauses.get(request.interrupt_id);
    if (pause == null) return unknownPause(request.interrupt_id);
    const answer = request.response.trim();
    if (answer.startsWith('{') && answer.includes('edit')) {
      return { outcome: { error: { type: 'UnsupportedEdit', kind: 'other', fields: {}, message:
        "Mastra's approval only approves or declines the pending call (approveToolCall / declineToolCall): it cannot change its args or tool" } } };
    }
    const target = { runId: pause.runId, toolCallId: pause.toolCallId, maxSteps: pause.cap };
    try {
      const word = answer.toLowerCase();
      const result = word === 'yes' || word === 'y'
        ? await state.agent.approveToolCallGenerate(target)
        : await state.agent.declineToolCallGenerate({ ...target, ...(word === 'no' || word === 'n' ? {} : { reason: request.response }) });
      return { outcome: outcome(state, result, pause.cap, pause.inputs, pause.messages) };
    } catch (error) {
      return { outcome: { error: callErrorInfo(error) } };
    } finally {
      modelCalls.delete(run);
    }
  },
  // No step output constrains the tool name: the suite reads the tools declared in each request.
  step_tool_names: () => ({ names: null }),
  // What generate handed the caller as its trajectory: its response messages and its steps (a
  // suspended run's too), each mutated in place.
  mutate_last_result({ agent, marker }) {
    const last = agents.get(agent).last;
    if (last == null) return { changed: [] };
    const changed = [];
    const { messages, result } = last;
    if (messages.length) {
      changed.push(`result.response.messages (${messages.length} messages)`);
      for (const message of messages) {
        if (typeof message.content === 'string') message.content += ` ${marker}`;
        else for (const part of message.content) if (part.type === 'text') part.text += ` ${marker}`;
      }
      messages.push({ role: 'user', content: marker });
    }
    if (Array.isArray(result.steps) && result.steps.length) {
      changed.push(`result.steps (${result.steps.length} steps)`);
      for (const step of result.steps) step.text = `${step.text ?? ''} ${marker}`;
      result.steps.push({ text: marker });
    }
    return { changed };
  },
});
