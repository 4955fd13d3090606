// The react-conformance harness for Genkit for Node (npm `genkit`), its tool loop: `ai.generate`
// with tools made by `ai.defineTool` and a zod input schema.
//
//   pytest --impl genkit      (or --impl cmd:"node harnesses/genkit/harness.mjs")
//
// Seam: the model is Genkit's own OpenAI-compatible plugin, `openAICompatible` from
// @genkit-ai/compat-oai, the plugin Genkit documents for any endpoint that speaks chat completions
// (a local server, a gateway), so it is the model integration an application on such an endpoint
// runs. (`ai.defineModel` over the protocol would be a model no user runs, and would skip the
// plugin's request building and reply parsing, where Genkit meets the wire.) The plugin builds its
// OpenAI client from its options (`new OpenAI({...options})`, compat-oai's index.ts), so the
// client's documented `fetch` option answers every request from the script
// (harnesses/lib/chat-completions.mjs); in the `http` profile it points at CallRequest.base_url.
// Beneath the plugin run Genkit's generate loop, its tool input validation, and the OpenAI client's
// default retries (2, with backoff).
//
// Genkit is imported from `genkit/beta`, the entry point Genkit documents for tool interrupts: the
// stable one refuses `interrupt()` and `tool.restart` ('Tool interrupts are a beta feature.',
// assertUnstable in @genkit-ai/ai's tool.ts); the generate loop is the same action in both.
//
// There is no agent object: an "agent" is what a user passes to every generate call, the model,
// the system prompt and the tools. The step cap is `maxTurns` (default 5), given to each call: a
// per-call cap. On the cap generate throws GenerationResponseError 'Exceeded maximum tool call
// iterations (N)' (generate/action.ts, generateActionTurn), whose `detail.response` holds the last
// model reply and, in its `messages`, the run so far.
//
// Approval: Genkit's documented restartable interrupt. A tool that needs approval calls
// `interrupt()` from its own body unless it was resumed, generate returns with finishReason
// 'interrupted' and the call in `response.interrupts`, and a new generate with the paused
// messages and `resume: { restart: [tool.restart(interrupt, ..., { replaceInput })] }` runs it
// (an edit is `replaceInput`, which restart validates against the tool's schema), or
// `resume: { respond: [tool.respond(interrupt, output)] }` answers it without running it (a
// refusal, its output the person's message). The pause is kept as `response.messages`, which
// Genkit documents as serialisable for persistence, as JSON text.

import { openAICompatible } from '@genkit-ai/compat-oai';
import { z } from 'genkit';
import { genkit } from 'genkit/beta';
import OpenAI from 'openai';
import { modelCalls, openAIOptions } from '../lib/chat-completions.mjs';
import { callTool, deepArgsFailures, errorInfo, installedVersion, installedVersions, json, serve, unknownPause, wire } from '../lib/protocol.mjs';
import { replyOutputs, userMessage, zodObject } from '../lib/render.mjs';

const VERSION = installedVersion(import.meta.url, 'genkit');
const NAME = 'genkit';
const PROTOCOL = 3;
const CAPABILITIES = ['max-steps-error', 'per-call-cap', 'tool-approval', 'approval-edit', 'durable-approvals', 'async', 'streaming',
                      'parallel-tool-calls', 'lm-retry', 'http'];
const NOT_CLAIMED = {
  adapters: 'no pluggable format-and-parse layer: the model plugin (here compat-oai) formats and parses every call',
  'cap-summary': "on maxTurns generate throws GenerationResponseError 'Exceeded maximum tool call iterations' (generate/action.ts): no run returns on a cap to summarise",
  'repeated-error-stop': 'the generate loop has no repeated-failure stop: a tool that throws ends the run (generate/resolve-tool-requests.ts, resolveToolRequest rethrows)',
  signature: 'a native tool-calling loop: a system prompt, messages and tools, no signature',
  'max-steps-extract': "on maxTurns generate throws GenerationResponseError (generate/action.ts, generateActionTurn); it makes no tool-less final call",
  'max-steps-return': "on maxTurns generate throws GenerationResponseError (generate/action.ts, generateActionTurn); it has no option to return instead",
  'ask-user': 'Genkit has no built-in tool through which the model asks the person a question (ai.defineInterrupt makes one the application writes)',
};
const PARITY = {
  stop_reason: "library: GenerateResponse.finishReason, 'stop' the answer; GenerationResponseError 'Exceeded maximum tool call iterations' (generate/action.ts) the cap stop",
  iterations: "derived: counted from the model messages the call added to response.messages (on the cap error, error.detail.response.messages), one per model call",
  max_iterations: "derived: the maxTurns the harness gave generate, which the error names only in its text 'Exceeded maximum tool call iterations (N)'",
  partial_run: "library: GenerationResponseError.detail.response (generate.ts), whose messages hold the run up to the reply that hit the cap",
  concurrency: 'shared',
};
// Each verified in a direct run of generate over the compat-oai plugin (no suite in the path).
const OFF_BY_ONE = "maxTurns counts the turns whose tool calls ran, not model calls: generateActionTurn (generate/action.ts) throws 'Exceeded maximum tool call iterations (N)' only when the reply of turn N+1 asks for tools, so a cap of N makes N+1 model calls (in a direct run maxTurns 3 made 4 requests, maxTurns 1 made 2)";
const ZERO = "maxTurns 0 is taken as it is: generateActionTurn (generate/action.ts) checks the cap only after a model reply asks for tools, so the first model call is made before the error 'Exceeded maximum tool call iterations (0)' (in a direct run: 1 request, then the error)";
const NO_DESCRIPTION = "the compat-oai plugin sends each tool without its description: toOpenAITool (compat-oai's model.ts) writes only the name and the parameters into the chat-completions tool (in a direct run the request's tool was {name, parameters} only)";
const NO_THOUGHT = "the compat-oai plugin drops the model's text beside its tool calls when it sends the history again: toOpenAIMessages (compat-oai's model.ts) writes an assistant message with tool calls as tool_calls alone (in a direct run the reply 'I will add' with an add call came back as an assistant message without content)";
const UNKNOWN = "a call of a tool the request lacks ends the run: resolveToolRequest (generate/resolve-tool-requests.ts) throws GenkitError NOT_FOUND 'Tool <name> not found', and the model is never told (seen in a direct run)";
const THROWS = "a tool that throws ends the run: resolveToolRequest (generate/resolve-tool-requests.ts) rethrows every error that is not a ToolInterruptError, so generate rejects with the tool's own error and the model never sees an error observation (in a direct run generate rejected with 'the disk is on fire' after one request)";
// The tool action validates its input (parseSchema in @genkit-ai/core's action.ts) and throws
// ValidationError INVALID_ARGUMENT 'Schema validation failed', which resolveToolRequest
// (generate/resolve-tool-requests.ts) rethrows: the run ends and the model is never told.
const INVALID = "the tool action's input check (parseSchema, @genkit-ai/core's action.ts) throws INVALID_ARGUMENT 'Schema validation failed' and resolveToolRequest (generate/resolve-tool-requests.ts) rethrows it, so the run ends and the model is never told";
const NOT_OBJECT = `args that are JSON but not an object end the run before the tool runs: ${INVALID} (seen in a direct run)`;
const WRONG_TYPED = `args with a wrong-typed or missing field end the run before the tool runs, never converted and never told: ${INVALID} (seen in a direct run)`;
const UNDECLARED = `an argument the schema does not declare ends the run instead of being refused to the model by name: it fails the tool's input schema, and ${INVALID} (seen in a direct run)`;
const MALFORMED = "tool args that are not JSON end the run: the compat-oai plugin's fromOpenAIToolCall (compat-oai's model.ts) JSON.parses the call's arguments unguarded and the SyntaxError escapes generate; the tool does not run and the model is never told (seen in a direct run)";
const DEEP = "args nested 5,000 levels deep end the run with RangeError 'Maximum call stack size exceeded' before the tool runs: the model action records its reply in its trace span with JSON.stringify (action(), @genkit-ai/core's action.ts), which overflows the stack on the call's input (seen in a direct run)";
// What Genkit's resume cannot be asked to do at all: reported not claimed with the reason, not run.
const CANNOT_EXPRESS = {
  'An edit that names no tool never runs anything, and the person or the agent is told': "an approval edit is tool.restart's replaceInput, which re-runs the interrupted call's own tool with new input (restartTool, tool.ts): an edit cannot name another tool",
};
const REPLAY = "a pause is the messages of the response (response.messages) and holds no record that its interrupt was answered: a generate that resumes the same messages again with tool.restart runs the tool again (in a direct run delete_file ran on each of two resumes of one saved pause)";
const KNOWN_FAILURES = {
  'The step cap stops a loop that never chooses finish': OFF_BY_ONE,
  'A step cap of one allows exactly one step': OFF_BY_ONE,
  'A step cap of zero is refused at configuration, or raises before any model call': ZERO,
  'A step cap of zero given to one call is refused, or raises before any model call': ZERO,
  "Every step prompt shows the inputs and each tool's name, description and arguments": NO_DESCRIPTION,
  "Every step prompt shows a tool's argument schema, not only its description": NO_DESCRIPTION,
  'Each step prompt shows the trajectory so far': NO_THOUGHT,
  'The last step call of a long run shows the whole trajectory': NO_THOUGHT,
  'LOOP-5': UNKNOWN,
  'ERR-1': THROWS,
  'ARGS-2': NOT_OBJECT,
  'ARGS-3': MALFORMED,
  "Tool args that break the tool's schema never reach it with a wrong or missing value": WRONG_TYPED,
  'ARGS-6': UNDECLARED,
  ...deepArgsFailures(DEEP),
  'Resuming the same interrupt twice never runs the tool twice': REPLAY,
  'Answering a pause again after its resumed run paused again never runs a call twice': REPLAY,
  'HITL-8': REPLAY,
  'A pause answered through another agent is refused': "a pause is only messages and the interrupted call, naming no agent or tool set: a generate with another agent's tools resumes it, and tool.restart runs that agent's tool of the call's name (resolveResumeOption, generate/resolve-tool-requests.ts, looks the tool up by name) (seen in a direct run)",
};

// -- reading the run --------------------------------------------------------------------------------

function resultText(output) {
  return typeof output === 'string' ? output : JSON.stringify(json(output));
}

// The tool calls among messages, in order, each with its response and the model text beside it.
function steps(messages) {
  const results = new Map();
  for (const m of messages) {
    if (m.role !== 'tool') continue;
    for (const p of m.content) if (p.toolResponse) results.set(p.toolResponse.ref ?? p.toolResponse.name, p.toolResponse);
  }
  const found = [];
  for (const m of messages) {
    if (m.role !== 'model') continue;
    const thought = m.content.filter((p) => typeof p.text === 'string').map((p) => p.text).join('') || null;
    for (const p of m.content) {
      if (!p.toolRequest) continue;
      const call = p.toolRequest;
      const result = results.get(call.ref ?? call.name);
      found.push({ thought, tool_name: call.name, tool_args: wire(json(call.input)), observation: result ? resultText(result.output) : null,
                   is_error: null, call_id: call.ref ?? null });
    }
  }
  return found;
}

const agents = new Map();
// Every pause a call made, by its id, whichever agent made it: a person's answer may reach another
// agent than the paused one (HITL-6), and refusing it is the library's part, not the harness's.
const pauses = new Map();

// The agent's Genkit instance and tools, its model client answered from the script or at baseURL.
function build(spec, baseURL) {
  const ai = genkit({
    plugins: [openAICompatible({ name: 'suite', ...openAIOptions(baseURL, () => OpenAI.DEFAULT_TIMEOUT) })],
  });
  const tools = spec.tools.map((t) => ai.defineTool(
    { name: t.name, description: t.description, inputSchema: zodObject(z, t) },
    async (input, { interrupt, resumed }) => {
      if (t.interruptible && !resumed) interrupt({ approval: `the call of ${t.name} needs approval` });
      return callTool(t.name, input);
    },
  ));
  return { ai, tools };
}

function options(state, running, cap) {
  const instructions = state.spec.signature.instructions;
  return { model: 'suite/scripted', tools: running.tools, maxTurns: cap, ...(instructions ? { system: instructions } : {}) };
}

function outcome(state, response, start, run) {
  const messages = response.messages;
  const mine = messages.slice(start);
  state.last = [mine];
  const trajectory = steps(mine);
  const iterations = mine.filter((m) => m.role === 'model').length;
  if (response.finishReason === 'interrupted') {
    const interrupt = response.interrupts[0];
    const call = interrupt.toolRequest;
    const id = `${call.ref ?? call.name}#${pauses.size + 1}`;
    pauses.set(id, { messages: JSON.stringify(messages), interrupt: json(interrupt), start, ...run });
    return { trajectory, iterations, error: {
      type: 'Interrupt', message: `the call of ${call.name} needs approval`, kind: 'human-in-the-loop', fields: {
        question: null, interrupt_id: id, tool_call: { name: call.name, args: json(call.input), call_id: call.ref ?? null },
        context: { trajectory, iteration: iterations, input: null },
      } } };
  }
  return { outputs: replyOutputs(state.spec.signature, response.text), trajectory, iterations,
           stop_reason: response.finishReason === 'stop' ? 'finish' : response.finishReason };
}

function failed(state, error, start, cap) {
  const response = error?.detail?.response;
  if (response == null) return { error: errorInfo(error) };
  const mine = response.messages.slice(start);
  state.last = [mine];
  const trajectory = steps(mine);
  const iterations = mine.filter((m) => m.role === 'model').length;
  if (!String(error.message).includes('Exceeded maximum tool call iterations')) return { trajectory, iterations, error: errorInfo(error) };
  const seen = trajectory.filter((s) => s.observation != null);
  return {
    trajectory, iterations, stop_reason: 'max_steps', error: {
      ...errorInfo(error), kind: 'max-iterations', fields: {
        iterations, max_iterations: cap, tools_used: seen.map((s) => s.tool_name), history: trajectory,
        last_observation: seen.length ? seen.at(-1).observation : null,
      },
    },
  };
}

async function generate(state, running, request, stream, run, start) {
  // A streamed run's tool chunk comes after the turn's tools ran, one per turn: each response in it
  // is a step completed then. Its call (args, thought) is read from the run's messages at the end.
  const completed = [];
  const events = (out) => [
    ...completed.map(({ ref, calls }) => ({ kind: 'step', model_calls: calls,
                                             step: (out.trajectory ?? []).find((s) => s.call_id === ref) ?? null })),
    ...(out.error == null || out.error.kind === 'human-in-the-loop'
      ? [{ kind: 'done', model_calls: modelCalls(), stop_reason: out.stop_reason ?? null, outputs: out.outputs ?? null }] : []),
  ];
  let out;
  try {
    let response;
    if (stream) {
      const { stream: chunks, response: done } = running.ai.generateStream(request);
      for await (const chunk of chunks) {
        if (chunk.role !== 'tool') continue;
        for (const part of chunk.content) if (part.toolResponse) completed.push({ ref: part.toolResponse.ref ?? null, calls: modelCalls() });
      }
      response = await done;
    } else {
      response = await running.ai.generate(request);
    }
    out = outcome(state, response, start, run);
  } catch (error) {
    out = failed(state, error, start, run.cap);
  }
  return stream ? { ...out, events: events(out) } : out;
}

serve({
  hello: () => ({ protocol: PROTOCOL, name: NAME, version: VERSION, dependencies: installedVersions(import.meta.url),
                  capabilities: CAPABILITIES, not_claimed: NOT_CLAIMED, known_failures: KNOWN_FAILURES,
                  cannot_express: CANNOT_EXPRESS, parity: PARITY }),
  configure: () => ({}),
  global_adapter: () => ({ adapter: null }),
  build({ agent, spec }) {
    try {
      build(spec, null); // a spec Genkit refuses fails here, at build
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
    const running = build(state.spec, call.base_url);
    const request = { ...options(state, running, cap), prompt: userMessage(call.inputs) };
    return { outcome: await generate(state, running, request, call.mode === 'stream', { cap, baseURL: call.base_url }, 0) };
  },
  async resume({ agent, request }) {
    const state = agents.get(agent);
    const pause = pauses.get(request.interrupt_id);
    if (pause == null) return unknownPause(request.interrupt_id);
    const running = build(state.spec, pause.baseURL);
    const interrupt = pause.interrupt;
    const tool = running.tools.find((t) => t.__action.name === interrupt.toolRequest.name);
    let resume;
    try {
      resume = answer(running, tool, interrupt, String(request.response));
    } catch (error) {
      if (error instanceof HarnessCannot) throw error; // the harness's fault: errored, not a refusal
      return { outcome: { error: errorInfo(error) } };
    }
    const messages = JSON.parse(pause.messages);
    const next = { ...options(state, running, pause.cap), messages, resume };
    return { outcome: await generate(state, running, next, request.mode === 'stream', pause, pause.start) };
  },
  step_tool_names: () => ({ names: null }),
  mutate_last_result({ agent, marker }) {
    const changed = [];
    for (const messages of agents.get(agent).last) {
      changed.push(`response.messages (${messages.length} messages of the call)`);
      messages.push(marker);
    }
    return { changed };
  },
});

/** A person's answer the harness cannot put to Genkit (CANNOT_EXPRESS): never the library's doing. */
class HarnessCannot extends Error {}

// The person's answer as Genkit's resume option: approve restarts the call, an edit restarts it
// with replaced input (validated by restart against the tool's schema), anything else answers it
// with the person's message as its output, without running it.
function answer(running, tool, interrupt, text) {
  if (tool == null) throw new Error(`the agent has no tool ${interrupt.toolRequest.name}`);
  const lower = text.trim().toLowerCase();
  if (['yes', 'y'].includes(lower)) return { restart: [tool.restart(interrupt, { approved: true })] };
  if (text.trim().startsWith('{')) {
    const edit = JSON.parse(text).edit;
    if (edit && typeof edit === 'object') {
      // tool.restart re-runs the pending call's own tool (restartTool, tool.ts): an edit can replace
      // its input, not the tool it names.
      // So an edit naming another tool is in CANNOT_EXPRESS; one reaching here is the harness's
      // fault, never the library refusing.
      if ((edit.name ?? interrupt.toolRequest.name) !== interrupt.toolRequest.name) {
        throw new HarnessCannot(`the edit names ${edit.name}, but Genkit's tool.restart runs only the pending call's own tool, ${interrupt.toolRequest.name}`);
      }
      return { restart: [tool.restart(interrupt, { approved: true }, { replaceInput: edit.args ?? {} })] };
    }
  }
  return { respond: [tool.respond(interrupt, ['no', 'n'].includes(lower) ? 'The person refused this call.' : text)] };
}
