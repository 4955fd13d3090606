// The react-conformance harness for Ax (npm package `@ax-llm/ax`), its tool-calling loop.
//
//   pytest --impl ax        (or --impl cmd:"node harnesses/ax/harness.mjs")
//
// An AxGen with functions is Ax's ReAct: each model request may call functions (native tool
// calls) or write the output fields, which ends the loop. The model is Ax's own OpenAI client,
// AxAIOpenAI, with its documented `fetch` option: every chat-completions request Ax builds is sent
// to the suite as an LMCall, and the scripted turn comes back as the chat.completion JSON (or the
// HTTP status) an endpoint would answer, so Ax's own request building, response parsing, retries
// (util/apicall.ts, apiCall) and function execution all run. A fault turn is that HTTP status, a
// dropped connection (fetch throws) or a timeout (an AbortError, as Ax's own timeout raises it).
//
// Ax has no finish tool and no separate extraction call: the model ends the loop by writing the
// output fields in its reply. So a scripted `finish` step and the extraction turn after it are
// rendered as that one reply: the harness asks the suite for the step turn, then for the
// extraction turn (showing the same request), and answers with the step's thought and the
// extraction's outputs. A `finish` step that carries output values itself is a model writing its
// outputs in the step that ends the loop: those values are the reply, and no extraction is asked.
//
// The step cap: AxGen's `maxSteps` counts model requests that may call functions (one step = one
// chat request, validation retries aside), so spec.max_steps maps to it one to one; forward()
// takes `maxSteps` per call too. The trajectory is read from Ax's documented memory option: each
// run gets a fresh AxMemory (`mem`, what forward() creates itself when given none), and its
// history holds every assistant reply with its function calls and every function result.

import { AxAIOpenAI, AxGen, AxMemory, AxSignature } from '@ax-llm/ax';
import { askModel, callTool, currentRun, errorInfo, faultResponse, installedVersion, installedVersions, json, notifyHang, serve, wire } from '../lib/protocol.mjs';

const VERSION = installedVersion(import.meta.url, '@ax-llm/ax');
const FIELD_TYPES = { str: 'string', int: 'number', float: 'number', bool: 'boolean', list: 'json', dict: 'json' };
const JSON_TYPES = { str: 'string', int: 'integer', float: 'number', bool: 'boolean', list: 'array', dict: 'object' };

// The contract this harness is written against: catalogue 3's capabilities, and each step's
// is_error (the function result's own isError in Ax's memory) and call_id (the native call id).
const PROTOCOL = 3;
const CAPABILITIES = ['signature', 'max-steps-error', 'per-call-cap', 'async', 'parallel-tool-calls', 'lm-retry'];
// How the harness fills the contract's derivable fields (conformance.binding.PARITY).
const PARITY = {
  stop_reason: "library: the AxGenerateError around Error('Max steps reached: N') (dsp/generate.ts, AxGen._forward2) is the cap stop; forward() returns only when the model wrote the output fields, the answer",
  iterations: "derived: counted from the run's AxMemory history, one assistant reply per model request (the documented `mem` option of forward, mem/memory.ts)",
  max_iterations: "derived: the maxSteps the harness gave AxGen or forward(), which the error names only in its text 'Max steps reached: N' (dsp/generate.ts, AxGen._forward2)",
  partial_run: "derived: the function calls and results in the run's AxMemory history (the documented `mem` option of forward, mem/memory.ts); the error carries none",
  concurrency: 'shared',
};
const NOT_CLAIMED = {
  adapters: 'no pluggable format-and-parse layer: AxGen always uses native function calling through its AxAI client',
  'cap-summary': "on the step cap AxGen throws 'Max steps reached: N' (dsp/generate.ts, AxGen._forward2): no run returns on a cap to summarise",
  'repeated-error-stop': 'AxGen keeps no count of function failures: an AxFunctionError goes back to the model on every step until maxSteps, any other error makes forward() throw at once (dsp/functions.ts, processFunctions)',
  'approval-edit': 'AxGen runs every function the model calls at once (dsp/functions.ts, processFunctions): no approval to edit',
  'durable-approvals': 'AxGen runs every function the model calls at once (dsp/functions.ts, processFunctions): no approval to persist',
  'max-steps-extract': "on the step cap AxGen throws 'Max steps reached: N' (dsp/generate.ts, AxGen._forward2): no extraction",
  'max-steps-return': "on the step cap AxGen throws 'Max steps reached: N' (dsp/generate.ts, AxGen._forward2): it never returns normally",
  'ask-user': 'AxGen has no built-in tool through which the agent asks the person a question',
  'tool-approval': 'AxGen runs every function the model calls at once (dsp/functions.ts, processFunctions): no approval step, no resume',
  streaming: "AxGen's streamingForward yields deltas of the output fields, not step events, and no event carries a stop reason",
  http: "AxAIOpenAI takes a base URL (apiURL), but the suite's endpoint answers a signature binding's finish step as a native 'finish' tool call, which Ax (no finish tool) rejects as an unknown function: it cannot render Ax's one final reply",
};

const RAISES = 'a function that throws anything but an AxFunctionError makes forward() throw (dsp/functions.ts, processFunctions rethrows it): the run crashes';
const NOT_AN_OBJECT = "arguments that are JSON but not an object (an array, a number, a string, null) are JSON.parse'd and handed to the function as they are (dsp/functions.ts, AxFunctionProcessor.executeFunction): nothing checks they are an object, and the function's own error then makes forward() throw";
const WRONG_VALUES = "a missing required parameter or a value of the wrong type reaches the function: executeFunction (dsp/functions.ts, AxFunctionProcessor) JSON.parse's the arguments and never validates them against the function's parameter schema";
const UNDECLARED = "an argument the parameter schema does not declare reaches the function: executeFunction (dsp/functions.ts, AxFunctionProcessor) never compares the arguments' keys with the schema's properties";
const BAD_JSON = "malformed arguments make executeFunction throw 'Invalid function arguments: ...' (dsp/functions.ts), which forward() rethrows: the run crashes";
const KNOWN_FAILURES = {
  'test_a_malformed_signature_string_fails_at_construction_with_a_clear_error[-> answer-input]':
    'Ax refuses \'-> answer\' but names the wrong culprit: \'Invalid field name "->"\', not the missing inputs (dsp/sig.ts, AxSignature)',
  'The outputs come from the extraction call, not from a step':
    'no separate extraction call: the output values the model writes in the reply that ends the loop are the prediction',
  'ERR-1': RAISES,
  'An unknown tool name never crashes the run, also when it is the last step':
    'an unknown function is a ValidationError (dsp/functions.ts, executeWithDetails) that AxGen answers with a correction and another model request within the same step (dsp/generate.ts, AxGen._forward2): on the last step that is a model call beyond the cap',
  'ARGS-2': NOT_AN_OBJECT,
  'ARGS-6': UNDECLARED,
  'ARGS-3': BAD_JSON,
  'A hung endpoint times out and the call is retried':
    'apiCall (util/apicall.ts) arms its abort timer only when a timeout is set (n&&setTimeout(...)), and AxAIOpenAI sets none by default: a request to an endpoint that never answers waits for ever',
  "Tool args that break the tool's schema never reach it with a wrong or missing value": WRONG_VALUES,
  'test_a_nontransient_model_failure_is_not_retried_and_fails_the_call_clearly[401]':
    "a 401 is not retried, but the error says 'Authentication failed' without the status (util/apicall.ts, AxAIServiceAuthenticationError)",
  'STEP-4': "a function call without its arguments runs the function on undefined: executeFunction (dsp/functions.ts, AxFunctionProcessor) JSON.parse's only a non-empty string and otherwise hands the missing args over as they are, neither asking again nor showing an error; the function's own exception then makes forward() throw (processFunctions rethrows it)",
};

let callIds = 0;
// The output field titles ('Answer') of each run's agent: a final reply writes 'Answer: ...' lines.
const titlesOf = new Map();

function finalReply(outputs) {
  return titlesOf.get(currentRun()).map(({ name, title }) => {
    const value = outputs[name];
    return `${title}: ${typeof value === 'string' ? value : JSON.stringify(value ?? null)}`;
  }).join('\n');
}

// A chat-completions message as the model sees it: its text, and an assistant's tool calls.
function shown(message) {
  const parts = [];
  if (typeof message.content === 'string') parts.push(message.content);
  else if (Array.isArray(message.content)) parts.push(message.content.map((p) => p.text ?? '').join(''));
  if (message.tool_calls?.length) parts.push(JSON.stringify(message.tool_calls.map((c) => c.function)));
  return { role: message.role, content: parts.join('\n') };
}

function reply(model, message) {
  return new Response(JSON.stringify({
    id: `chatcmpl-${++callIds}`, object: 'chat.completion', created: 0, model,
    choices: [{ index: 0, message, finish_reason: message.tool_calls ? 'tool_calls' : 'stop' }],
    usage: { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 },
  }), { status: 200, headers: { 'content-type': 'application/json' } });
}

function fault(turn) {
  if (turn.fault === 'connection') throw new TypeError('fetch failed: scripted connection reset');
  if (turn.fault === 'hang') {
    // The endpoint never answers: Ax's own request timeout (AxBaseAI `timeout`, 9e5 ms unless
    // set) passes on the model's clock, then the request is aborted as that timeout aborts it.
    notifyHang(typeof service.timeout === 'number' ? service.timeout / 1000 : null);
  }
  if (turn.fault === 'timeout' || turn.fault === 'hang') {
    const error = new Error('scripted timeout: the request was aborted');
    error.name = 'AbortError';
    throw error;
  }
  return faultResponse(turn);
}

// The model endpoint: the chat-completions request AxAIOpenAI sends, answered from the script.
async function scripted(url, init) {
  const body = JSON.parse(init.body);
  const call = { kind: 'step', adapter: 'native', messages: body.messages.map(shown),
                 tools: body.tools?.length ? body.tools : null };
  let turn;
  try {
    turn = await askModel(call);
  } catch (error) {
    // Not scripted: answer as the suite's endpoint does, 400 (not transient, so not retried).
    return new Response(JSON.stringify({ error: { message: error.message } }), { status: 400, headers: { 'content-type': 'application/json' } });
  }
  if (turn.kind === 'fault') return fault(turn);
  if (turn.kind === 'step' && turn.tool_name === 'finish') {
    const written = turn.tool_args ?? {};
    if (written && typeof written === 'object' && Object.keys(written).length) {
      return reply(body.model, { role: 'assistant', content: finalReply(written) });
    }
    const extract = await askModel({ ...call, kind: 'extract' });
    if (extract.kind === 'fault') return fault(extract);
    return reply(body.model, { role: 'assistant', content: finalReply(extract.outputs) });
  }
  if (turn.kind !== 'step') return reply(body.model, { role: 'assistant', content: finalReply(turn.outputs) });
  const calls = [turn, ...(turn.parallel ?? [])].map((c, i) => ({
    id: `call-${callIds + 1}-${i}`, type: 'function',
    // A step reply without its args field is a function call without its `arguments`.
    function: c.without_tool_args ? { name: c.tool_name }
      : { name: c.tool_name, arguments: c.raw_tool_args ?? JSON.stringify(c.tool_args) },
  }));
  return reply(body.model, { role: 'assistant', content: turn.thought || null, tool_calls: calls });
}

// Ax's own client. Its retry backoff keeps its shape (backoffFactor 2, jitter) but starts at
// 100 ms instead of 1 s (its `retry` option), so that retries cost little time and NET-1 still
// sees the waits grow, in real time.
const service = new AxAIOpenAI({
  apiKey: 'scripted', apiURL: 'http://scripted.invalid/v1',
  options: { fetch: scripted, retry: { initialDelayMs: 100 } },
});

function field(f) {
  return { name: f.name, description: f.description || undefined, type: { name: FIELD_TYPES[f.type] } };
}

function signature(spec) {
  // An arrow string's types are written in Ax's own names (`count:number`, not `count: int`).
  if (spec.form === 'string' && spec.text != null) return spec.text.replace(/:\s*(str|int|float|bool|list|dict)\b/g, (_, t) => `:${FIELD_TYPES[t]}`);
  if (spec.form === 'string') return `${spec.inputs.map((f) => f.name).join(', ')} -> ${spec.outputs.map((f) => f.name).join(', ')}`;
  const config = { description: spec.instructions || undefined, inputs: spec.inputs.map(field), outputs: spec.outputs.map(field) };
  return spec.form === 'class' ? new AxSignature(config) : config;
}

function fn(spec) {
  return {
    name: spec.name,
    description: spec.description,
    parameters: {
      type: 'object',
      properties: Object.fromEntries(spec.parameters.map((p) => [p.name, { type: JSON_TYPES[p.type], description: p.description }])),
      required: spec.parameters.map((p) => p.name),
    },
    // A call without arguments reaches the function as undefined, which JSON carries as null.
    func: (args) => callTool(spec.name, args === undefined ? null : args),
  };
}

function parsed(text) {
  if (typeof text !== 'string') return json(text);
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

// The trajectory in Ax's memory: one step per function call of each assistant reply, with the
// reply's text as its thought and the function result of the same call id as its observation.
function trajectory(history) {
  const results = new Map(history.filter((e) => e.role === 'function').map((e) => [e.functionId, e]));
  const steps = [];
  for (const entry of history) {
    if (entry.role !== 'assistant' || !entry.functionCalls?.length) continue;
    for (const call of entry.functionCalls) {
      const result = results.get(call.id);
      // Ax reads a result without isError as a success (dsp/functions.ts: 'isError' in c ? !!c.isError : false).
      steps.push({ thought: entry.content ?? entry.thought ?? null, tool_name: call.function.name,
                   tool_args: wire(parsed(call.function.params)), observation: result ? parsed(result.result) : null,
                   is_error: result ? Boolean(result.isError) : null, call_id: call.id ?? null });
    }
  }
  return steps;
}

// How many model replies the run's memory holds: the steps Ax took.
function replies(history) {
  return history.filter((e) => e.role === 'assistant').length;
}

function failure(error) {
  const info = errorInfo(error);
  if (/^Max steps reached: \d+/.test(error?.cause?.message ?? '')) info.kind = 'max-iterations';
  return info;
}

// The max-steps error's fields, which the error carries none of (PARITY): the run as its memory
// holds it, and the cap the harness gave. A call of a function the agent lacks used no tool.
function capFields(spec, steps, iterations, cap) {
  const own = new Set(spec.tools.map((t) => t.name));
  const ran = steps.filter((s) => s.observation != null && own.has(s.tool_name));
  return { iterations, max_iterations: cap, tools_used: ran.map((s) => s.tool_name), history: steps,
           last_observation: ran.length ? ran.at(-1).observation : null };
}

const agents = new Map();

serve({
  hello: () => ({ protocol: PROTOCOL, name: 'ax', version: VERSION, dependencies: installedVersions(import.meta.url),
                  capabilities: CAPABILITIES, not_claimed: NOT_CLAIMED,
                  known_failures: KNOWN_FAILURES, parity: PARITY }),
  // Ax has no adapters: there is nothing to configure, and nothing to read back.
  configure: () => ({}),
  global_adapter: () => ({ adapter: null }),
  build({ agent, spec }) {
    try {
      const gen = new AxGen(signature(spec.signature), { functions: spec.tools.map(fn), maxSteps: spec.max_steps });
      agents.set(agent, { gen, spec, last: null });
      return { error: null };
    } catch (error) {
      return { error: errorInfo(error) };
    }
  },
  async run({ agent, run, call }) {
    const state = agents.get(agent);
    titlesOf.set(run, state.gen.getSignature().getOutputFields().map((f) => ({ name: f.name, title: f.title })));
    const mem = new AxMemory();
    const options = { stream: false, mem, ...(call.max_steps != null ? { maxSteps: call.max_steps } : {}) };
    let outcome;
    try {
      const result = await state.gen.forward(service, call.inputs, options);
      const outputs = Object.fromEntries(state.spec.signature.outputs.map((f) => [f.name, json(result[f.name])]));
      // forward() returns only when the model wrote the output fields: the final answer.
      outcome = { outputs, stop_reason: 'finish' };
    } catch (error) {
      outcome = { error: failure(error) };
    } finally {
      titlesOf.delete(run);
    }
    const history = mem.history(0);
    state.last = { mem, history };
    const steps = trajectory(history);
    const iterations = replies(history);
    if (outcome.error?.kind === 'max-iterations') {
      outcome.stop_reason = 'max_steps';
      outcome.error.fields = capFields(state.spec, steps, iterations, call.max_steps ?? state.spec.max_steps);
    }
    return { outcome: { ...outcome, trajectory: steps, iterations } };
  },
  // Native function calling: the model may name exactly the declared functions (there is no finish).
  step_tool_names: ({ agent }) => ({ names: agents.get(agent).spec.tools.map((t) => t.name) }),
  mutate_last_result({ agent, marker }) {
    const last = agents.get(agent).last;
    if (last != null) {
      for (const entry of last.history) entry.content = `${entry.content ?? ''} ${marker}`;
      last.mem.addRequest([{ role: 'user', content: marker }]);
      return { changed: [`the call's memory history (${last.history.length} entries)`] };
    }
    return { changed: [] };
  },
});
