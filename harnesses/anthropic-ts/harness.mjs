// The react-conformance harness for the Anthropic TypeScript SDK's tool runner (npm
// `@anthropic-ai/sdk`): `client.beta.messages.toolRunner`, with zod tools made by `betaZodTool`
// (@anthropic-ai/sdk/helpers/beta/zod). The TypeScript sibling of the Python binding
// conformance/bindings/anthropic_tool_runner.py.
//
//   pytest --impl anthropic-ts      (or --impl cmd:"node harnesses/anthropic-ts/harness.mjs")
//
// Seam: the SDK's real client (its defaults: 2 retries, with backoff), whose documented `fetch`
// option answers the Messages API from the script (harnesses/lib/messages-api.mjs), so the runner's
// request building (message threads by default: each turn after the first sends only the new
// messages, continuing the thread the endpoint holds), the client's reply and stream parsing and its
// retries all run as in a user's run. In the `http` profile the client points at CallRequest.base_url.
//
// There is no agent object: an "agent" is what a user passes to every toolRunner call, the model,
// the system prompt and the tools. Step cap: `max_iterations`, "Maximum number of iterations (API
// requests) to make in the tool execution loop" (lib/tools/BetaToolRunner.ts, BetaToolRunnerSettings):
// after N replies the loop ends, the Nth reply's tools run first, and nothing flags the cap, so the
// harness reports `max_steps` when the run shows exactly that (N replies of a cap of N, the last a
// tool_use message), as the Python binding does. It is a parameter of each runner: a per-call cap.
// A run's replies are what iterating the runner yields; each reply's tool results are
// `runner.generateToolResponse()` (cached, so the runner reuses them: no tool runs twice), the SDK's
// documented way to read them. Streaming is `stream: true`: the runner yields a BetaMessageStream per
// reply; a step event follows each reply's tool results.
//
// Tools are `betaZodTool({ name, description, inputSchema: z.strictObject(...), run })`, the zod form
// the SDK documents for the tool runner: the input is parsed by the zod schema before `run` runs. A
// tool's value is returned as the text `run` returns (a string as it is, null as null, anything else
// as JSON), as the Python binding returns it.
//
// Where the two SDKs differ, so do the verdicts. The Python binding's ARGS-4 and ARGS-6 fail because
// its function tools replace pydantic's error with 'Invalid arguments for function <name>'; here
// runRunnableTool (lib/tools/BetaRunnableTool.ts) answers a failed zod parse with `Error: <the
// ZodError's message>`, which names the path of the wrong-typed field and the unrecognized key. Its
// ARGS-5 rows fail on Python's recursive JSON parser; V8's JSON.parse is not recursive, and a
// 5,000-deep input reaches the tool intact (both seen in a direct run of the runner).

import Anthropic from '@anthropic-ai/sdk';
import { betaZodTool } from '@anthropic-ai/sdk/helpers/beta/zod';
import { z } from 'zod';
import { anthropicClient, modelCalls } from '../lib/messages-api.mjs';
import { callTool, errorInfo, installedVersion, installedVersions, json, serve, wire } from '../lib/protocol.mjs';
import { replyOutputs, userMessage, zodObject } from '../lib/render.mjs';

const VERSION = installedVersion(import.meta.url, '@anthropic-ai/sdk');
const NAME = 'anthropic-ts';
// The model id and reply budget every request names (the endpoint answers any), as the Python binding's.
const MODEL = 'claude-sonnet-4-5';
const MAX_TOKENS = 1024;
const RUNNER = 'lib/tools/BetaToolRunner.ts';

// The contract this harness is written against: catalogue 3's capabilities, and each step's
// call_id (the tool_use block's id) and is_error (the tool_result's flag).
const PROTOCOL = 3;
const CAPABILITIES = ['max-steps-return', 'per-call-cap', 'async', 'streaming', 'parallel-tool-calls', 'lm-retry', 'http'];
const NOT_CLAIMED = {
  signature: 'a native tool-calling loop: a system prompt, messages and tools, no signature',
  adapters: 'no pluggable format-and-parse layer: the runner speaks the Messages API only',
  'max-steps-error': `on max_iterations the loop ends (${RUNNER}, BetaToolRunner's async iterator: \`break\`) and the runner resolves with the last reply; nothing is thrown`,
  'max-steps-extract': `on max_iterations the loop ends (${RUNNER}, BetaToolRunner's async iterator): no tool-less final call`,
  'cap-summary': 'on max_iterations the last reply, a tool_use message, is all that is returned: no message for the user of what was tried',
  'repeated-error-stop': `a failing tool's error goes back as an is_error tool_result every time (${RUNNER}, runToolCall; lib/tools/BetaRunnableTool.ts, runRunnableTool): no count of repeated failures and no stop`,
  'ask-user': 'the SDK ships no tool for asking the person a question',
  'tool-approval': `no pause before a tool runs: generateToolResponse (${RUNNER}) runs every tool_use block of a reply; the \`confirm\` callback belongs to the SDK's own toolsets (browser, computer), not to a user's tools`,
  'approval-edit': 'no pause before a tool runs, so no pending call to edit',
  'durable-approvals': 'no pause before a tool runs, so none to keep',
};
// How the harness fills the contract's derivable fields (conformance.binding.PARITY).
const PARITY = {
  stop_reason: `derived: the runner's own record, its replies: max_iterations replies, the last a tool_use message, is the cap (${RUNNER}, the async iterator's max_iterations check); a reply that ends the turn (stop_reason end_turn) is the finish`,
  iterations: 'derived: the replies the runner yielded, one per model call',
  max_iterations: 'none: no cap error: on max_iterations the runner resolves with the last reply',
  partial_run: 'none: no cap error to carry it: the replies are what the runner yielded',
  concurrency: `per-run: a runner holds one conversation (${RUNNER}: it "runs over a \`BetaMessageThread\`, which holds the conversation and sends each turn", and refuses a second iteration: 'Cannot iterate over a consumed stream'), so each call makes its own`,
};
const KNOWN_FAILURES = {};

// -- the tools --------------------------------------------------------------------------------------

function runnable(spec) {
  return betaZodTool({
    name: spec.name, description: spec.description, inputSchema: zodObject(z, spec),
    run: async (args) => {
      const value = await callTool(spec.name, args);
      return value == null || typeof value === 'string' ? value : JSON.stringify(value);
    },
  });
}

// -- the run ----------------------------------------------------------------------------------------

function resultText(content) {
  if (Array.isArray(content)) return content.map((b) => (b && typeof b === 'object' ? String(b.text ?? '') : '')).join('');
  return content == null ? '' : String(content);
}

function toolArgs(text) {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/** One step per tool_use block, in order: the reply's text its thought, the tool_result with its id
 * its observation and is_error flag (null while it has no result). */
function trajectory(replies, results) {
  const steps = [];
  for (const reply of replies) {
    const thought = reply.content.filter((b) => b.type === 'text').map((b) => b.text).join('') || null;
    for (const block of reply.content) {
      if (block.type !== 'tool_use') continue;
      const result = results.get(block.id);
      steps.push({ thought, tool_name: block.name, tool_args: wire(block.input),
                   observation: result === undefined ? null : json(toolArgs(resultText(result.content))),
                   is_error: result === undefined ? null : Boolean(result.is_error), call_id: block.id });
    }
  }
  return steps;
}

/** Keep a reply and the tool results the runner made for it (its cached response). */
async function collect(runner, reply, replies, results) {
  replies.push(reply);
  const response = await runner.generateToolResponse();
  for (const result of response?.content ?? []) results.set(result.tool_use_id, result);
}

const agents = new Map();

function outcome(state, cap, replies, results, error) {
  state.last = [...replies];
  const steps = trajectory(replies, results);
  if (error !== undefined) return { trajectory: steps, iterations: replies.length, error: errorInfo(error) };
  const last = replies.at(-1);
  if (last !== undefined && last.stop_reason !== 'tool_use') {
    const text = last.content.filter((b) => b.type === 'text').map((b) => b.text).join('');
    return { outputs: replyOutputs(state.spec.signature, text), trajectory: steps, iterations: replies.length, stop_reason: 'finish' };
  }
  return { trajectory: steps, iterations: replies.length, stop_reason: replies.length >= cap ? 'max_steps' : null };
}

serve({
  hello: () => ({ protocol: PROTOCOL, name: NAME, version: VERSION, dependencies: installedVersions(import.meta.url),
                  capabilities: CAPABILITIES, not_claimed: NOT_CLAIMED, known_failures: KNOWN_FAILURES, parity: PARITY }),
  // The runner has no reply formats to choose: every request is native tool calling.
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
    const stream = call.mode === 'stream';
    const client = anthropicClient(Anthropic, call.base_url, state.tools.length > 0);
    const system = state.spec.signature.instructions;
    const replies = [];
    const results = new Map();
    const events = [];
    try {
      const runner = client.beta.messages.toolRunner({
        model: MODEL, max_tokens: MAX_TOKENS, max_iterations: cap, tools: state.tools,
        messages: [{ role: 'user', content: userMessage(call.inputs) }],
        ...(system ? { system } : {}), ...(stream ? { stream: true } : {}),
      });
      for await (const item of runner) {
        await collect(runner, stream ? await item.finalMessage() : item, replies, results);
        if (stream) {
          for (const step of trajectory(replies.slice(-1), results)) events.push({ kind: 'step', model_calls: modelCalls(), step });
        }
      }
      const out = outcome(state, cap, replies, results);
      if (!stream) return { outcome: out };
      events.push({ kind: 'done', model_calls: modelCalls(), stop_reason: out.stop_reason, outputs: out.outputs ?? null });
      return { outcome: { ...out, events } };
    } catch (error) {
      const out = outcome(state, cap, replies, results, error);
      return { outcome: stream ? { ...out, events } : out };
    }
  },
  // Native tool calling: the model may name exactly the declared tools.
  step_tool_names: () => ({ names: null }),
  // What the call returned is its last reply; the replies the runner yielded are the SDK's parsed
  // messages, handed out as they are.
  mutate_last_result({ agent, marker }) {
    const last = agents.get(agent).last;
    if (!last.length) return { changed: null };
    for (const reply of last) {
      for (const block of reply.content) {
        if (block.type === 'text') block.text = marker;
        else if (block.type === 'tool_use' && block.input && typeof block.input === 'object') block.input[marker] = marker;
      }
    }
    return { changed: [`the ${last.length} replies the runner yielded (their text and tool_use input)`] };
  },
});
