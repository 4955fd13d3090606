// The react-conformance harness protocol (version 3) for Node harnesses: JSON lines on stdio.
//
// `serve(handlers)` reads the suite's commands from stdin and writes the replies to stdout. A
// handler returns the reply's payload; `askModel` and `callTool` send the harness's own requests
// and wait for the suite's answer. Which run a request belongs to travels with the async context,
// so concurrent runs need no bookkeeping in the harness. See docs/writing-a-harness.md.

import { AsyncLocalStorage } from 'node:async_hooks';
import { fstatSync, readFileSync, writeSync } from 'node:fs';
import { STATUS_CODES } from 'node:http';
import { createInterface } from 'node:readline';

export const PROTOCOL = 3;

// Only protocol messages may reach the suite's protocol stream. The suite gives the harness a pipe
// of its own for them (its file descriptor in REACT_CONFORMANCE_PROTOCOL_FD): file descriptor 1,
// which a library reaches past process.stdout (fs.writeSync(1), a logger's destination such as
// pino's, a child process with stdio 'inherit'), is then a log the suite keeps with stderr. Node
// cannot dup2 that descriptor away as the Ruby module does. A suite that gives no pipe reads
// stdout, and only process.stdout and console are kept off it.
const pipe = protocolPipe();
const writeLine = pipe === undefined ? process.stdout.write.bind(process.stdout) : (line) => writeAll(pipe, line);
process.stdout.write = process.stderr.write.bind(process.stderr);
console.log = console.info = console.debug = console.error;

function protocolPipe() {
  const fd = Number(process.env.REACT_CONFORMANCE_PROTOCOL_FD);
  delete process.env.REACT_CONFORMANCE_PROTOCOL_FD; // the harness's, not its children's
  if (!Number.isInteger(fd) || fd < 3) return undefined;
  try {
    fstatSync(fd);
    return fd;
  } catch {
    return undefined;
  }
}

function writeAll(fd, text) {
  let bytes = Buffer.from(text, 'utf8');
  while (bytes.length > 0) {
    try {
      bytes = bytes.subarray(writeSync(fd, bytes));
    } catch (error) {
      if (error.code !== 'EAGAIN') throw error;
    }
  }
}

/** The installed version of the package `name` in the harness's own node_modules; `harness` is
 *  the harness's import.meta.url. */
export function installedVersion(harness, name) {
  try {
    return JSON.parse(readFileSync(new URL(`node_modules/${name}/package.json`, harness), 'utf-8')).version;
  } catch (error) {
    if (error.code === 'ENOENT') return 'not installed'; // as a Python binding's report says it
    throw error;
  }
}

/** The welcome's `dependencies`: the installed version of every package the harness's
 *  package.json depends on, so that the report names what was judged (`harness` as above). */
export function installedVersions(harness) {
  const manifest = JSON.parse(readFileSync(new URL('package.json', harness), 'utf-8'));
  return Object.fromEntries(Object.keys(manifest.dependencies ?? {}).map((name) => [name, installedVersion(harness, name)]));
}

const runs = new AsyncLocalStorage();
const waiting = new Map();
let nextId = 1;

/** The id of the run the calling code belongs to (undefined outside a run). */
export function currentRun() {
  return runs.getStore();
}

function send(message) {
  writeLine(JSON.stringify(message) + '\n');
}

function ask(type, fields) {
  const run = runs.getStore();
  if (run === undefined) throw new Error(`a ${type} request outside of any run`);
  const id = `${type}-${nextId++}`;
  return new Promise((resolve) => {
    waiting.set(id, resolve);
    send({ type, id, run, ...fields });
  });
}

/** A `hang` fault's notice: the request's own timeout in seconds (null without one), which the
 * suite passes on the run's model clock. Send it, then fail the request as that timeout would. */
export function notifyHang(timeout) {
  const run = runs.getStore();
  if (run === undefined) throw new Error('a hang notice outside of any run');
  send({ type: 'hang', run, timeout });
}

/** A retry sleep of the library's model client (`seconds`), which the suite passes on the run's
 * model clock (protocol 3's `sleep` notice): send it instead of sleeping. */
export function notifySleep(seconds) {
  const run = runs.getStore();
  if (run === undefined) throw new Error('a sleep notice outside of any run');
  send({ type: 'sleep', run, seconds });
}

/** A scripted HTTP fault (a `fault` turn with a status) as the endpoint answers it: the status, its
 * Retry-After, and an error body that says what failed in words, never the status code, so that
 * an error which merely quotes the body does not name the status by chance (as server.py does);
 * `errorBody(status, message)` shapes the body as the API spoken (chat completions' by default), and
 * `statusOf(scripted)` is the status its real service answers in place of the scripted one
 * (Anthropic's 529 for an unavailable service: server.py's `api.status`). */
export function faultResponse(turn, errorBody = (status, message) => ({ error: { message } }), statusOf = (s) => s) {
  const scripted = Number(turn.fault);
  const status = statusOf(scripted);
  const headers = { 'content-type': 'application/json' };
  if (turn.retry_after != null) headers['retry-after'] = String(turn.retry_after);
  const body = errorBody(status, `scripted fault: ${STATUS_CODES[scripted]}`);
  return new Response(JSON.stringify(body), { status, headers });
}

/** The scripted turn answering `call` (an LMCall); throws if the script did not expect it. */
export async function askModel(call) {
  const answer = await ask('model', { call });
  if (answer.error != null || answer.turn == null) throw new Error(answer.error ?? 'no turn');
  return answer.turn;
}

/** The standing answer to an auxiliary model call (one the harness names in its welcome's
 *  `auxiliary_calls`), `continue`: render it as the library's "go on, unchanged". */
export async function askAuxiliary(name, call) {
  const answer = await ask('model', { call: { ...call, kind: 'auxiliary', auxiliary: name } });
  if (answer.error != null || answer.auxiliary == null) throw new Error(answer.error ?? 'no answer');
  return answer.auxiliary;
}

/** The person's answer to the library's approval callback for the call `name(args)` (protocol 3,
 * `approval_form: "callback"`): `yes`, `no`, free text, or an edit as JSON text. */
export async function askApproval(name, args, callId = null) {
  const answer = await ask('approve', { name, args: json(args), call_id: callId });
  return answer.response;
}

// The suite's JSON parser refuses a message nested deeper than about 200 levels.
const DEEPEST = 150;

function depth(value, limit) {
  if (value === null || typeof value !== 'object') return 0;
  if (limit <= 0) return 1;
  let deepest = 0;
  for (const item of Object.values(value)) deepest = Math.max(deepest, depth(item, limit - 1));
  return 1 + deepest;
}

// Arguments too deep for a protocol message, as their JSON text; V8's JSON.stringify recurses, so
// arguments deeper than its stack (JSON.parse has no such limit) are described instead.
function deepText(args) {
  try {
    return JSON.stringify(args);
  } catch (error) {
    if (!(error instanceof RangeError)) throw error;
    return `arguments nested too deep for JSON.stringify (${error.message})`;
  }
}

/** `value` as JSON text, without recursion (JSON.stringify overflows the stack near ten thousand
 *  levels): tool args nested a hundred thousand levels deep (ARGS-5). */
export function stringifyDeep(value) {
  const out = [];
  const stack = [[value, 'value']];
  while (stack.length > 0) {
    const [item, what] = stack.pop();
    if (what === 'text') { out.push(item); continue; }
    if (Array.isArray(item)) {
      out.push('[');
      stack.push([']', 'text']);
      for (let i = item.length - 1; i >= 0; i -= 1) {
        stack.push([item[i] === undefined ? null : item[i], 'value']);
        if (i > 0) stack.push([',', 'text']);
      }
    } else if (item !== null && typeof item === 'object' && typeof item.toJSON !== 'function') {
      const entries = Object.entries(item).filter(([, v]) => v !== undefined && typeof v !== 'function');
      out.push('{');
      stack.push(['}', 'text']);
      for (let i = entries.length - 1; i >= 0; i -= 1) {
        stack.push([entries[i][1], 'value']);
        stack.push([`${JSON.stringify(entries[i][0])}:`, 'text']);
        if (i > 0) stack.push([',', 'text']);
      }
    } else {
      out.push(JSON.stringify(item) ?? 'null');
    }
  }
  return out.join('');
}

/** A value as a protocol message may carry it: nested deeper than the suite parses, its JSON text. */
export function wire(value) {
  return depth(value, DEEPEST) > DEEPEST ? deepText(value) : value;
}

// The ARGS-5 examples nested thousands of levels deep: a library that crashes on all of them lists
// them with one reason (they reach the suite, as `args_json`, when the library hands them over).
const DEEP_EXAMPLES = [
  'store-an object nested 100000 levels deep', 'store-an object nested 5000 levels deep',
  'store-an object nested 5000 levels deep after an escaped quote', 'store-arrays nested 5000 levels deep inside its object',
  'store-arrays nested 5000 levels deep, each beside an empty one',
];

/** Known failures, all for `reason`, of the ARGS-5 examples too deep for the protocol; with
 *  `jsonAdapter`, also the deepest one of the JSON-adapter outline (a signature binding's). */
export function deepArgsFailures(reason, { jsonAdapter = false } = {}) {
  const failures = Object.fromEntries(DEEP_EXAMPLES.map((example) =>
    [`test_tool_args_of_any_size_or_nesting_reach_the_tool_intact_or_are_refused_saying_why[${example}]`, reason]));
  if (jsonAdapter) {
    failures['test_under_the_json_adapter_tool_args_of_any_size_or_nesting_reach_the_tool_intact_or_are_refused_saying_why'
             + `[${DEEP_EXAMPLES[0]}]`] = reason;
  }
  return failures;
}

/** Runs the suite's tool `name` with `args`; throws the tool's error under its own name. Args
 *  nested deeper than a protocol message may be are sent as their JSON text (`args_json`). */
export async function callTool(name, args) {
  // Args nested deeper than a message may be travel as their JSON text (protocol 3's `args_json`),
  // which the suite parses to any depth: the library's handing them over is judged, not ours.
  const deep = depth(args, DEEPEST) > DEEPEST;
  const fields = deep ? { args: null, args_json: stringifyDeep(args) } : { args };
  const answer = await ask('tool', { name, ...fields });
  if (answer.error != null) {
    const error = new Error(answer.error.message);
    error.name = answer.error.type;
    throw error;
  }
  return answer.result;
}

/** An exception as the protocol's ErrorInfo. */
export function errorInfo(error) {
  if (!(error instanceof Error)) return { type: typeof error, message: String(error), kind: 'other', fields: {} };
  const type = error.name && error.name !== 'Error' ? error.name : error.constructor?.name ?? 'Error';
  return { type, message: error.message, kind: 'other', fields: {} };
}

/** The outcome of a resume naming a pause this harness never saw: a pause another agent made is
 * the library's to refuse (HITL-6), so look pauses up by id across agents before using this. */
export function unknownPause(id) {
  return { outcome: { error: { type: 'UnknownInterrupt', message: `no pause ${id} was made through this harness`, kind: 'other', fields: {} } } };
}

/** A value as JSON (what cannot be serialised becomes its text). */
export function json(value) {
  if (value === undefined) return null;
  try {
    return JSON.parse(JSON.stringify(value));
  } catch {
    return String(value);
  }
}

const REPLIES = {
  hello: 'welcome', configure: 'done', global_adapter: 'adapter', build: 'built', run: 'ran',
  resume: 'ran', run_concurrently: 'ran_all', step_tool_names: 'names', mutate_last_result: 'done',
};

async function carryOut(handlers, command) {
  switch (command.type) {
    case 'hello':
      return { protocol: PROTOCOL, ...(await handlers.hello(command)) };
    case 'run':
    case 'resume':
      return runs.run(command.run, () => handlers[command.type](command));
    case 'run_concurrently': {
      const outcomes = await Promise.all(command.runs.map(
        (entry) => runs.run(entry.run, async () => (await handlers.run(entry)).outcome)));
      return { outcomes };
    }
    default: {
      const handler = handlers[command.type];
      if (handler === undefined) throw new Error(`this harness has no ${command.type} command`);
      return (await handler(command)) ?? {};
    }
  }
}

/** The library's call never settles (a rejection it left unhandled, a promise it never resolves):
 * thrown from a handler, the suite fails the scenario as hung, as it does a Python library's call
 * that never returns, instead of blaming the harness. */
export class NeverSettled extends Error {
  constructor(message) {
    super(message);
    this.hung = true;
  }
}

/** Serve the suite until it says stop. */
export function serve(handlers) {
  const lines = createInterface({ input: process.stdin, crlfDelay: Infinity });
  lines.on('line', (line) => {
    const message = JSON.parse(line);
    if (message.type === 'turn' || message.type === 'observation' || message.type === 'approval') {
      const resolve = waiting.get(message.id);
      waiting.delete(message.id);
      resolve(message);
      return;
    }
    if (message.type === 'stop') {
      send({ type: 'done', id: message.id });
      process.exit(0);
    }
    carryOut(handlers, message).then(
      (payload) => send({ type: REPLIES[message.type], id: message.id, ...payload }),
      (error) => send(error instanceof NeverSettled
        ? { type: 'failed', id: message.id, message: error.message, hung: true }
        : { type: 'failed', id: message.id, message: error?.stack ?? String(error) }),
    );
  });
  lines.on('close', () => process.exit(0));
}
