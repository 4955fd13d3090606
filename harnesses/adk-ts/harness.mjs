// The react-conformance harness for Google's Agent Development Kit for TypeScript (npm
// `@google/adk`): an LlmAgent with FunctionTool tools (zod parameters), run by its InMemoryRunner, or
// by a Runner over its DatabaseSessionService where a tool needs confirmation.
//
//   pytest --impl adk-ts      (or --impl cmd:"node harnesses/adk-ts/harness.mjs")
//
// Seam: ADK's model interface, a BaseLlm subclass (models/base_llm.ts; the class its Gemini and
// ApigeeLlm extend and LLMRegistry registers), as the Python binding (conformance/bindings/
// google_adk.py) binds ADK Python; ADK ships no test model. Each LlmRequest (its contents and the
// tools' function declarations) is shown to the suite, and the scripted turn comes back as an
// LlmResponse whose content has a text part (the thought) and a functionCall part per call, as
// Gemini's API returns them: args are an object there, so args that are not a JSON object come back
// as Gemini answers a call it cannot parse, a response with no content and finishReason
// MALFORMED_FUNCTION_CALL, which ADK's Gemini turns into its errorCode (createLlmResponse,
// models/llm_response.ts), as the Python binding does.
//
// Runs: a session per call in the runner's session service, `runner.runAsync`, whose events are
// also the stream (a step event per function response). The step cap is RunConfig `maxLlmCalls`,
// per call (the agent has no cap of its own, so the spec's cap is passed on every run): the N+1-th
// model call throws Error 'Max number of llm calls limit of N exceeded'
// (InvocationCostManager.incrementAndEnforceLlmCallsLimit, agents/invocation_context.ts) before it
// reaches the model, and, unlike ADK Python, where that error escapes the run, LlmAgent's
// runAndHandleError (agents/llm_agent.ts) catches it and yields it as an event (errorCode
// UNKNOWN_ERROR, its message as errorMessage): runAsync returns, its last event saying the cap
// stopped it. The session keeps the run's events (sessionService.getSession, the documented API).
//
// Approval: an interruptible tool is `new FunctionTool({ ..., requireConfirmation: true })`. Its call
// pauses the run: ADK answers it with a placeholder and adds a long-running adk_request_confirmation
// call holding the original call (generateRequestConfirmationEvent, agents/functions.ts), the pause
// reported with that request's id. The person answers as ADK documents, with a FunctionResponse to
// the request holding a ToolConfirmation (`confirmed`; free text declines, as its `payload`: ADK
// takes no message), sent by a new runAsync of the paused session with the run's own RunConfig. A
// pause is its session's events, in the runner's session service: the agents with a tool needing
// confirmation keep them in the persistent session service ADK ships, DatabaseSessionService
// (sessions/database_session_service.ts) over a SQLite file through its optional peer
// @mikro-orm/sqlite, one file per harness that their runners share (InMemoryRunner's other
// services), each agent an app of its own named as the agent, as the Python binding runs them over
// ADK Python's SqliteSessionService; every answer reads the pause back from that store
// (`durable-approvals`). The other agents run in InMemoryRunner, the quick-start default, as in the
// Python binding. Pauses are kept here by id for every agent: answered through another agent, its
// runner looks the session up in the shared store under its own app, and whether it refuses the
// answer is ADK's part.

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  BaseLlm, DatabaseSessionService, FunctionTool, getFunctionCalls, getFunctionResponses, InMemoryArtifactService,
  InMemoryMemoryService, InMemoryRunner, isFinalResponse, LlmAgent, REQUEST_CONFIRMATION_FUNCTION_CALL_NAME, Runner,
} from '@google/adk';
import { z } from 'zod';
import { askModel, callTool, deepArgsFailures, errorInfo, installedVersion, installedVersions, json, serve, unknownPause, wire } from '../lib/protocol.mjs';
import { openaiMessage, replyOutputs, userMessage, zodObject } from '../lib/render.mjs';

const VERSION = installedVersion(import.meta.url, '@google/adk');
const NAME = 'adk-ts';
const PROTOCOL = 3;
const USER = 'user';
const CAPABILITIES = ['max-steps-return', 'per-call-cap', 'tool-approval', 'durable-approvals', 'async', 'streaming', 'parallel-tool-calls'];
const NO_EDIT = 'a ToolConfirmation carries confirmed and a payload (tools/tool_confirmation.ts); FunctionTool.checkConfirmation (tools/function_tool.ts) lets a confirmed call run with the args the model gave: a pending call cannot be edited';
const NOT_CLAIMED = {
  signature: 'a native tool-calling loop: LlmAgent takes an instruction and tools, no signature',
  adapters: 'no pluggable prompt format: each model class writes its provider\'s request',
  'max-steps-extract': "on maxLlmCalls the run ends with the error event 'Max number of llm calls limit of N exceeded' (agents/llm_agent.ts, runAndHandleError): no tool-less final call",
  'max-steps-error': "the error maxLlmCalls throws (agents/invocation_context.ts) is caught by LlmAgent.runAndHandleError (agents/llm_agent.ts) and yielded as an event: runAsync never raises it",
  'cap-summary': "on maxLlmCalls the last event says only 'Max number of llm calls limit of N exceeded': no message for the user of what was tried",
  'repeated-error-stop': 'no count of repeated tool failures: every tool error becomes an {error} function response (handleFunctionCallList, agents/functions.ts)',
  'ask-user': 'no built-in tool that asks the person on by default (request_input_tool is a tool the application adds)',
  'approval-edit': NO_EDIT,
  'lm-retry': "by default ADK's own Gemini model (models/google_llm.ts) builds its GoogleGenAI client with headers only, no retryOptions, and @google/genai retries only when given them (ApiClient.apiCall): a 503 is sent once and ends the run as an error event (seen in a direct run); retries are an opt-in, retryOptions in the agent's generateContentConfig.httpOptions (Gemini's constructor takes none), over Gemini's API, which the suite's endpoint does not speak",
  http: "ADK for TypeScript's model classes speak only Gemini's API (Gemini over @google/genai, ApigeeLlm; models/registry.ts): none can be pointed at the suite's OpenAI chat-completions endpoint",
};
const PARITY = {
  stop_reason: "library: the error event 'Max number of llm calls limit of N exceeded' (agents/invocation_context.ts, yielded by runAndHandleError, agents/llm_agent.ts) is the cap stop; a run that ends otherwise has its final-response event",
  iterations: 'derived: counted from the run\'s events, one per model response (ADK counts its llm calls in the InvocationContext, which the caller never sees)',
  max_iterations: "none: on maxLlmCalls runAsync raises nothing; its last event names the limit in its text only",
  partial_run: 'none: on maxLlmCalls runAsync raises nothing; the session keeps the run (sessionService.getSession)',
  concurrency: 'shared',
};
// Each verified in a direct run of an LlmAgent under InMemoryRunner with a BaseLlm subclass.
const MALFORMED = "Gemini answers a call it cannot parse with finishReason MALFORMED_FUNCTION_CALL and no content; ADK's Gemini (models/google_llm.ts, createLlmResponse in models/llm_response.ts) yields that as an LlmResponse with its errorCode and, with no function call in it, the run ends (LlmAgent.postprocess, agents/llm_agent.ts): the model is never told or asked again";
const UNKNOWN = "a call of a tool the agent lacks is never answered: getToolAndContext (agents/functions.ts) throws 'Function <name> is not found in the toolsDict.', LlmAgent.runAndHandleError (agents/llm_agent.ts) turns it into an error event without content, and the loop asks the model again with the call left without a response or an error (seen in a direct run)";
const BUDGET = "a resume is a new runAsync, whose InvocationContext counts maxLlmCalls from zero (InvocationCostManager, agents/invocation_context.ts): the steps before the pause are not counted (in a direct run with maxLlmCalls 2, two model calls before the pause and two more after the resume)";
const KNOWN_FAILURES = {
  'ARGS-2': MALFORMED,
  'ARGS-3': MALFORMED,
  'An unknown tool name is never run, and the loop goes on': UNKNOWN,
  'The agent is told that the tool it chose does not exist': UNKNOWN,
  ...deepArgsFailures("the tool runs, then the run throws RangeError 'Maximum call stack size exceeded' building the next request: getContents (agents/processors/content_processor_utils.ts) copies each event's content with lodash's cloneDeep, which recurses once per level (seen in a direct run)"),
  'Resuming keeps the budget the steps before the pause used': BUDGET,
  'Resuming keeps the step cap given to the call and the steps used before the pause': BUDGET,
  "Free text is fed back to the agent as the user's answer": "a ToolConfirmation takes no message for the model: FunctionTool.checkConfirmation (tools/function_tool.ts) answers a call that was not confirmed with its fixed {error: 'This tool call is rejected.'}, and the confirmation's payload (the person's text) never reaches the model (seen in a direct run)",
};

// -- the model --------------------------------------------------------------------------------------

// A content as the model is shown it: its text, its calls, its function responses (translate.shown).
function shown(content) {
  const parts = content.parts ?? [];
  let text = parts.map((p) => p.text ?? '').join('');
  text += parts.filter((p) => p.functionResponse).map((p) => JSON.stringify(p.functionResponse.response)).join('');
  for (const p of parts) if (p.functionCall) text += `\ncall ${p.functionCall.name ?? ''}(${JSON.stringify(p.functionCall.args)})`;
  return { role: content.role ?? 'user', content: text };
}

function isObject(text) {
  try {
    const value = JSON.parse(text);
    return value !== null && typeof value === 'object' && !Array.isArray(value);
  } catch {
    return false;
  }
}

let replies = 0;

class Scripted extends BaseLlm {
  constructor(hasTools) {
    super({ model: 'scripted' });
    this.hasTools = hasTools;
  }

  async *generateContentAsync(llmRequest) {
    const declared = (llmRequest.config?.tools ?? []).flatMap((t) => t.functionDeclarations ?? []);
    const tools = declared.map((d) => ({ type: 'function', function: {
      name: d.name, description: d.description, parameters: d.parametersJsonSchema ?? d.parameters ?? null } }));
    const call = { kind: tools.length || !this.hasTools ? 'step' : 'extract', adapter: 'native',
                   messages: llmRequest.contents.map(shown), tools: tools.length ? tools : null };
    const message = openaiMessage(await askModel(call), ++replies);
    const parts = message.content ? [{ text: message.content }] : [];
    for (const c of message.tool_calls ?? []) {
      if (!isObject(c.function.arguments)) { // as Gemini's API answers a call it cannot parse
        yield { errorCode: 'MALFORMED_FUNCTION_CALL', finishReason: 'MALFORMED_FUNCTION_CALL',
                errorMessage: `Malformed function call: ${c.function.arguments}` };
        return;
      }
      parts.push({ functionCall: { id: c.id, name: c.function.name, args: JSON.parse(c.function.arguments) } });
    }
    yield { content: { role: 'model', parts } };
  }
}

// -- reading the run --------------------------------------------------------------------------------

// The confirmations an event asks the person for: its long-running adk_request_confirmation calls.
function requests(event) {
  return getFunctionCalls(event).filter((c) => c.name === REQUEST_CONFIRMATION_FUNCTION_CALL_NAME
                                              && (event.longRunningToolIds ?? []).includes(c.id));
}

// One step per function call the model made, its thought the text beside it, its observation the
// last response to its call id (a confirmed call's result replaces the pause's placeholder). ADK's
// own adk_request_confirmation calls are the pause, not the model's steps.
function steps(events) {
  const calls = [];
  const results = new Map();
  for (const event of events) {
    const thought = (event.content?.parts ?? []).map((p) => p.text ?? '').join('') || null;
    for (const c of getFunctionCalls(event)) if (c.name !== REQUEST_CONFIRMATION_FUNCTION_CALL_NAME) calls.push({ c, thought });
    for (const r of getFunctionResponses(event)) results.set(r.id ?? '', r.response);
  }
  return calls.map(({ c, thought }) => ({
    thought, tool_name: c.name ?? '', tool_args: wire(json(c.args)),
    observation: results.has(c.id ?? '') ? json(results.get(c.id ?? '')) : null, is_error: null, call_id: c.id ?? null,
  }));
}

// The model responses among the events: a response with content, or one that carries the model's
// finish reason (a malformed call's, which has none); not the confirmation request ADK adds.
function modelCalls(events) {
  return events.filter((e) => !e.partial && !requests(e).length
                              && (e.finishReason != null || e.content?.role === 'model')).length;
}

// -- the agents -------------------------------------------------------------------------------------

const agents = new Map();
// Every pause a run reported, by its adk_request_confirmation call's id, whichever agent paused: a
// person's answer may reach another agent than the paused one (HITL-6), and refusing it is ADK's
// part, not the harness's.
const pauses = new Map();

// The application's persistent session store, configured once and shared by the runners of the
// agents that can pause: ADK's DatabaseSessionService over a SQLite file of this process's own.
let pausedSessions = null;
function sessionStore() {
  if (pausedSessions == null) {
    const directory = mkdtempSync(join(tmpdir(), 'adk-ts-sessions-'));
    process.on('exit', () => rmSync(directory, { recursive: true, force: true }));
    pausedSessions = new DatabaseSessionService(`sqlite://${join(directory, 'sessions.db')}`);
  }
  return pausedSessions;
}

function build(spec) {
  const interruptible = new Set(spec.tools.filter((t) => t.interruptible).map((t) => t.name));
  const tools = spec.tools.map((t) => new FunctionTool({
    name: t.name, description: t.description, parameters: zodObject(z, t),
    execute: (args) => callTool(t.name, args), ...(interruptible.has(t.name) ? { requireConfirmation: true } : {}),
  }));
  // The agent and its app are both named as the spec names the agent, as ADK's api_server makes
  // each agent it serves an app of its own: a session belongs to its app.
  const agent = new LlmAgent({ name: spec.name, model: new Scripted(tools.length > 0),
                               instruction: spec.signature.instructions || '', tools });
  if (!interruptible.size) return new InMemoryRunner({ agent, appName: spec.name });
  return new Runner({ agent, appName: spec.name, sessionService: sessionStore(),
                      artifactService: new InMemoryArtifactService(), memoryService: new InMemoryMemoryService() });
}

async function history(runner, session) {
  const found = await runner.sessionService.getSession({ appName: runner.appName, userId: USER, sessionId: session });
  return found ? found.events : [];
}

async function outcome(state, runner, session, seen, run) {
  state.last = [seen];
  const events = await history(runner, session);
  const trajectory = steps(events);
  const iterations = modelCalls(events);
  const request = seen.flatMap(requests)[0];
  if (seen.some((e) => e.errorCode && CAPPED.test(e.errorMessage ?? ''))) return { outputs: null, trajectory, iterations, stop_reason: 'max_steps' };
  if (request == null) {
    const final = [...seen].reverse().find((e) => isFinalResponse(e) && e.content);
    const reply = final ? (final.content.parts ?? []).map((p) => p.text ?? '').join('') : null;
    return { outputs: replyOutputs(state.spec.signature, reply), trajectory, iterations, stop_reason: 'finish' };
  }
  const original = request.args?.originalFunctionCall ?? {};
  pauses.set(request.id, { ...run, session });
  const inputs = events.find((e) => e.author === 'user' && e.content)?.content.parts.map((p) => p.text ?? '').join('') ?? null;
  return { trajectory, iterations, error: {
    type: 'ToolConfirmation', message: String(request.args?.toolConfirmation?.hint ?? ''), kind: 'human-in-the-loop', fields: {
      question: null, interrupt_id: request.id, tool_call: { name: original.name ?? '', args: json(original.args), call_id: original.id ?? null },
      context: { trajectory, iteration: iterations, input: inputs },
    } } };
}

// The cap's error as runAndHandleError yields it (agents/llm_agent.ts).
const CAPPED = /^Max number of llm calls limit of \d+ exceeded$/;

function failed(state, seen, error) {
  state.last = [seen];
  return { trajectory: steps(seen), iterations: modelCalls(seen), error: errorInfo(error) };
}

// `message` sent to the agent's runner in the run's session (a new one when it has none).
async function play(state, message, run, stream) {
  const runner = state.runner;
  const seen = [];
  const events = [];
  let out;
  let session = run.session;
  try {
    if (session == null) session = (await runner.sessionService.createSession({ appName: runner.appName, userId: USER })).id;
    for await (const event of runner.runAsync({ userId: USER, sessionId: session, newMessage: message, runConfig: { maxLlmCalls: run.cap } })) {
      seen.push(event);
      if (stream && getFunctionResponses(event).length) {
        const done = steps(seen).filter((s) => s.observation != null);
        for (const step of done.slice(events.length)) events.push({ kind: 'step', model_calls: modelCalls(seen), step });
      }
    }
    out = await outcome(state, runner, session, seen, run);
    if (stream) events.push({ kind: 'done', model_calls: modelCalls(seen), stop_reason: out.stop_reason ?? null, outputs: out.outputs ?? null });
  } catch (error) {
    out = failed(state, seen, error);
  }
  return stream ? { ...out, events } : out;
}

serve({
  hello: () => ({ protocol: PROTOCOL, name: NAME, version: VERSION, dependencies: installedVersions(import.meta.url),
                  capabilities: CAPABILITIES, not_claimed: NOT_CLAIMED, known_failures: KNOWN_FAILURES, parity: PARITY,
                  approval_form: 'pause' }),
  configure: () => ({}),
  global_adapter: () => ({ adapter: null }),
  build({ agent, spec }) {
    try {
      agents.set(agent, { spec, runner: build(spec), last: [] });
      return { error: null };
    } catch (error) {
      return { error: errorInfo(error) };
    }
  },
  async run({ agent, call }) {
    const state = agents.get(agent);
    const cap = call.max_steps ?? state.spec.max_steps;
    const message = { role: 'user', parts: [{ text: userMessage(call.inputs) }] };
    return { outcome: await play(state, message, { session: null, cap }, call.mode === 'stream') };
  },
  async resume({ agent, request }) {
    const state = agents.get(agent);
    const pause = pauses.get(request.interrupt_id);
    if (pause == null) return unknownPause(request.interrupt_id);
    const answer = String(request.response).trim();
    const lower = answer.toLowerCase();
    if (answer.startsWith('{') && JSON.parse(answer).edit) return { outcome: { error: { type: 'NotSupported', message: NO_EDIT, kind: 'other', fields: {} } } };
    // Free text declines the call, the text as the confirmation's payload: ADK takes no message.
    const confirmed = ['yes', 'y'].includes(lower);
    const confirmation = { confirmed, ...(!confirmed && !['no', 'n'].includes(lower) ? { payload: answer } : {}) };
    const message = { role: 'user', parts: [{ functionResponse: { id: request.interrupt_id, name: REQUEST_CONFIRMATION_FUNCTION_CALL_NAME, response: confirmation } }] };
    return { outcome: await play(state, message, pause, request.mode === 'stream') };
  },
  step_tool_names: () => ({ names: null }),
  mutate_last_result({ agent, marker }) {
    const changed = [];
    for (const events of agents.get(agent).last) {
      changed.push(`the run's events (${events.length} events)`);
      for (const e of events) for (const r of getFunctionResponses(e)) r.response = { result: marker };
      events.push(marker);
    }
    return { changed };
  },
});
