// The OpenAI Responses API (`POST /v1/responses`) as the harnesses that drive the OpenAI Node client
// (npm `openai`) through its `responses` resource script it, as conformance/_responses_api.py does
// for the loopback endpoint: the client's documented `fetch` option answers every request from the
// script, so the client's own request building, reply parsing, streaming and retries run as in a
// user's run. A request is shown to the suite as the LMCall of its chat-completions form
// (`chatBody`, a `previous_response_id` continuation expanded), and the scripted turn comes back as a
// `response` object (or its server-sent events), a fault as the status and error body the real API
// sends. Used by harnesses/openai-agents (the Agents SDK's default model, OpenAIResponsesModel).

import { Refused, scriptedApi } from './scripted-api.mjs';

function refused(param, code, message) {
  return new Refused(400, { error: { message, type: 'invalid_request_error', param, code } });
}

/** `input` as a list of items: a string is one user message. */
function items(value) {
  if (typeof value === 'string') return [{ role: 'user', content: value }];
  return Array.isArray(value) ? [...value] : [];
}

// The responses the endpoint stores (_responses_api.Stored), as the real API does unless a request
// says `store: false`, by id: the whole input a response answered and its output.
const stored = new Map();

/** _responses_api.Stored.expand: the whole request a continuation (`previous_response_id`) stands
 * for: the stored conversation's items, then its own. An unknown id is refused as the real API
 * refuses it (400, `previous_response_not_found`); a `conversation` too, as this endpoint holds none. */
export function expand(body) {
  if (body.conversation) {
    throw refused('conversation', null, 'this endpoint holds no conversations: send '
                  + 'previous_response_id, or the whole conversation in `input`');
  }
  const previous = body.previous_response_id;
  if (!previous) return body;
  const held = stored.get(String(previous));
  if (held === undefined) {
    throw refused('previous_response_id', 'previous_response_not_found',
                  `Previous response with id '${String(previous)}' not found.`);
  }
  const { previous_response_id: _, ...whole } = body;
  return { ...whole, input: [...held, ...items(body.input)] };
}

/** _responses_api.Stored.hold: store `response` to `body` (as `expand` returned it), unless the
 * request said `store: false`. */
function hold(body, response) {
  if (body.store === false || typeof response.id !== 'string') return;
  stored.set(response.id, [...items(body.input), ...(response.output ?? [])]);
}

function text(content) {
  if (Array.isArray(content)) {
    return content.filter((p) => p && typeof p === 'object').map((p) => String(p.text ?? '')).join('');
  }
  return content == null ? '' : String(content);
}

/** _responses_api.chat_body: the request as a chat-completions body: `instructions` and the `input`
 * items as messages (`function_call` items as an assistant's tool calls, `function_call_output` as
 * tool messages), the function tools and `tool_choice` in chat form. */
export function chatBody(body) {
  if (body.previous_response_id) {
    throw new Error('previous_response_id names a stored response: expand the request first (expand)');
  }
  const messages = [];
  if (body.instructions) messages.push({ role: 'system', content: text(body.instructions) });
  for (const item of items(body.input)) {
    const kind = item.type ?? 'message';
    if (kind === 'message') {
      messages.push({ role: item.role === 'developer' ? 'system' : String(item.role), content: text(item.content) });
    } else if (kind === 'function_call') {
      const call = { id: item.call_id ?? null, type: 'function',
                     function: { name: item.name ?? null, arguments: item.arguments ?? null } };
      // Else the call belongs to the same reply as the text before it.
      if (!messages.length || messages.at(-1).role !== 'assistant') messages.push({ role: 'assistant', content: '' });
      (messages.at(-1).tool_calls ??= []).push(call);
    } else if (kind === 'function_call_output') {
      messages.push({ role: 'tool', tool_call_id: item.call_id ?? null, content: text(item.output) });
    }
    // Other items (reasoning, ...) carry nothing the script reads.
  }
  const chat = { model: body.model ?? null, messages, stream: Boolean(body.stream) };
  const tools = (body.tools ?? []).filter((t) => t.type === 'function').map((t) => ({
    type: 'function',
    function: Object.fromEntries(['name', 'description', 'parameters'].filter((k) => k in t).map((k) => [k, t[k]])),
  }));
  if (tools.length) chat.tools = tools;
  const choice = body.tool_choice;
  if (choice && typeof choice === 'object' && choice.type === 'function') {
    chat.tool_choice = { type: 'function', function: { name: choice.name ?? null } };
  } else if (choice != null) {
    chat.tool_choice = choice;
  }
  return chat;
}

function output(message, number) {
  const out = [];
  if (message.content) {
    out.push({ type: 'message', id: `msg_${number}`, status: 'completed', role: 'assistant',
               content: [{ type: 'output_text', text: message.content, annotations: [] }] });
  }
  (message.tool_calls ?? []).forEach((call, index) => out.push({
    type: 'function_call', id: `fc_${number}_${index}`, call_id: call.id, name: call.function.name,
    arguments: call.function.arguments, status: 'completed',
  }));
  return out;
}

function response(body, number, out, status) {
  return {
    id: `resp_${number}`, object: 'response', created_at: 0, status, model: String(body.model ?? 'scripted'), output: out,
    parallel_tool_calls: 'parallel_tool_calls' in body ? body.parallel_tool_calls : true,
    tool_choice: 'tool_choice' in body ? body.tool_choice : 'auto', tools: body.tools || [],
    instructions: body.instructions ?? null, error: null, incomplete_details: null, temperature: null, top_p: null,
    usage: { input_tokens: 0, input_tokens_details: { cached_tokens: 0 }, output_tokens: 0,
             output_tokens_details: { reasoning_tokens: 0 }, total_tokens: 0 },
  };
}

/** The streaming events the real API sends for `out` (_responses_api._events): each item added, its
 * text or arguments in deltas, done; then the completed response. */
function events(body, number, out, whole) {
  const sent = [];
  const started = response(body, number, [], 'in_progress');
  sent.push({ type: 'response.created', response: started }, { type: 'response.in_progress', response: started });
  out.forEach((item, index) => {
    const at = { item_id: item.id, output_index: index };
    if (item.type === 'message') {
      const said = item.content[0].text;
      sent.push({ type: 'response.output_item.added', output_index: index, item: { ...item, status: 'in_progress', content: [] } });
      sent.push({ type: 'response.content_part.added', ...at, content_index: 0, part: { type: 'output_text', text: '', annotations: [] } });
      for (let start = 0; start < said.length; start += 16) {
        sent.push({ type: 'response.output_text.delta', ...at, content_index: 0, delta: said.slice(start, start + 16), logprobs: [] });
      }
      sent.push({ type: 'response.output_text.done', ...at, content_index: 0, text: said, logprobs: [] });
      sent.push({ type: 'response.content_part.done', ...at, content_index: 0, part: item.content[0] });
    } else {
      sent.push({ type: 'response.output_item.added', output_index: index, item: { ...item, status: 'in_progress', arguments: '' } });
      sent.push({ type: 'response.function_call_arguments.delta', ...at, delta: item.arguments });
      sent.push({ type: 'response.function_call_arguments.done', ...at, name: item.name, arguments: item.arguments });
    }
    sent.push({ type: 'response.output_item.done', output_index: index, item });
  });
  sent.push({ type: 'response.completed', response: whole });
  return sent;
}

/** _responses_api.reply: a chat-completions assistant `message` as a `response` object, stored
 * unless the request says `store: false`, as the JSON text or server-sent events the request asks for. */
export function reply(body, message, number) {
  const out = output(message, number);
  const whole = response(body, number, out, 'completed');
  hold(body, whole);
  if (!body.stream) {
    return new Response(JSON.stringify(whole), { status: 200, headers: { 'content-type': 'application/json' } });
  }
  const data = events(body, number, out, whole)
    .map((e, i) => `event: ${e.type}\ndata: ${JSON.stringify({ ...e, sequence_number: i })}\n\n`).join('');
  return new Response(data, { status: 200, headers: { 'content-type': 'text/event-stream' } });
}

// The error `type` and `code` the real API sends with each status (_responses_api._ERRORS).
const ERRORS = {
  400: ['invalid_request_error', null], 401: ['invalid_request_error', 'invalid_api_key'],
  404: ['invalid_request_error', null], 413: ['invalid_request_error', null],
  429: ['requests', 'rate_limit_exceeded'], 500: ['server_error', null], 503: ['server_error', null],
  504: ['server_error', null],
};

/** _responses_api.error: an error body as the real API shapes it. */
export function errorBody(status, message) {
  const [type, code] = ERRORS[status] ?? [status >= 500 ? 'server_error' : 'invalid_request_error', null];
  return { error: { message, type, param: null, code } };
}

const api = scriptedApi({ expand, chatBody, reply, errorBody });

/** How many Responses requests the calling run has sent. */
export const modelCalls = api.modelCalls;

/** An OpenAI client (`OpenAI`, the constructor of the harness's own `openai`) with its defaults,
 * answering its Responses requests from the script for an agent with tools or without (`hasTools`,
 * how a tool-less request is logged: server.native_call_for), or, with a `baseURL` (an `http`
 * scenario's CallRequest.base_url, whose `/responses` the suite's endpoint serves), pointed at it. */
export function responsesClient(OpenAI, baseURL, hasTools) {
  if (baseURL != null) return new OpenAI({ apiKey: 'placeholder-key', baseURL });
  // The scripted fetch reads the request timeout of the client it serves.
  const client = new OpenAI({ apiKey: 'scripted', baseURL: 'http://scripted.invalid/v1',
                              fetch: api.fetch(() => client, hasTools) });
  return client;
}
