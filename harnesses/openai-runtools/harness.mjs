// The react-conformance harness for the OpenAI Node SDK's own tool loop (npm `openai`):
// `client.chat.completions.runTools`, with zod tools made by `zodFunction` (openai/helpers/zod).
//
//   pytest --impl openai-runtools      (or --impl cmd:"node harnesses/openai-runtools/harness.mjs")
//
// Seam: the SDK's real client, whose documented `fetch` option answers every chat-completions
// request from the script (harnesses/lib/chat-completions.mjs, shared with harnesses/openai-agents),
// so the runner's request building, reply parsing, tool dispatch and the client's default retries (2,
// with backoff) all run as in a user's run. In the `http` profile the client points at
// CallRequest.base_url.
//
// There is no agent object: an "agent" is what a user passes to every runTools call, the model, the
// instructions as a system message and the tools. The step cap is the RunnerOptions
// `maxChatCompletions` (default 10), one chat completion per step (AbstractChatCompletionRunner.ts,
// _runTools: `for (let i = 0; i < maxChatCompletions; ++i)`), given to each call: a per-call cap.
// On the cap the loop simply ends after the last completion's tools ran and the runner resolves;
// nothing flags the cap, so the harness reports `max_steps` when the run shows exactly that (N
// completions of a cap of N, the last one asking for tools), `finish` otherwise.
//
// Tools are `zodFunction({ name, description, parameters: z.object(...), function })`, the zod form
// the SDK's helpers document for runTools: strict, its args parsed by the zod schema before the
// callback runs. A tool taking a free-form object, which zodFunction's strict schema cannot
// declare (it throws 'Object schema at `properties/data` must set `additionalProperties: false` to
// be compatible with strict Structured Outputs' for a z.record), is the documented plain function
// tool instead, as REQUIREMENTS.md's rules for bindings say:
// `{ type: 'function', function: { name, description, parameters, function, parse: JSON.parse } }`.
// Streaming is `runTools({ ..., stream: true })`: a step event at each `functionToolCallResult`.

import OpenAI from 'openai';
import { zodFunction } from 'openai/helpers/zod';
import { z } from 'zod';
import { modelCalls, openAIClient, toolArgs } from '../lib/chat-completions.mjs';
import { callTool, errorInfo, installedVersion, installedVersions, json, serve, wire } from '../lib/protocol.mjs';
import { replyOutputs, userMessage, zodObject } from '../lib/render.mjs';

const VERSION = installedVersion(import.meta.url, 'openai');
const NAME = 'openai-runtools';

// The contract this harness is written against: catalogue 3's capabilities, and each step's
// call_id (the tool call's id). is_error is null: a tool message has no error flag, and a refused
// call's message is only the parse error's text (AbstractChatCompletionRunner.ts, runToolCall).
const PROTOCOL = 3;
const CAPABILITIES = ['max-steps-return', 'per-call-cap', 'async', 'streaming', 'parallel-tool-calls', 'lm-retry', 'http'];
const NOT_CLAIMED = {
  adapters: 'no pluggable format-and-parse layer: runTools sends chat-completions requests and parses their replies itself',
  'cap-summary': 'on maxChatCompletions the runner just stops (AbstractChatCompletionRunner.ts, _runTools); finalContent() is the last reply\'s text, no message of what was tried',
  'repeated-error-stop': 'runTools has no repeated-failure stop: it asks the model again after every refused call until maxChatCompletions',
  'tool-approval': 'runTools runs every call the model makes (AbstractChatCompletionRunner.ts, runToolCall): no approval step or pause',
  'approval-edit': 'runTools has no approval, so no pending call to edit',
  'durable-approvals': 'runTools has no approval or pause to serialise',
  signature: 'a native tool-calling loop: chat messages and tools, no signature',
  'max-steps-error': 'on maxChatCompletions the runner resolves normally (AbstractChatCompletionRunner.ts, _runTools: the for loop ends): it has no max-iterations error',
  'max-steps-extract': 'on maxChatCompletions the runner makes no tool-less final call; the loop ends after the last completion\'s tools ran',
  'ask-user': 'the SDK has no built-in tool through which the model asks the person a question',
};
// How the harness fills the contract's derivable fields (conformance.binding.PARITY).
const PARITY = {
  stop_reason: "derived: a run whose last chat completion asked for no tool is the answer; N completions of a cap of N whose last asked for tools is the cap stop, as the runner flags none (AbstractChatCompletionRunner.ts, _runTools)",
  iterations: 'derived: counted from runner.allChatCompletions(), one per model request',
  max_iterations: 'none: on maxChatCompletions the runner raises nothing; it resolves with its messages',
  partial_run: 'none: on maxChatCompletions the runner raises nothing; runner.messages holds the run',
  concurrency: 'shared',
};
const THROWS = "a tool that throws ends the run: runToolCall rethrows the callback's error and _runTools (lib/AbstractChatCompletionRunner.ts) throws the first rejected result of its Promise.allSettled, so the model never sees an error observation (in a direct run finalContent() rejected with OpenAIError 'the disk is on fire' after one completion)";
const MALFORMED = "malformed args of a strict tool (zodFunction's are strict) crash the run before any tool runs: _createChatCompletion parses the completion (parseChatCompletion, lib/parser.ts), whose parseToolCall JSON.parses a strict tool's arguments and throws SyntaxError 'Error reading response: invalid structured output JSON.' (in a direct run finalContent() rejected with it, the tool unrun)";
const KNOWN_FAILURES = {
  'A raising tool becomes an error observation bound to its call, and the loop goes on': THROWS,
  'A tool that raises on its second call still has each error bound to its own call': THROWS,
  'ARGS-3': MALFORMED,
};

// -- the tools --------------------------------------------------------------------------------------

const JSON_TYPES = { str: 'string', int: 'integer', float: 'number', bool: 'boolean', list: 'array', dict: 'object' };

function runnable(spec) {
  const run = (args) => callTool(spec.name, args);
  if (!spec.parameters.some((p) => p.type === 'dict')) {
    return zodFunction({ name: spec.name, description: spec.description, parameters: zodObject(z, spec), function: run });
  }
  const properties = Object.fromEntries(spec.parameters.map((p) => [p.name, { type: JSON_TYPES[p.type], description: p.description }]));
  return {
    type: 'function',
    function: {
      name: spec.name, description: spec.description, function: run, parse: JSON.parse,
      parameters: { type: 'object', properties, required: spec.parameters.map((p) => p.name), additionalProperties: false },
    },
  };
}

// -- the run ----------------------------------------------------------------------------------------

// The tool calls among the runner's messages, in order, each with its tool message's content and
// the text of the assistant message that made it (its thought).
function steps(messages) {
  const outputs = new Map();
  for (const m of messages) if (m.role === 'tool') outputs.set(m.tool_call_id, m.content);
  const found = [];
  for (const m of messages) {
    if (m.role !== 'assistant' || !m.tool_calls?.length) continue;
    const thought = typeof m.content === 'string' && m.content ? m.content : null;
    for (const call of m.tool_calls) {
      found.push({ thought, tool_name: call.function.name, tool_args: wire(toolArgs(call.function.arguments)),
                   observation: outputs.has(call.id) ? json(outputs.get(call.id)) : null, is_error: null,
                   call_id: call.id ?? null });
    }
  }
  return found;
}

const agents = new Map();

function params(state, inputs) {
  const instructions = state.spec.signature.instructions;
  return {
    model: 'scripted',
    messages: [...(instructions ? [{ role: 'system', content: instructions }] : []), { role: 'user', content: userMessage(inputs) }],
    tools: state.tools,
  };
}

async function outcome(state, runner, cap) {
  state.last = [runner.messages];
  const trajectory = steps(runner.messages);
  const completions = runner.allChatCompletions();
  const last = completions.at(-1)?.choices[0]?.message;
  const capped = completions.length === cap && last?.tool_calls?.length > 0;
  const final = capped ? null : await runner.finalContent();
  return {
    outputs: capped ? null : replyOutputs(state.spec.signature, final),
    trajectory, iterations: completions.length, stop_reason: capped ? 'max_steps' : 'finish',
  };
}

function failed(state, runner, error) {
  if (runner == null) return { error: errorInfo(error) };
  state.last = [runner.messages];
  return { trajectory: steps(runner.messages), iterations: runner.allChatCompletions().length, error: errorInfo(error) };
}

serve({
  hello: () => ({ protocol: PROTOCOL, name: NAME, version: VERSION, dependencies: installedVersions(import.meta.url),
                  capabilities: CAPABILITIES, not_claimed: NOT_CLAIMED, known_failures: KNOWN_FAILURES, parity: PARITY }),
  // runTools has no reply formats to choose: every request is native tool calling.
  configure: () => ({}),
  global_adapter: () => ({ adapter: null }),
  build({ agent, spec }) {
    try {
      agents.set(agent, { spec, tools: spec.tools.map(runnable), last: [] });
      return { error: null };
    } catch (error) {
      return { error: errorInfo(error) };
    }
  },
  async run({ agent, call }) {
    const state = agents.get(agent);
    state.last = [];
    const cap = call.max_steps ?? state.spec.max_steps;
    const client = openAIClient(OpenAI, call.base_url);
    const stream = call.mode === 'stream';
    const events = [];
    let runner;
    try {
      runner = client.chat.completions.runTools({ ...params(state, call.inputs), ...(stream ? { stream: true } : {}) },
                                                { maxChatCompletions: cap });
      if (stream) {
        runner.on('functionToolCallResult', () => {
          const done = steps(runner.messages).filter((s) => s.observation != null);
          events.push({ kind: 'step', model_calls: modelCalls(), step: done.at(-1) ?? null });
        });
      }
      await runner.done();
      const out = await outcome(state, runner, cap);
      if (!stream) return { outcome: out };
      events.push({ kind: 'done', model_calls: modelCalls(), stop_reason: out.stop_reason, outputs: out.outputs });
      return { outcome: { ...out, events } };
    } catch (error) {
      const out = failed(state, runner, error);
      return { outcome: stream ? { ...out, events } : out };
    }
  },
  // Native function calling: the model may name exactly the declared tools.
  step_tool_names: () => ({ names: null }),
  mutate_last_result({ agent, marker }) {
    const changed = [];
    for (const messages of agents.get(agent).last) {
      changed.push(`runner.messages (${messages.length} messages)`);
      for (const m of messages) if (m.role === 'tool') m.content = marker;
      messages.push(marker);
    }
    return { changed };
  },
});
