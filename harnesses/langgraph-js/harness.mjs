// The react-conformance harness for LangGraph.js (npm `@langchain/langgraph`), its prebuilt ReAct
// agent: `createReactAgent` from `@langchain/langgraph/prebuilt` (a graph of an `agent` node that
// calls the chat model and a `tools` node, a ToolNode, looping until a reply calls no tool).
//
//   pytest --impl langgraph-js      (or --impl cmd:"node harnesses/langgraph-js/harness.mjs")
//
// Seam: `ScriptedChat`, a BaseChatModel subclass (how LangChain.js plugs in a chat model). Its
// `bindTools` keeps the declarations as OpenAI tools in the call options, as the provider
// integrations do, so each request shows the suite the tools the agent declared. A step turn
// becomes an AIMessage through @langchain/core's own parseToolCall / makeInvalidToolCall, as
// @langchain/openai builds one from a completion: malformed arguments are invalid_tool_calls.
// Transport retries live in the provider packages (their AsyncCaller around the client request),
// beneath no seam of createReactAgent's own: lm-retry and http are not claimed, as for the Python
// langchain binding.
//
// Tools are `tool(fn, { name, description, schema })` from @langchain/core/tools with a zod object
// of the parameters (strict, as the suite's schema has `additionalProperties: false`).
//
// The step cap: `recursionLimit` counts graph super-steps, not model calls. A step is two
// super-steps (the agent node, then the tools node), so N steps are recursionLimit = 2N: the N-th
// model call still answers, and the (N+1)-th raises GraphRecursionError (pregel/loop.js: stop =
// step + recursionLimit + 1). It is an option of each invoke, so the per-call cap is the library's.
// GraphRecursionError carries only its message: the partial run is the run's thread state, read
// through the documented `graph.getState(config)` of the agent's checkpointer.
//
// Every agent has a MemorySaver checkpointer (as the docs configure one: `createReactAgent({ ...,
// checkpointer })`); the agents of one harness are agents of one application, so they share one
// checkpointer (as an application configures it once), each run on a thread id of its own, so that
// no run sees another's messages.
//
// Approval is LangGraph's documented human-in-the-loop for createReactAgent: the tool calls
// `interrupt()` with a HumanInterrupt (@langchain/langgraph/prebuilt's schema: action_request,
// config, description) before it runs, under that checkpointer; the person's answer resumes that
// interrupt by its id, `Command({ resume: { [id]: HumanResponse } })`:
// accept (yes) runs the call, edit runs it with the edited args, response (free text) hands the
// text back as the tool's result (the documented tool wrapper's branches); ignore (a bare no), or
// an edit naming another tool, throws as the docs' example does, and ToolNode shows the error.

import { BaseChatModel } from '@langchain/core/language_models/chat_models';
import { AIMessage } from '@langchain/core/messages';
import { makeInvalidToolCall, parseToolCall } from '@langchain/core/output_parsers/openai_tools';
import { tool } from '@langchain/core/tools';
import { convertToOpenAITool } from '@langchain/core/utils/function_calling';
import { Command, GraphRecursionError, MemorySaver, interrupt } from '@langchain/langgraph';
import { createReactAgent } from '@langchain/langgraph/prebuilt';
import { z } from 'zod';
import { askModel, callTool, currentRun, errorInfo, installedVersion, installedVersions, json, serve, unknownPause } from '../lib/protocol.mjs';
import { replyOutputs, replyText, text, userMessage, zodObject } from '../lib/render.mjs';

const VERSION = installedVersion(import.meta.url, '@langchain/langgraph');

// The contract this harness is written against (harnesses/lib/protocol.mjs still speaks 2 for the
// other harnesses): catalogue 3's capabilities, and each step's is_error and call_id.
const PROTOCOL = 3;

const CAPABILITIES = ['max-steps-error', 'per-call-cap', 'tool-approval', 'approval-edit', 'durable-approvals',
                      'async', 'streaming', 'parallel-tool-calls'];
const NOT_CLAIMED = {
  signature: 'a native tool-calling loop: createReactAgent takes a chat model, tools and a prompt, no signature',
  adapters: 'no pluggable format-and-parse layer: the chat model integration formats and parses every call',
  'cap-summary': 'the only cap, recursionLimit, throws GraphRecursionError (pregel/index.js): no run returns on a cap to summarise',
  'repeated-error-stop': 'createReactAgent has no repeated-failure stop: the tools node loops back to the agent after every error until recursionLimit throws (prebuilt/react_agent_executor.js)',
  'max-steps-extract': 'on recursionLimit the graph throws GraphRecursionError (pregel/loop.js); it makes no tool-less final call',
  'max-steps-return': 'createReactAgent has no cap that returns: the graph throws GraphRecursionError (pregel/loop.js)',
  'ask-user': 'createReactAgent has no built-in tool for asking the person a question (interrupt() is a primitive a tool calls)',
  'lm-retry': 'createReactAgent has no model-client retry: retries live in the provider packages (their AsyncCaller around the client request)',
  http: 'createReactAgent ships no HTTP client; the provider packages own it',
};

// How the harness fills each field of the contract's parity rules (conformance.binding.PARITY).
const PARITY = {
  stop_reason: 'derived: max_steps when the run threw GraphRecursionError on the recursionLimit the harness gave (pregel/loop.js)',
  iterations: "derived: the AI messages of the run's messages (the result's, or the thread's state after GraphRecursionError)",
  max_iterations: 'derived: the step cap the harness gave as recursionLimit (N steps are 2N super-steps)',
  partial_run: "derived: the thread's messages read through the documented graph.getState(config) of the agent's MemorySaver; GraphRecursionError carries only its message (errors.js)",
  concurrency: 'shared',
};
const AFRESH = 'a resume (Command({ resume })) is a new invoke whose recursionLimit counts afresh from the checkpoint (pregel/loop.js: stop = step + recursionLimit + 1): the steps before the pause do not count';
const KNOWN_FAILURES = {
  'Resuming keeps the budget the steps before the pause used': AFRESH,
  // The call's cap passed again on the resume (the same recursionLimit): 4 more model calls under a cap of 3.
  'Resuming keeps the step cap given to the call and the steps used before the pause': AFRESH,
  'A pause answered through another agent is refused':
    "a Command({ resume }) naming another agent's interrupt is not refused: PregelLoop._first (pregel/loop.js) refuses a resume only when the graph has no checkpointer or under the internal __pregel_strict_resume flag (_refuseUnmatchedResume), which nothing in the library sets; a graph sharing the paused graph's checkpointer loads the paused thread's checkpoint, runs the paused call with its own tool and asks the model again (seen in a direct run: the second graph's delete_file ran)",
  'test_tool_args_of_any_size_or_nesting_reach_the_tool_intact_or_are_refused_saying_why[store-an object nested 100000 levels deep]':
    "the checkpointer's serializer throws RangeError: Maximum call stack size exceeded on args nested 100000 levels deep (@langchain/langgraph-checkpoint serde/utils/fast-safe-stringify, decirc recurses once per level) when MemorySaver saves the step: the run fails before the tool runs (seen in a direct run; without a checkpointer the args reach the tool)",
  'ARGS-3': "malformed JSON becomes an invalid_tool_call (@langchain/core parseToolCall), which createReactAgent's agent edge ignores: no tool_calls routes to END (prebuilt/react_agent_executor.js), so the run ends silently with the thought as its answer",
};

// ---------------------------------------------------------------------------------------------
// Tools

// The documented approval wrapper's decision on the person's HumanResponse.
function approved(spec, args) {
  const response = interrupt({
    action_request: { action: spec.name, args },
    config: { allow_accept: true, allow_edit: true, allow_respond: true, allow_ignore: false },
    description: `Please review the call of ${spec.name}`,
  });
  if (response.type === 'accept') return { args };
  if (response.type === 'edit' && response.args?.action === spec.name) return { args: response.args.args };
  if (response.type === 'response') return { reply: response.args };
  throw new Error(`Unknown response type: ${response.type}`);
}

function graphTool(spec) {
  const original = tool((args) => callTool(spec.name, args),
                        { name: spec.name, description: spec.description, schema: zodObject(z, spec) });
  if (!spec.interruptible) return original;
  // The docs' human-in-the-loop wrapper: the accepted or edited args go through the original
  // tool's invoke, which parses them against its zod schema, as ToolNode's call did.
  return tool(async (args, config) => {
    const decision = approved(spec, args);
    return 'reply' in decision ? decision.reply : original.invoke(decision.args, config);
  }, { name: original.name, description: original.description, schema: original.schema });
}

// ---------------------------------------------------------------------------------------------
// The model

const ROLES = { human: 'user', ai: 'assistant', system: 'system', tool: 'tool' };

function contentText(content) {
  if (typeof content === 'string') return content;
  return (content ?? []).map((p) => p.text ?? '').join('');
}

// A message as the model is shown it: its text, an AI message's tool calls (valid or not).
function shown(message) {
  const parts = [contentText(message.content)];
  for (const c of calls(message)) parts.push(`${c.name}(${text(c.args)})`);
  return { role: ROLES[message.getType()] ?? message.getType(), content: parts.filter(Boolean).join('\n') };
}

function calls(message) {
  if (message.getType() !== 'ai') return [];
  return [...(message.tool_calls ?? []), ...(message.invalid_tool_calls ?? [])];
}

let replies = 0;

// A turn as the AIMessage a provider integration builds from the completion.
function reply(turn) {
  if (turn.kind !== 'step') return new AIMessage({ content: replyText(turn.outputs) });
  const number = ++replies;
  const raw = [turn, ...(turn.parallel ?? [])].map((c, i) => ({
    id: `call_${number}${i ? `_${i}` : ''}`, type: 'function',
    function: { name: c.tool_name, arguments: c.raw_tool_args ?? JSON.stringify(c.tool_args) },
  }));
  const parsed = [];
  const invalid = [];
  for (const call of raw) {
    try {
      parsed.push(parseToolCall(call, { returnId: true }));
    } catch (error) {
      invalid.push(makeInvalidToolCall(call, error.message));
    }
  }
  return new AIMessage({ content: turn.thought ?? '', tool_calls: parsed, invalid_tool_calls: invalid,
                         additional_kwargs: { tool_calls: raw } });
}

// Model requests per run: a streaming run's events say how many had been made when they arrived.
const modelCalls = new Map();

class ScriptedChat extends BaseChatModel {
  static lc_name() {
    return 'ScriptedChat';
  }

  _llmType() {
    return 'scripted';
  }

  bindTools(tools, kwargs) {
    return this.withConfig({ tools: tools.map((t) => convertToOpenAITool(t)), ...kwargs });
  }

  async _generate(messages, options) {
    const run = currentRun();
    modelCalls.set(run, (modelCalls.get(run) ?? 0) + 1);
    const tools = options?.tools ?? [];
    const turn = await askModel({ kind: 'step', adapter: 'native', messages: messages.map(shown),
                                  tools: tools.length ? tools : null });
    const message = reply(turn);
    return { generations: [{ text: contentText(message.content), message }] };
  }
}

// ---------------------------------------------------------------------------------------------
// Reading the result

// One step per tool call the AI messages made (valid or not), with its ToolMessage's content.
function trajectory(messages) {
  const results = new Map();
  for (const m of messages) if (m.getType() === 'tool') results.set(m.tool_call_id, m);
  const steps = [];
  for (const m of messages) {
    for (const c of calls(m)) {
      const result = results.get(c.id);
      steps.push({ thought: contentText(m.content) || null, tool_name: c.name, tool_args: json(c.args),
                   observation: result ? json(result.content) : null,
                   // ToolNode's own flag: a ToolMessage of status 'error' (runTool's catch).
                   is_error: result ? result.status === 'error' : null, call_id: c.id ?? null });
    }
  }
  return steps;
}

const agents = new Map();
// Where the library persists the pauses of every agent the harness builds: one application's one
// checkpointer, configured once.
const checkpointer = new MemorySaver();
// Every pause a call made, by its id, whichever agent made it: a person's answer may reach another
// agent than the paused one (HITL-6), and refusing it is the library's part, not the harness's.
const pauses = new Map();
let threads = 0;

function finished(state, values, thread, inputs, cap) {
  const messages = values.messages ?? [];
  state.last = messages;
  const steps = trajectory(messages);
  const answers = messages.filter((m) => m.getType() === 'ai');
  const pause = values.__interrupt__?.[0];
  if (pause != null) {
    pauses.set(pause.id, { thread, inputs, cap });
    const request = pause.value.action_request;
    const last = answers.at(-1);
    const call = (last?.tool_calls ?? []).find((c) => c.name === request.action);
    return { trajectory: steps, iterations: answers.length, error: {
      type: 'GraphInterrupt', message: pause.value.description, kind: 'human-in-the-loop', fields: {
        question: null, interrupt_id: pause.id,
        tool_call: { name: request.action, args: json(request.args), call_id: call?.id ?? null },
        context: { trajectory: steps, iteration: answers.length, input_args: json(inputs) },
      },
    } };
  }
  const last = answers.at(-1);
  const final = last != null && !(last.tool_calls?.length) ? contentText(last.content) : null;
  return { trajectory: steps, iterations: answers.length, stop_reason: final != null ? 'finish' : null,
           outputs: final != null ? replyOutputs(state.spec.signature, final) : null };
}

// An error the graph threw. GraphRecursionError, its step cap, carries only its message: the
// partial run is the thread's state, read through the documented getState.
async function failed(state, config, error) {
  if (!(error instanceof GraphRecursionError)) return { error: errorInfo(error) };
  const messages = (await state.graph.getState(config)).values.messages ?? [];
  state.last = messages;
  const steps = trajectory(messages);
  const iterations = messages.filter((m) => m.getType() === 'ai').length;
  const own = new Set(state.spec.tools.map((t) => t.name));
  const seen = steps.filter((s) => s.observation != null);
  return { trajectory: steps, iterations, stop_reason: 'max_steps', error: { ...errorInfo(error), kind: 'max-iterations', fields: {
    iterations, max_iterations: config.recursionLimit / 2, tools_used: seen.filter((s) => own.has(s.tool_name)).map((s) => s.tool_name),
    history: steps, last_observation: seen.at(-1)?.observation ?? null,
  } } };
}

async function invoke(state, payload, thread, cap, inputs, mode) {
  const config = { recursionLimit: cap * 2, configurable: { thread_id: thread } };
  state.last = [];
  if (mode !== 'stream') {
    try {
      return finished(state, await state.graph.invoke(payload, config), thread, inputs, cap);
    } catch (error) {
      return await failed(state, config, error);
    }
  }
  // graph.stream: a step event once a ToolMessage answers a call; the last values state.
  const run = currentRun();
  const events = [];
  const seen = [];
  let values = null;
  let emitted = 0;
  try {
    for await (const [kind, chunk] of await state.graph.stream(payload, { ...config, streamMode: ['updates', 'values'] })) {
      if (kind === 'values') {
        values = chunk;
        continue;
      }
      for (const update of Object.values(chunk)) if (Array.isArray(update?.messages)) seen.push(...update.messages);
      const done = trajectory(seen).filter((s) => s.observation != null);
      for (const step of done.slice(emitted)) events.push({ kind: 'step', model_calls: modelCalls.get(run) ?? 0, step });
      emitted = done.length;
    }
  } catch (error) {
    return { ...(await failed(state, config, error)), events };
  }
  const out = finished(state, values ?? { messages: [] }, thread, inputs, cap);
  events.push({ kind: 'done', model_calls: modelCalls.get(run) ?? 0, stop_reason: out.stop_reason ?? null,
                outputs: out.outputs ?? null });
  return { ...out, events };
}

// A person's answer as the HumanResponse the approval wrapper reads.
function humanResponse(answer) {
  const word = answer.trim().toLowerCase();
  if (word === 'yes' || word === 'y') return { type: 'accept', args: null };
  if (word === 'no' || word === 'n') return { type: 'ignore', args: null };
  let edit;
  try {
    edit = answer.trim().startsWith('{') ? JSON.parse(answer).edit : undefined;
  } catch { /* free text */ }
  if (edit && typeof edit === 'object') return { type: 'edit', args: { action: edit.name, args: edit.args } };
  return { type: 'response', args: answer };
}

serve({
  hello: () => ({ protocol: PROTOCOL, name: 'langgraph-js', version: VERSION, dependencies: installedVersions(import.meta.url),
                  capabilities: CAPABILITIES, not_claimed: NOT_CLAIMED,
                  known_failures: KNOWN_FAILURES, parity: PARITY }),
  // LangGraph has no adapters: nothing to configure, nothing to read back.
  configure: () => ({}),
  global_adapter: () => ({ adapter: null }),
  build({ agent, spec }) {
    try {
      const graph = createReactAgent({
        llm: new ScriptedChat({}), tools: spec.tools.map(graphTool),
        ...(spec.signature.instructions ? { prompt: spec.signature.instructions } : {}),
        checkpointer,
      });
      agents.set(agent, { graph, spec, last: [] });
      return { error: null };
    } catch (error) {
      return { error: errorInfo(error) };
    }
  },
  async run({ agent, run, call }) {
    const state = agents.get(agent);
    const payload = { messages: [{ role: 'user', content: userMessage(call.inputs) }] };
    try {
      return { outcome: await invoke(state, payload, `thread-${++threads}`, call.max_steps ?? state.spec.max_steps,
                                     call.inputs, call.mode) };
    } finally {
      modelCalls.delete(run);
    }
  },
  async resume({ agent, run, request }) {
    const state = agents.get(agent);
    const pause = pauses.get(request.interrupt_id);
    if (pause == null) return unknownPause(request.interrupt_id);
    // Resumed by the interrupt's id (Command's map form), so the answer goes to that pause only.
    const command = new Command({ resume: { [request.interrupt_id]: humanResponse(request.response) } });
    try {
      // The paused call's own cap again, as its caller passes the same recursionLimit.
      return { outcome: await invoke(state, command, pause.thread, pause.cap, pause.inputs, request.mode) };
    } finally {
      modelCalls.delete(run);
    }
  },
  // Native tool calling: the suite reads the tools declared in each request.
  step_tool_names: () => ({ names: null }),
  mutate_last_result({ agent, marker }) {
    const last = agents.get(agent).last;
    const held = last.length;
    for (const message of last) message.content = marker;
    last.push(new AIMessage({ content: marker }));
    return { changed: held ? [`result.messages (${held} messages)`] : [] };
  },
});
