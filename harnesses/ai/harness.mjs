// The react-conformance harness for the Vercel AI SDK (npm package `ai`), its tool loop.
//
//   pytest --impl ai        (or --impl cmd:"node harnesses/ai/harness.mjs")
//
// The agent is what an AI SDK user writes: `generateText` (or `streamText`) with tools and a step
// stop condition. Each suite tool is `tool({ description, inputSchema, execute })`, its input
// schema the zod object of the tool's parameters (zod is how the SDK's documentation declares
// tools; a strict object, as the suite's schema has `additionalProperties: false`), and
// `needsApproval: true` when the suite says it must not run before a person approves it.
//
// The model is the SDK's own test double, `MockLanguageModelV4` from `ai/test`: every request
// the loop sends (`doGenerate`, `doStream`) is shown to the suite as an LMCall (the prompt
// messages as text, with each tool call, tool result and approval answer; the tools as
// function declarations) and the scripted turn comes back as the model's content: a step is the
// thought as a text part plus one `tool-call` part per call, its `input` the JSON text the model
// wrote (verbatim when malformed, so the SDK's own parseToolCall meets it); a final answer is a
// text part with no tool call. The mock sits beneath the SDK's retry layer (generateText wraps
// doGenerate in prepareRetries' retry), so a scripted transport fault is answered by the SDK's
// own OpenAI-compatible client (`@ai-sdk/openai-compatible`) over a fetch that fails as scripted:
// the APICallError it throws (isRetryable from the status, or a wrapped fetch failure) is what
// the retry layer judges, with its default maxRetries of 2 and backoff from 2 s. In `http`
// scenarios that client is the model, pointed at the suite's endpoint.
//
// The step cap: a step is one model request, and `stopWhen: isStepCount(N)` (`stepCountIs`)
// stops the loop once N steps completed, so spec.max_steps (or call.max_steps, the cap of that
// one call) maps to it one to one. Without it the SDK stops after one step. On the cap
// generateText returns normally: its last step's finish reason is `tool-calls` and the tools that
// step chose have run; the harness reports `max_steps` when the result shows exactly that (N
// steps, the last one ending in tool calls), the result's own finish reason otherwise.
//
// Approval is the SDK's: a `needsApproval` call ends the run with a `tool-approval-request`
// part and the tool unrun. The run's messages (the user prompt and `response.messages`), kept as
// their JSON as an application persists them, are the saved state; a resume appends a `tool` message with a `tool-approval-response` (yes → approved,
// no → denied, free text → denied with the text as its reason) and calls generateText again.

import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { generateText, isStepCount, streamText, tool } from 'ai';
import { MockLanguageModelV4, convertArrayToReadableStream } from 'ai/test';
import { z } from 'zod';
import { askModel, callTool, currentRun, deepArgsFailures, errorInfo, installedVersion, installedVersions, json, serve, unknownPause } from '../lib/protocol.mjs';
import { faultFetch, generated, lmCall, observation, streamChunks, trajectory } from '../lib/ai-sdk.mjs';
import { replyOutputs, text, userMessage, zodObject } from '../lib/render.mjs';

const VERSION = installedVersion(import.meta.url, 'ai');

// The contract this harness is written against: catalogue 3's capabilities, and each step's
// is_error (a tool result's error-text/error-json output, a stream's tool-error part) and call_id
// (the native toolCallId).
const PROTOCOL = 3;
const CAPABILITIES = ['max-steps-return', 'per-call-cap', 'tool-approval', 'durable-approvals', 'async', 'streaming',
                      'parallel-tool-calls', 'lm-retry', 'http'];
// How the harness fills the contract's derivable fields (conformance.binding.PARITY).
const PARITY = {
  stop_reason: "derived: from the result's steps (generate-text/generate-text.ts, DefaultGenerateTextResult.steps): a last step with finish reason 'stop' is the answer, N steps of a cap of N whose last ended in tool calls the cap stop, as the SDK flags none",
  iterations: "derived: counted from the result's steps, one per model request (generate-text/generate-text.ts, DefaultGenerateTextResult.steps)",
  max_iterations: 'none: on the stop condition generateText raises nothing; it returns the steps so far (generate-text/generate-text.ts, generateText)',
  partial_run: 'none: on the stop condition generateText raises nothing; the result holds its steps and messages',
  concurrency: 'shared',
};
const NOT_CLAIMED = {
  adapters: 'no pluggable format-and-parse layer: the provider package (here @ai-sdk/openai-compatible) formats and parses every call',
  'cap-summary': "on the stop condition generateText returns the steps and the last step's text (generate-text.ts, DefaultGenerateTextResult): no message of what was tried",
  'repeated-error-stop': "a throwing tool becomes a tool-error result and the loop goes on until the stop condition (generate-text.ts, generateText's do-while): no repeated-failure stop",
  'approval-edit': "a tool-approval-response carries only approvalId, approved and reason (provider-utils types/tool-approval-response.ts): the pending call's args cannot be changed",
  signature: 'a native tool-calling loop: generateText takes instructions, a prompt and tools, no signature',
  'max-steps-error': 'on the stop condition generateText returns normally (generate-text.ts, generateText: the do-while loop ends on isStopConditionMet): it has no max-iterations error',
  'max-steps-extract': 'on the stop condition generateText returns the steps so far; it makes no tool-less final call',
  'ask-user': 'the SDK has no built-in tool through which the agent asks the person a question',
};

const DEEP = "generateText throws RangeError 'Maximum call stack size exceeded' (a direct run at 5,000 levels: cloneValue in prompt/clone-model-message.ts recurses into the tool call's args): the run crashes instead of running the tool or refusing the args";
const STATELESS = "approvals are stateless message history: the SDK keeps no pause of its own, a resume is a new generateText over the messages the caller holds (generate-text/collect-tool-approvals.ts reads the approvals from them)";
const KNOWN_FAILURES = {
  ...Object.fromEntries([
    'Resuming keeps the budget the steps before the pause used',
    'Resuming keeps the step cap given to the call and the steps used before the pause',
  ].map((name) => [name, "a resume is a new generateText over the paused messages, and its stop conditions see only that call's own steps (generate-text.ts, generateText: `const steps = []`, then isStopConditionMet({ stopConditions, steps })); isStepCount (stop-condition.ts) compares steps.length, so the resumed call gets the whole cap again and asks the model past it"])),
  'A hung endpoint times out and the call is retried':
    "the SDK sets no request timeout: generateText's `timeout` option is unset by default, so setAbortTimeout (util/set-abort-timeout.ts) arms no timer, and postToApi (provider-utils post-to-api.ts) hands fetch only the caller's abortSignal, undefined here: a request to an endpoint that never answers waits for ever",
  ...deepArgsFailures(DEEP),
  'HITL-8': `${STATELESS}: replaying the answer to a serialised pause whose call already ran runs it again (collect-tool-approvals.ts skips only approvals whose tool result is in the messages given)`,
  ...Object.fromEntries([
    'Resuming the same interrupt twice never runs the tool twice',
    'Answering a pause again after its resumed run paused again never runs a call twice',
  ].map((name) => [name, "approvals are stateless message history: resuming from the paused run's messages twice executes the approved call twice (generate-text/collect-tool-approvals.ts skips only approvals whose tool result is already in those messages)"])),
  'A pause answered through another agent is refused':
    `${STATELESS}: a generateText with another agent's tools takes the approval response in the paused run's messages (collectToolApprovals matches it only to an approval request in those same messages; nothing names the agent that paused) and runs that agent's tool (in a direct run the second agent's delete_file ran)`,
};

// ---------------------------------------------------------------------------------------------
// Tools

function sdkTool(spec) {
  return tool({
    description: spec.description,
    inputSchema: zodObject(z, spec),
    execute: (args) => callTool(spec.name, args),
    ...(spec.interruptible ? { needsApproval: true } : {}),
  });
}

// ---------------------------------------------------------------------------------------------
// The model: what each request shows, and the scripted turn as the model's content

// Model requests per run: a streaming run's events say how many had been made when they arrived.
const modelCalls = new Map();

async function scripted(options) {
  await Promise.resolve();
  const run = currentRun();
  modelCalls.set(run, (modelCalls.get(run) ?? 0) + 1);
  // An answer the script did not expect throws here, in the model: a plain Error, not retried.
  const turn = await askModel(lmCall(options));
  return turn;
}

function openAICompatible(baseURL, fetch) {
  return createOpenAICompatible({ name: 'scripted', baseURL, apiKey: 'placeholder-key', ...(fetch ? { fetch } : {}) }).chatModel('scripted');
}

const mock = new MockLanguageModelV4({
  provider: 'scripted',
  modelId: 'scripted',
  async doGenerate(options) {
    const turn = await scripted(options);
    if (turn.kind === 'fault') return openAICompatible('http://scripted.invalid/v1', faultFetch(turn)).doGenerate(options);
    return generated(turn);
  },
  async doStream(options) {
    const turn = await scripted(options);
    if (turn.kind === 'fault') return openAICompatible('http://scripted.invalid/v1', faultFetch(turn)).doStream(options);
    return { stream: convertArrayToReadableStream(streamChunks(turn)) };
  },
});

// ---------------------------------------------------------------------------------------------
// Reading the result

// Calls awaiting a person's approval: the approval requests of the last step that no response,
// automatic or not, answered.
function pending(step) {
  const answered = new Set(step.content.filter((p) => p.type === 'tool-approval-response').map((p) => p.approvalId));
  return step.content.filter((p) => p.type === 'tool-approval-request' && !p.isAutomatic && !answered.has(p.approvalId));
}

function stopReason(steps, cap) {
  const last = steps.at(-1);
  if (last == null) return null;
  if (last.finishReason === 'stop') return 'finish';
  // The SDK says only that the last step ended in tool calls; with N of N steps taken, that is
  // its stop condition ending the loop.
  if (last.finishReason === 'tool-calls' && steps.length === cap) return 'max_steps';
  return last.finishReason;
}

const agents = new Map();
// Every pause a call made, by its id, whichever agent made it: a person's answer may reach another
// agent than the paused one (HITL-6), and refusing it is the library's part, not the harness's.
const pauses = new Map();

function cap(state, call) {
  return call.max_steps ?? state.spec.max_steps;
}

function options(state, capOf, prompt, baseURL) {
  return {
    model: baseURL ? openAICompatible(baseURL) : mock,
    tools: state.tools,
    ...(state.spec.signature.instructions ? { instructions: state.spec.signature.instructions } : {}),
    ...prompt,
    stopWhen: isStepCount(capOf),
  };
}

// The outcome of a finished generateText/streamText: `before` are the messages it was given;
// `responseMessages` are those of every step (`response` is the last step's only).
function outcome(state, result, before, capOf, inputs) {
  const { steps } = result;
  const handed = result.responseMessages;
  const messages = [...before, ...handed];
  state.last = { result, messages: handed };
  const base = { trajectory: trajectory(messages, { bound: true }), iterations: steps.length };
  const waiting = steps.length ? pending(steps.at(-1)) : [];
  if (waiting.length) {
    const request = waiting[0];
    const call = request.toolCall;
    // The pause as an application persists it between the request and the person's answer: the
    // messages' JSON, not the live objects the caller was handed (durable-approvals).
    pauses.set(request.approvalId, { saved: JSON.stringify({ messages, approvalId: request.approvalId }), capOf, inputs });
    return { ...base, error: {
      type: 'ToolApprovalRequest', kind: 'human-in-the-loop',
      message: `the run ended with ${waiting.length} tool call(s) awaiting approval`,
      fields: {
        // The approval request holds the call and no question for the person.
        question: null, interrupt_id: request.approvalId,
        tool_call: { name: call.toolName, args: json(call.input), call_id: call.toolCallId },
        context: { trajectory: base.trajectory, iteration: steps.length, input_args: json(inputs) },
      },
    } };
  }
  const reason = stopReason(steps, capOf);
  return { ...base, stop_reason: reason,
           outputs: reason === 'finish' ? replyOutputs(state.spec.signature, result.text) : null };
}

// A failed call as the SDK reports it. An APICallError keeps the HTTP status in its statusCode
// property, not in its message (the endpoint's own error message), and a RetryError keeps it on
// its lastError: the status is reported as the error's structured `status` field, as it is given.
function callErrorInfo(error) {
  const info = errorInfo(error);
  const status = error?.statusCode ?? error?.lastError?.statusCode;
  return typeof status === 'number' ? { ...info, fields: { status } } : info;
}

async function call(state, prompt, before, capOf, inputs, mode, baseURL) {
  const args = options(state, capOf, prompt, baseURL);
  if (mode !== 'stream') {
    try {
      return outcome(state, await generateText(args), before, capOf, inputs);
    } catch (error) {
      state.last = null;
      return { error: callErrorInfo(error) };
    }
  }
  // streamText: a step event per tool call once the step that made it finished, read from the
  // SDK's fullStream as it arrives; `done` after the stream's finish.
  const run = currentRun();
  const events = [];
  let failure = null;
  let result;
  try {
    result = streamText({ ...args, onError: () => {} });
    let calls = [];
    let thought = '';
    const results = new Map();
    for await (const part of result.fullStream) {
      if (part.type === 'start-step') {
        calls = [];
        thought = '';
      } else if (part.type === 'text-delta') {
        thought += part.text ?? part.delta ?? '';
      } else if (part.type === 'tool-call') {
        calls.push(part);
      } else if (part.type === 'tool-result') {
        results.set(part.toolCallId, { type: 'json', value: part.output, isError: false });
      } else if (part.type === 'tool-error') {
        results.set(part.toolCallId, { type: 'error-text', value: part.error instanceof Error ? part.error.message : text(part.error),
                                       isError: true });
      } else if (part.type === 'finish-step') {
        for (const c of calls) {
          events.push({ kind: 'step', model_calls: modelCalls.get(run) ?? 0, step: {
            thought: thought || null, tool_name: c.toolName, tool_args: json(c.input),
            observation: results.has(c.toolCallId) ? observation(results.get(c.toolCallId)) : null,
            is_error: results.get(c.toolCallId)?.isError ?? null, call_id: c.toolCallId } });
        }
      } else if (part.type === 'error') {
        failure = part.error;
      }
    }
    if (failure == null) {
      const done = outcome(state, { steps: await result.steps, responseMessages: await result.responseMessages, text: await result.text },
                           before, capOf, inputs);
      events.push({ kind: 'done', model_calls: modelCalls.get(run) ?? 0, stop_reason: done.stop_reason ?? null,
                    outputs: done.outputs ?? null });
      return { ...done, events };
    }
  } catch (error) {
    failure = error;
  }
  state.last = null;
  return { error: callErrorInfo(failure), events };
}

// A person's answer as the SDK's approval response for the pending call.
function approval(response) {
  const answer = response.trim();
  if (['yes', 'y'].includes(answer.toLowerCase())) return { approved: true };
  if (['no', 'n'].includes(answer.toLowerCase())) return { approved: false };
  let edit;
  try {
    edit = answer.startsWith('{') ? JSON.parse(answer).edit : undefined;
  } catch { /* free text */ }
  if (edit && typeof edit === 'object') return null;
  return { approved: false, reason: response };
}

serve({
  hello: () => ({ protocol: PROTOCOL, name: 'ai', version: VERSION, dependencies: installedVersions(import.meta.url),
                  capabilities: CAPABILITIES, not_claimed: NOT_CLAIMED,
                  known_failures: KNOWN_FAILURES, parity: PARITY }),
  // The SDK has no adapters: nothing to configure, nothing to read back.
  configure: () => ({}),
  global_adapter: () => ({ adapter: null }),
  build({ agent, spec }) {
    try {
      const tools = Object.fromEntries(spec.tools.map((t) => [t.name, sdkTool(t)]));
      agents.set(agent, { spec, tools, last: null });
      return { error: null };
    } catch (error) {
      return { error: errorInfo(error) };
    }
  },
  async run({ agent, run, call: request }) {
    const state = agents.get(agent);
    const prompt = userMessage(request.inputs);
    try {
      return { outcome: await call(state, { prompt }, [{ role: 'user', content: prompt }], cap(state, request),
                                   request.inputs, request.mode, request.base_url) };
    } finally {
      modelCalls.delete(run);
    }
  },
  async resume({ agent, run, request }) {
    const state = agents.get(agent);
    const pause = pauses.get(request.interrupt_id);
    if (pause == null) return unknownPause(request.interrupt_id);
    const saved = JSON.parse(pause.saved);
    const answer = approval(request.response);
    if (answer == null) {
      return { outcome: { error: { type: 'UnsupportedEdit', kind: 'other', fields: {}, message:
        "the SDK's tool-approval-response only approves or denies the pending call: it cannot change its args or tool" } } };
    }
    const messages = [...saved.messages, { role: 'tool', content: [{ type: 'tool-approval-response', approvalId: saved.approvalId, ...answer }] }];
    try {
      return { outcome: await call(state, { messages }, messages, pause.capOf, pause.inputs, 'sync', null) };
    } finally {
      modelCalls.delete(run);
    }
  },
  // No step output constrains the tool name: the suite reads the tools declared in each request.
  step_tool_names: () => ({ names: null }),
  mutate_last_result({ agent, marker }) {
    const last = agents.get(agent).last;
    if (last != null) {
      for (const message of last.messages) {
        if (typeof message.content === 'string') message.content += ` ${marker}`;
        else for (const part of message.content) if (part.type === 'text') part.text += ` ${marker}`;
      }
      last.messages.push({ role: 'user', content: marker });
      return { changed: [`result.response.messages (${last.messages.length - 1} messages)`] };
    }
    return { changed: [] };
  },
});
