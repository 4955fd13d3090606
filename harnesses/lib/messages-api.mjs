// Anthropic's Messages API (`POST /v1/messages`) as the harnesses that drive the Anthropic TypeScript
// SDK (npm `@anthropic-ai/sdk`) script it, as conformance/_messages_api.py does for the loopback
// endpoint: the client's documented `fetch` option answers every request from the script, so the
// client's own request building, reply parsing, streaming and retries run as in a user's run. A
// request is shown to the suite as the LMCall of its chat-completions form (`chatBody`, the message
// threads expanded), and the scripted turn comes back as a `message` (or its server-sent events),
// a fault as the status and error body the real API sends.

import { Refused, scriptedApi } from './scripted-api.mjs';

/** The fields a message thread takes from the request that created it (the SDK's ThreadState,
 * CREATE_ONLY_FIELDS in the Python SDK): a `continue` leaves them out. */
const CREATE_ONLY_FIELDS = ['system', 'tools'];

// The conversations held for the message-threads beta (`thread: { type: 'create' }`, then
// `{ type: 'continue', previous_message_id }` with only the new messages), by reply id. The SDK
// threads its tool runner's requests by default, so an endpoint that held none would lose them.
const threads = new Map();

/** The whole request a `continue` stands for: the held fields and messages, then its own. An
 * unknown `previous_message_id` is refused as the real API refuses it (`thread_not_found`). */
export function expand(body) {
  const thread = body.thread;
  if (thread?.type !== 'continue') return body;
  const held = threads.get(String(thread.previous_message_id));
  if (held === undefined) {
    throw new Refused(404, { type: 'error', error: {
      type: 'not_found_error', details: { error_code: 'thread_not_found' },
      message: `no thread holds the message '${thread.previous_message_id}': replay the conversation with thread: {'type': 'create'}` } });
  }
  return { ...body, ...held.fields, messages: [...held.messages, ...(body.messages ?? [])] };
}

/** Keep the conversation of a threaded request (`body` as `expand` returned it) and its reply. */
function hold(body, message) {
  if (body.thread == null || typeof body.thread !== 'object') return;
  const fields = Object.fromEntries(CREATE_ONLY_FIELDS.filter((f) => f in body).map((f) => [f, body[f]]));
  threads.set(message.id, { fields, messages: [...(body.messages ?? []), { role: 'assistant', content: message.content }] });
}

function blockText(content) {
  if (Array.isArray(content)) return content.filter((b) => b && typeof b === 'object').map((b) => String(b.text ?? '')).join('');
  return content == null ? '' : String(content);
}

const CHOICES = { auto: 'auto', any: 'required', none: 'none' };

/** _messages_api.chat_body: the request as a chat-completions body: `system` and the messages
 * (`tool_use` blocks as an assistant's tool calls, `tool_result` blocks as tool messages), the
 * client tools (those with an `input_schema`) and `tool_choice` in chat form. */
export function chatBody(body) {
  const messages = [];
  if (body.system) messages.push({ role: 'system', content: blockText(body.system) });
  for (const message of body.messages ?? []) {
    const blocks = typeof message.content === 'string' ? [{ type: 'text', text: message.content }] : message.content ?? [];
    const results = blocks.filter((b) => b.type === 'tool_result');
    for (const result of results) messages.push({ role: 'tool', tool_call_id: result.tool_use_id, content: blockText(result.content) });
    const text = blockText(blocks.filter((b) => b.type === 'text'));
    const calls = blocks.filter((b) => b.type === 'tool_use').map((b) => ({
      id: b.id, type: 'function',
      function: { name: b.name, arguments: typeof b.input === 'string' ? b.input : JSON.stringify(b.input) },
    }));
    if (text || calls.length || !results.length) {
      messages.push({ role: String(message.role), content: text, ...(calls.length ? { tool_calls: calls } : {}) });
    }
  }
  const chat = { model: body.model, messages, stream: Boolean(body.stream) };
  const tools = (body.tools ?? []).filter((t) => 'input_schema' in t).map((t) => ({
    type: 'function', function: { name: t.name, description: t.description ?? '', parameters: t.input_schema } }));
  if (tools.length) chat.tools = tools;
  const choice = body.tool_choice;
  if (choice && typeof choice === 'object') {
    chat.tool_choice = choice.type === 'tool' ? { type: 'function', function: { name: choice.name } } : CHOICES[choice.type] ?? choice.type;
  }
  return chat;
}

/** Tool-call arguments as a `tool_use` block's input, as JSON text: the object as the model wrote
 * it (spliced in verbatim, so that an object nested deeper than any JSON parser goes reaches the
 * client as the wire would carry it); arguments a scenario scripts as malformed JSON, or as JSON
 * that is not an object, as a string (the real API never sends one; the scenario asks what a
 * client does with it). */
function inputJson(args) {
  try {
    const value = JSON.parse(args);
    return value && typeof value === 'object' && !Array.isArray(value) ? args : JSON.stringify(args);
  } catch (error) {
    if (error instanceof RangeError) return args; // too deep for this parser: the object as written
    return JSON.stringify(args);
  }
}

/** _messages_api.reply: a chat-completions assistant `message` as a Messages `message`, held for a
 * threaded request, as the JSON text or server-sent events the request asks for. `stop_reason` is
 * `tool_use` or `end_turn`: a scripted reply is never cut short. */
export function reply(body, message, number) {
  const calls = message.tool_calls ?? [];
  const text = message.content ? [{ type: 'text', text: message.content }] : [];
  const uses = calls.map((c) => ({ type: 'tool_use', id: `toolu_${String(c.id).replace(/^call_/, '')}`, name: c.function.name }));
  const inputs = calls.map((c) => inputJson(c.function.arguments));
  const stop = calls.length ? 'tool_use' : 'end_turn';
  const head = { id: `msg_${number}`, type: 'message', role: 'assistant', model: String(body.model ?? 'scripted'), stop_sequence: null };
  const usage = { input_tokens: 0, output_tokens: 0 };
  // The held copy keeps each input as the arguments' text, which `chatBody` shows as they were written.
  hold(body, { ...head, content: [...text, ...uses.map((u, i) => ({ ...u, input: calls[i].function.arguments }))] });
  if (!body.stream) {
    const content = [...text.map((b) => JSON.stringify(b)),
      ...uses.map((u, i) => `${JSON.stringify(u).slice(0, -1)},"input":${inputs[i]}}`)];
    const whole = JSON.stringify({ ...head, content: [], stop_reason: stop, usage }).replace('"content":[]', `"content":[${content.join(',')}]`);
    return new Response(whole, { status: 200, headers: { 'content-type': 'application/json' } });
  }
  return new Response(events(head, text, uses, calls.map((c) => c.function.arguments), stop).join(''),
                      { status: 200, headers: { 'content-type': 'text/event-stream' } });
}

/** The streaming events the real API sends: message_start, each block's start, deltas (text, or the
 * input's JSON text in `input_json_delta`s) and stop, message_delta with the stop reason, message_stop. */
function events(head, text, uses, args, stop) {
  const out = [];
  const event = (data) => out.push(`event: ${data.type}\ndata: ${JSON.stringify(data)}\n\n`);
  event({ type: 'message_start', message: { ...head, content: [], stop_reason: null, usage: { input_tokens: 0, output_tokens: 0 } } });
  let index = 0;
  for (const block of text) {
    event({ type: 'content_block_start', index, content_block: { type: 'text', text: '' } });
    for (let start = 0; start < block.text.length; start += 16) {
      event({ type: 'content_block_delta', index, delta: { type: 'text_delta', text: block.text.slice(start, start + 16) } });
    }
    event({ type: 'content_block_stop', index: index++ });
  }
  uses.forEach((use, i) => {
    event({ type: 'content_block_start', index, content_block: { ...use, input: {} } });
    event({ type: 'content_block_delta', index, delta: { type: 'input_json_delta', partial_json: args[i] } });
    event({ type: 'content_block_stop', index: index++ });
  });
  event({ type: 'message_delta', delta: { stop_reason: stop, stop_sequence: null }, usage: { output_tokens: 0 } });
  event({ type: 'message_stop' });
  return out;
}

// The error `type` the real API sends with each status (_messages_api._ERRORS).
const ERRORS = { 400: 'invalid_request_error', 401: 'authentication_error', 403: 'permission_error', 404: 'not_found_error',
                 413: 'request_too_large', 429: 'rate_limit_error', 500: 'api_error', 504: 'timeout_error',
                 529: 'overloaded_error' };
// The status the real API answers in place of one a scenario scripts (_messages_api._STATUSES): an
// unavailable service is 529 `overloaded_error`, never 503.
const STATUSES = { 503: 529 };

/** _messages_api.status: the status the real API answers where a scenario scripts `scripted`. */
export function status(scripted) {
  return STATUSES[scripted] ?? scripted;
}

/** _messages_api.error: an error body as the real API shapes it. */
export function errorBody(status, message) {
  const type = ERRORS[status] ?? (status >= 500 ? 'api_error' : 'invalid_request_error');
  return { type: 'error', error: { type, message } };
}

const api = scriptedApi({ expand, chatBody, reply, errorBody, status });

/** How many Messages requests the calling run has sent. */
export const modelCalls = api.modelCalls;

/** An Anthropic client (`Anthropic`, the constructor of the harness's own `@anthropic-ai/sdk`) with
 * its defaults, answered from the script for an agent with tools or without (`hasTools`, how a
 * tool-less request is logged: server.native_call_for), or, with a `baseURL` (an `http` scenario's
 * CallRequest.base_url, without its `/v1`, which the SDK adds), pointed at it. */
export function anthropicClient(Anthropic, baseURL, hasTools) {
  if (baseURL != null) return new Anthropic({ apiKey: 'placeholder-key', baseURL: baseURL.replace(/\/v1\/?$/, '') });
  // The scripted fetch reads the request timeout of the client it serves.
  const client = new Anthropic({ apiKey: 'scripted', baseURL: 'http://scripted.invalid', fetch: api.fetch(() => client, hasTools) });
  return client;
}
