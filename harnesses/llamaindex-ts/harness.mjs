// The react-conformance harness for LlamaIndex for TypeScript (npm `llamaindex`), its agent loop:
// `agent({ tools, llm })` from @llamaindex/workflow (an AgentWorkflow with one FunctionAgent), with
// tools made by `tool({ name, description, parameters: z.object(...), execute })` from `llamaindex`,
// the form LlamaIndex.TS documents for agents.
//
//   pytest --impl llamaindex-ts      (or --impl cmd:"node harnesses/llamaindex-ts/harness.mjs")
//
// Seam: the OpenAI LLM of @llamaindex/openai with its defaults (model gpt-4o, maxRetries 10, timeout
// 60 s), whose documented `additionalSessionOptions` reach the `openai` client it builds: there a
// `fetch` answers every chat-completions request from the script (harnesses/lib/chat-completions.mjs),
// so the LLM's own request building and stream parsing (FunctionAgent.takeStep always streams) and
// the client's retries run as in a user's run. In the `http` profile the LLM's `baseURL` is
// CallRequest.base_url.
//
// The run is `workflow.runStream(input)`, read to its stopAgentEvent: AgentWorkflow.run is exactly
// that (packages/workflow/src/agent/agent-workflow.ts: `runStream(...).toArray()`, then a check that
// the last event is the stop event), and the events are the library's own record of the run: an
// agentStepEvent per model call (its reply's text the thought, its tool calls), an
// agentToolCallResultEvent per tool result. Streaming is the same stream: a step event at each
// agentToolCallResultEvent. Each run gets its state from the workflow (createInitialState: a new
// memory), so one agent serves every run.
//
// The agent has no step cap: AgentWorkflow loops until a reply calls no tool, and `agent()`'s one
// limit, `timeout`, is passed to the AgentWorkflow constructor, which never reads it.
//
// An error in a workflow handler (the LLM's, a tool lookup's) does not reach the caller: the
// workflow's handlers are async, and @llamaindex/workflow-core's runHandler (its src/core/context.ts)
// chains `result.then(...)` with no catch, so the rejection is
// unhandled; run() never settles, and Node ends the process (seen in a direct run). The harness
// keeps its process alive as an application must, with a process 'unhandledRejection' listener,
// and ends the runs in flight with that error, its message saying it escaped the run.
//
// The client's retry backoff (the `openai` client's, maxRetries 10: 0.5 s doubling to 8 s, about
// 48 s in all) is waited on the suite's model clock: a timer the client's sleep
// (openai/internal/utils/sleep) sets is reported with a `sleep` notice and fires at once. The
// delays and the number of retries are the client's own; only the wall-clock wait is skipped.

import { OpenAI } from '@llamaindex/openai';
import { agent, agentStepEvent, agentToolCallResultEvent, stopAgentEvent } from '@llamaindex/workflow';
import { tool } from 'llamaindex';
import { z } from 'zod';
import { modelCalls, scriptedFetch } from '../lib/chat-completions.mjs';
import { callTool, currentRun, deepArgsFailures, errorInfo, installedVersion, installedVersions, json, notifySleep, serve, wire } from '../lib/protocol.mjs';
import { replyOutputs, userMessage, zodObject } from '../lib/render.mjs';

const VERSION = installedVersion(import.meta.url, 'llamaindex');
const NAME = 'llamaindex-ts';
const WORKFLOW = 'packages/workflow/src/agent/agent-workflow.ts';
const PROTOCOL = 3;
const CAPABILITIES = ['async', 'streaming', 'parallel-tool-calls', 'lm-retry', 'http'];
const NO_CAP = `the agent has no step cap: AgentWorkflow (${WORKFLOW}) loops until a reply calls no tool, and agent()'s only limit, \`timeout\`, is never read by the AgentWorkflow constructor`;
const NOT_CLAIMED = {
  signature: 'a native tool-calling loop: a system prompt, chat messages and tools, no signature',
  adapters: 'no pluggable format-and-parse layer: the LLM class (here OpenAI) formats and parses every call',
  'max-steps-error': NO_CAP,
  'max-steps-extract': NO_CAP,
  'max-steps-return': NO_CAP,
  'cap-summary': NO_CAP,
  'per-call-cap': `run() and runStream() take only the input, a chat history, a state and a response format (${WORKFLOW}): no step cap`,
  'repeated-error-stop': `a tool's error becomes an 'Error: ...' tool result every time (${WORKFLOW}, executeToolCalls) and the loop asks the model again: no count of repeated failures and no stop`,
  'ask-user': 'the agent has no built-in tool through which the model asks the person a question',
  'tool-approval': `no pause or approval before a tool runs: executeToolCalls (${WORKFLOW}) runs every call of a reply`,
  'approval-edit': 'no pause before a tool runs, so no pending call to edit',
  'durable-approvals': 'no pause before a tool runs, so none to keep',
};
const PARITY = {
  stop_reason: "derived: the run's stopAgentEvent is the answer (the workflow stops only when a reply calls no tool)",
  iterations: 'derived: counted from the agentStepEvents of the run, one per model call',
  max_iterations: 'none: the agent has no step cap and so no cap error',
  partial_run: 'none: the agent has no step cap and so no cap error',
  concurrency: 'shared',
};
const AGENT = 'packages/workflow/src/agent/function-agent.ts';
const LLM = 'packages/providers/openai/src/llm.ts';
const TOOL = 'packages/core/src/tools/function-tool.ts';
// Thrown in an async workflow handler, an error reaches no caller (see the header).
const ESCAPES = 'thrown in an async workflow handler, it is an unhandled rejection that run() never reports and that ends the Node process';
const UNCHECKED = `FunctionTool.call (${TOOL}) checks the input with the tool's zod schema, and on a failure only logs it (logger.warn) and calls the function with the input as it came`;
const KNOWN_FAILURES = {
  ...Object.fromEntries(['The step cap stops a loop that never chooses finish', 'A step cap of one allows exactly one step'].map((name) =>
    [name, `${NO_CAP} (in a direct run a model that kept calling a tool was asked 30 times, until the script stopped it)`])),
  'LOOP-5': `an unknown tool name ends the run: FunctionAgent.getToolCallFromResponseChunk (${AGENT}) throws Error 'Tools not found: <name>' while the reply streams, before any tool runs; ${ESCAPES} (seen in a direct run)`,
  'ARGS-2': `JSON args that are not an object reach the tool: getToolCallFromResponseChunk (${AGENT}) passes the parsed value on as it is, or text that is not JSON as { rawInput }, and ${UNCHECKED} (in a direct run the tool ran with [50, "Ann"])`,
  'ARGS-3': `malformed JSON args end the run: OpenAI.streamChat (${LLM}) JSON.parses a call's streamed arguments when the reply finishes, with no catch; the SyntaxError, ${ESCAPES} (seen in a direct run)`,
  "Tool args that break the tool's schema never reach it with a wrong or missing value": `args that break the tool's schema reach it: ${UNCHECKED} (in a direct run the tool ran with amount 'fifty')`,
  'ARGS-6': `an undeclared arg reaches the tool: ${UNCHECKED} (in a direct run the tool ran with memo 'rent' under a z.strictObject)`,
  ...deepArgsFailures(`the tool gets the deep input intact, but the next request is never sent: OpenAI.toOpenAIMessage (${LLM}) JSON.stringifies the call's input, which overflows the stack (RangeError 'Maximum call stack size exceeded'); ${ESCAPES} (seen in a direct run, 5,000 and 100,000 levels)`),
};

// -- the clock and the escaped errors ----------------------------------------------------------------

const SLEEP = /openai[\\/]internal[\\/]utils[\\/]sleep\.m?js/;
const setTimer = globalThis.setTimeout;
globalThis.setTimeout = function setTimeout(callback, ms, ...rest) {
  if (currentRun() !== undefined && SLEEP.test(new Error().stack ?? '')) {
    notifySleep((ms ?? 0) / 1000);
    return setTimer(callback, 0, ...rest);
  }
  return setTimer(callback, ms, ...rest);
};

// The runs in flight, each with the way to end it with an error that escaped the workflow.
const inFlight = new Set();
process.on('unhandledRejection', (reason) => {
  if (inFlight.size === 0) throw reason; // outside any run: the default, which ends the process
  for (const end of inFlight) end(reason);
});

/** An error a workflow handler threw, which reached no caller: its type, and its message saying so. */
function escaped(reason) {
  const info = errorInfo(reason);
  return { ...info, message: `${info.message} (thrown in a workflow handler, it escaped the run as an unhandled rejection: run() never settled)` };
}

// -- the tools --------------------------------------------------------------------------------------

function runnable(spec) {
  return tool({ name: spec.name, description: spec.description, parameters: zodObject(z, spec),
                execute: (args) => callTool(spec.name, args) });
}

/** The agent: its tools, an OpenAI LLM with its defaults, answered from the script or, with a
 * `baseURL`, pointed at it; the instructions as its system prompt. */
function build(spec, baseURL) {
  let llm = null;
  // The scripted fetch reads the request timeout the LLM gives its client (its `timeout`).
  const scripted = { additionalSessionOptions: { fetch: scriptedFetch({ get timeout() { return llm.timeout; } }) } };
  llm = baseURL != null
    ? new OpenAI({ apiKey: 'placeholder-key', baseURL })
    : new OpenAI({ apiKey: 'scripted', baseURL: 'http://scripted.invalid/v1', ...scripted });
  const instructions = spec.signature.instructions;
  return agent({ tools: spec.tools.map(runnable), llm, ...(instructions ? { systemPrompt: instructions } : {}) });
}

// -- the run ----------------------------------------------------------------------------------------

function observation(text) {
  try {
    return json(JSON.parse(text));
  } catch {
    return json(text);
  }
}

/** One step per tool call of each agentStepEvent, in order: the reply's text its thought, the
 * agentToolCallResultEvent with its id its observation and isError flag. */
function trajectory(events) {
  const results = new Map();
  for (const event of events) if (agentToolCallResultEvent.include(event)) results.set(event.data.toolId, event.data.toolOutput);
  const steps = [];
  for (const event of events) {
    if (!agentStepEvent.include(event)) continue;
    const content = event.data.response.content;
    const thought = typeof content === 'string' && content ? content : null;
    for (const call of event.data.toolCalls) {
      const result = results.get(call.toolId);
      steps.push({ thought, tool_name: call.toolName, tool_args: wire(call.toolKwargs),
                   observation: result === undefined ? null : observation(result.result),
                   is_error: result === undefined ? null : Boolean(result.isError), call_id: call.toolId ?? null });
    }
  }
  return steps;
}

const agents = new Map();

serve({
  hello: () => ({ protocol: PROTOCOL, name: NAME, version: VERSION, dependencies: installedVersions(import.meta.url),
                  capabilities: CAPABILITIES, not_claimed: NOT_CLAIMED, known_failures: KNOWN_FAILURES, parity: PARITY }),
  // The agent has no reply formats to choose: every request is native tool calling.
  configure: () => ({}),
  global_adapter: () => ({ adapter: null }),
  build({ agent: id, spec }) {
    try {
      agents.set(id, { spec, workflow: build(spec, null), last: [] });
      return { error: null };
    } catch (error) {
      return { error: errorInfo(error) };
    }
  },
  async run({ agent: id, call }) {
    const state = agents.get(id);
    state.last = [];
    const workflow = call.base_url == null ? state.workflow : build(state.spec, call.base_url);
    const stream = call.mode === 'stream';
    const seen = [];
    const events = [];
    let steps = 0;
    let end;
    const lost = new Promise((resolve, reject) => { end = (reason) => reject(Object.assign(new Error(), { escaped: reason })); });
    inFlight.add(end);
    try {
      const read = (async () => {
        for await (const event of workflow.runStream(userMessage(call.inputs))) {
          seen.push(event);
          if (stream && agentToolCallResultEvent.include(event)) {
            const done = trajectory(seen).filter((s) => s.observation != null);
            events.push(...done.slice(steps).map((step) => ({ kind: 'step', model_calls: modelCalls(), step })));
            steps = done.length;
          }
        }
      })();
      await Promise.race([read, lost]);
      const last = seen.at(-1);
      // AgentWorkflow.run's own check (agent-workflow.ts).
      if (!stopAgentEvent.include(last)) throw new Error(`Agent stopped with unexpected ${last?.toString() ?? 'unknown'} event.`);
      state.last = [last.data];
      const out = { outputs: replyOutputs(state.spec.signature, last.data.result), trajectory: trajectory(seen),
                    iterations: seen.filter((e) => agentStepEvent.include(e)).length, stop_reason: 'finish' };
      if (!stream) return { outcome: out };
      events.push({ kind: 'done', model_calls: modelCalls(), stop_reason: out.stop_reason, outputs: out.outputs });
      return { outcome: { ...out, events } };
    } catch (error) {
      const out = { trajectory: trajectory(seen), iterations: seen.filter((e) => agentStepEvent.include(e)).length,
                    error: 'escaped' in error ? escaped(error.escaped) : errorInfo(error) };
      return { outcome: stream ? { ...out, events } : out };
    } finally {
      inFlight.delete(end);
    }
  },
  // Native function calling: the model may name exactly the declared tools.
  step_tool_names: () => ({ names: null }),
  // What the run returned is its stop event's data: the answer, its message and the run's state
  // (whose memory holds the conversation), handed out as they are.
  mutate_last_result({ agent: id, marker }) {
    const changed = [];
    for (const data of agents.get(id).last) {
      data.result = marker;
      if (data.message) data.message.content = marker;
      changed.push('the stop event\'s result and message');
    }
    return { changed: changed.length ? changed : null };
  },
});
