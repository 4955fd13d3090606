// The react-conformance harness for Strands Agents for TypeScript (npm `@strands-agents/sdk`), its
// agent loop: an Agent with zod tools.
//
//   pytest --impl strands-ts      (or --impl cmd:"node harnesses/strands-ts/harness.mjs")
//
// Seam: Strands' own OpenAIModel with `api: 'chat'`, given a pre-configured OpenAI client (its
// documented `client` option) whose `fetch` answers from the script (harnesses/lib/chat-completions.mjs,
// shared with openai-agents-js and openai-runtools); in the `http` profile the client points at
// CallRequest.base_url. Beneath the model class run Strands' own request building and stream
// parsing, the OpenAI client's retries and Strands' default DefaultModelRetryStrategy. This is the
// seam the Python strands binding uses.
//
// Step cap: `limits: { turns: N }`, the documented per-invocation cap (InvokeOptions.limits): one
// turn is one model call plus the tools it asked for; on the cap invoke() returns with stopReason
// 'limitTurns'. There is no agent-wide cap, so the agent's cap is passed with each call. An Agent
// keeps its conversation across calls (agent.messages); the trajectory of a call is what it added.
// Tools are `tool({ name, description, inputSchema: z.object(...), callback })`, Strands' documented
// primary form. Streaming is agent.stream(): a step event at each toolResultEvent.
//
// An Agent takes one invocation at a time (invoke() throws ConcurrentInvocationError 'Agent is already
// processing an invocation' otherwise, agent/agent.ts), so each run gets an Agent of its own, as an
// application serving concurrent requests builds one per request.
//
// Approval: a BeforeToolCallEvent hook raises an interrupt (`event.interrupt`), invoke() returns
// with stopReason 'interrupt', and an invoke with an InterruptResponseContent resumes it; an edit
// rewrites the pending call's `event.toolUse` (documented as mutable: its name and input), a
// refusal sets `event.cancel` to the person's message. The pause is kept in Strands' documented
// durable form, the agent's snapshot (`takeSnapshot({ preset: 'session' })`, which holds the
// messages and the interrupt state), as JSON text; a resume loads it into a new Agent of the agent
// the answer is given to (`loadSnapshot`), as an application resumes a pause across requests.

import { Agent, BeforeToolCallEvent, InterruptResponseContent, tool } from '@strands-agents/sdk';
import { OpenAIModel } from '@strands-agents/sdk/models/openai';
import OpenAI from 'openai';
import { z } from 'zod';
import { modelCalls, openAIClient } from '../lib/chat-completions.mjs';
import { callTool, deepArgsFailures, errorInfo, installedVersion, installedVersions, json, serve, unknownPause, wire } from '../lib/protocol.mjs';
import { replyOutputs, userMessage, zodObject } from '../lib/render.mjs';

const VERSION = installedVersion(import.meta.url, '@strands-agents/sdk');
const NAME = 'strands-ts';
const PROTOCOL = 3;
const CAPABILITIES = ['max-steps-return', 'per-call-cap', 'tool-approval', 'approval-edit', 'durable-approvals', 'async', 'streaming',
                      'parallel-tool-calls', 'lm-retry', 'http'];
const NOT_CLAIMED = {
  adapters: 'no pluggable format-and-parse layer: the model class (here OpenAIModel) formats and parses every call',
  'cap-summary': "on limits.turns invoke() returns stopReason 'limitTurns' with the last message: no message of what was tried",
  'repeated-error-stop': 'the agent loop has no repeated-failure stop: a failing tool becomes an error tool result (status error) and the loop asks the model again, until it answers or a limit the caller set trips',
  signature: 'a native tool-calling loop: a system prompt, messages and tools, no signature',
  'max-steps-error': "on limits.turns invoke() returns normally with stopReason 'limitTurns' (types/agent.ts InvokeOptions.limits): no max-iterations error",
  'max-steps-extract': "on limits.turns the loop stops with stopReason 'limitTurns'; it makes no tool-less final call",
  'ask-user': 'the SDK has no built-in tool through which the model asks the person a question',
};
const PARITY = {
  stop_reason: "library: AgentResult.stopReason, 'endTurn' the answer and 'limitTurns' the cap stop",
  iterations: 'derived: counted from the assistant messages the call added to agent.messages, one per model call',
  max_iterations: 'none: on limits.turns invoke() raises nothing; it returns an AgentResult',
  partial_run: 'none: on limits.turns invoke() raises nothing; agent.messages holds the run',
  concurrency: "per-run: Agent.invoke (agent/agent.ts) throws ConcurrentInvocationError 'Agent is already processing an invocation. Wait for the current invoke() or stream() call to complete before invoking again.'",
};
const BLOCKS = "OpenAIModel's chat adapter keeps one content block open at a time: mapChatChunkToEvents (models/openai/chat-adapter.ts) starts a block for each streamed tool call without stopping the text or the previous call's block, and stops them only at finish_reason, while Model.streamAggregated (models/model.ts) resets its accumulators at every block start, so a reply's text and all but its last tool call are lost (in a direct run a reply 'I will add' with two add calls ran only the second, and the next request showed neither the text nor the first call)";
const REPLAY = "a snapshot (takeSnapshot({ preset: 'session' }), agent/snapshot.ts) holds the pending interrupt and keeps no record that it was answered: loading the same snapshot again and answering it runs the tool again (in a direct run delete_file ran twice from one snapshot)";
const DEEP = "the run throws Error 'Unable to serialize tool result: Maximum call stack size exceeded' before the tool runs: the ToolUseBlock constructor (types/messages.ts) deep-copies the call's input with deepCopy (types/json.ts), JSON.parse(JSON.stringify(...)), which overflows the stack at 5,000 levels (seen in a direct run)";
const KNOWN_FAILURES = {
  'LOOP-6': BLOCKS,
  'Each step prompt shows the trajectory so far': BLOCKS,
  'The last step call of a long run shows the whole trajectory': BLOCKS,
  'ARGS-3': "tool input that is not JSON ends the run: Model.streamAggregated (models/model.ts) catches the JSON.parse error of the tool use block, then throws ModelError 'unable to parse tool input JSON' out of invoke() after the message; the tool does not run and the model is never told (seen in a direct run)",
  ...deepArgsFailures(DEEP),
  ...Object.fromEntries([
    'Resuming keeps the budget the steps before the pause used',
    'Resuming keeps the step cap given to the call and the steps used before the pause',
  ].map((name) => [name, "a resume is a new invocation, and limits.turns counts the cycles of that invocation only (agent/agent.ts, `cycleCount >= limits.turns`): in a direct run with a cap of 2, two model calls before the pause and one more after the resume"])),
  'Resuming the same interrupt twice never runs the tool twice': REPLAY,
  'Answering a pause again after its resumed run paused again never runs a call twice': REPLAY,
  'HITL-8': REPLAY,
  'A pause answered through another agent is refused': "an Agent that loads a snapshot takes its messages and interrupt state whole (Agent.loadSnapshot, agent/snapshot.ts): nothing in it names the Agent that paused, so another agent's Agent takes the answer and runs its own tool of that name (in a direct run a new Agent that loaded the snapshot ran delete_file on the answer)",
};
const STOP_REASONS = { endTurn: 'finish', limitTurns: 'max_steps' };

// -- reading the run --------------------------------------------------------------------------------

function resultText(block) {
  return block.content.map((c) => (c.type === 'textBlock' ? c.text : c.type === 'jsonBlock' ? JSON.stringify(c.json) : '')).join('');
}

// The tool calls among messages, in order, each with its result and the assistant text beside it.
function steps(messages) {
  const results = new Map();
  for (const m of messages) for (const b of m.content) if (b.type === 'toolResultBlock') results.set(b.toolUseId, b);
  const found = [];
  for (const m of messages) {
    if (m.role !== 'assistant') continue;
    const thought = m.content.filter((b) => b.type === 'textBlock').map((b) => b.text).join('') || null;
    for (const b of m.content) {
      if (b.type !== 'toolUseBlock') continue;
      const result = results.get(b.toolUseId);
      found.push({ thought, tool_name: b.name, tool_args: wire(json(b.input)), observation: result ? resultText(result) : null,
                   is_error: result ? result.status === 'error' : null, call_id: b.toolUseId });
    }
  }
  return found;
}

const agents = new Map();
const pauses = new Map();

function outcome(state, result, start, run) {
  const added = state.agent.messages.slice(start);
  state.last = [added];
  const trajectory = steps(added);
  const iterations = added.filter((m) => m.role === 'assistant').length;
  if (result.stopReason === 'interrupt') {
    const interrupt = result.interrupts[0];
    const call = interrupt.reason;
    pauses.set(interrupt.id, { snapshot: JSON.stringify(state.agent.takeSnapshot({ preset: 'session' })), start, ...run });
    return { trajectory, iterations, error: {
      type: 'Interrupt', message: `the call of ${call.name} needs approval`, kind: 'human-in-the-loop', fields: {
        question: null, interrupt_id: interrupt.id, tool_call: { name: call.name, args: call.args, call_id: call.call_id },
        context: { trajectory, iteration: iterations, input: null },
      } } };
  }
  const stop = STOP_REASONS[result.stopReason] ?? result.stopReason;
  const text = result.lastMessage.content.filter((b) => b.type === 'textBlock').map((b) => b.text).join('');
  return { outputs: stop === 'finish' ? replyOutputs(state.spec.signature, text) : null, trajectory, iterations, stop_reason: stop };
}

async function invoke(state, args, options, stream, run, start = state.agent.messages.length) {
  const events = [];
  let reply = null;
  try {
    let result;
    if (stream) {
      const generator = state.agent.stream(args, options);
      for (;;) {
        const next = await generator.next();
        if (next.done) { result = next.value; break; }
        // The reply's tool uses join agent.messages only after its tools ran: the step is read
        // from the reply and the result the event carries.
        if (next.value.type === 'modelMessageEvent') reply = next.value.message;
        if (next.value.type === 'toolResultEvent' && reply != null) {
          const step = steps([reply, { role: 'user', content: [next.value.result] }]).find((s) => s.call_id === next.value.result.toolUseId);
          events.push({ kind: 'step', model_calls: modelCalls(), step: step ?? null });
        }
      }
    } else {
      result = await state.agent.invoke(args, options);
    }
    const out = outcome(state, result, start, run);
    if (!stream) return out;
    events.push({ kind: 'done', model_calls: modelCalls(), stop_reason: out.stop_reason ?? null, outputs: out.outputs ?? null });
    return { ...out, events };
  } catch (error) {
    const added = state.agent.messages.slice(start);
    state.last = [added];
    return { trajectory: steps(added), iterations: added.filter((m) => m.role === 'assistant').length, error: errorInfo(error), ...(stream ? { events } : {}) };
  }
}

function build(spec, baseURL) {
  const interruptible = new Set(spec.tools.filter((t) => t.interruptible).map((t) => t.name));
  const agent = new Agent({
    model: new OpenAIModel({ api: 'chat', client: openAIClient(OpenAI, baseURL), modelId: 'scripted' }),
    systemPrompt: spec.signature.instructions || undefined,
    tools: spec.tools.map((t) => tool({ name: t.name, description: t.description, inputSchema: zodObject(z, t),
                                        callback: (input) => callTool(t.name, input) })),
  });
  agent.addHook(BeforeToolCallEvent, (event) => {
    if (!interruptible.has(event.toolUse.name)) return;
    const answer = event.interrupt({ name: 'approval', reason: { name: event.toolUse.name, args: json(event.toolUse.input), call_id: event.toolUse.toolUseId } });
    const text = String(answer).trim();
    if (['yes', 'y'].includes(text.toLowerCase())) return;
    if (text.startsWith('{')) {
      const edit = JSON.parse(text).edit;
      if (edit && typeof edit === 'object') {
        event.toolUse.name = edit.name ?? event.toolUse.name;
        event.toolUse.input = edit.args ?? {};
        return;
      }
    }
    event.cancel = ['no', 'n'].includes(text.toLowerCase()) ? true : text;
  });
  return agent;
}

serve({
  hello: () => ({ protocol: PROTOCOL, name: NAME, version: VERSION, dependencies: installedVersions(import.meta.url),
                  capabilities: CAPABILITIES, not_claimed: NOT_CLAIMED, known_failures: KNOWN_FAILURES, parity: PARITY }),
  configure: () => ({}),
  global_adapter: () => ({ adapter: null }),
  build({ agent, spec }) {
    try {
      build(spec, null); // a spec Strands refuses fails here, at build
      agents.set(agent, { spec, last: [] });
      return { error: null };
    } catch (error) {
      return { error: errorInfo(error) };
    }
  },
  async run({ agent, call }) {
    const state = agents.get(agent);
    state.last = [];
    const cap = call.max_steps ?? state.spec.max_steps;
    const running = { ...state, agent: build(state.spec, call.base_url) };
    const out = await invoke(running, userMessage(call.inputs), { limits: { turns: cap } }, call.mode === 'stream',
                             { cap, baseURL: call.base_url });
    state.last = running.last;
    return { outcome: out };
  },
  async resume({ agent, request }) {
    const state = agents.get(agent);
    const pause = pauses.get(request.interrupt_id);
    if (pause == null) return unknownPause(request.interrupt_id);
    const running = { ...state, agent: build(state.spec, pause.baseURL) };
    try {
      running.agent.loadSnapshot(JSON.parse(pause.snapshot));
    } catch (error) {
      return { outcome: { error: errorInfo(error) } };
    }
    const answer = [new InterruptResponseContent({ interruptId: request.interrupt_id, response: request.response })];
    const out = await invoke(running, answer, { limits: { turns: pause.cap } }, request.mode === 'stream', pause, pause.start);
    state.last = running.last;
    return { outcome: out };
  },
  step_tool_names: () => ({ names: null }),
  mutate_last_result({ agent, marker }) {
    const changed = [];
    for (const messages of agents.get(agent).last) {
      changed.push(`agent.messages (${messages.length} messages added by the call)`);
      messages.push(marker);
    }
    return { changed };
  },
});
