// The OpenAI chat-completions endpoint as the harnesses that drive the OpenAI Node client (npm
// `openai`) script it: its documented `fetch` option answers every request from the script, so the
// client's own request building, reply parsing and retries run as in a user's run. Each request is
// shown to the suite as an LMCall, and the scripted turn comes back as the chat.completion JSON (or
// server-sent chunks, or the HTTP status) an endpoint would answer (render.openai_message).
// Used by harnesses/openai-runtools (the client's own runTools loop), harnesses/strands-ts,
// harnesses/llamaindex-ts (whose LLM class builds its own client: `scriptedFetch`) and
// harnesses/genkit (the compat-oai plugin, which builds its client itself from options:
// `openAIOptions`); harnesses/lib/responses-api.mjs shares its transport faults.

import { askModel, currentRun, faultResponse, notifyHang } from './protocol.mjs';
import { openaiMessage, shownMessage } from './render.mjs';

let replies = 0;

function completion(body, reply, number) {
  const finish = reply.tool_calls ? 'tool_calls' : 'stop';
  if (!body.stream) {
    return new Response(JSON.stringify({
      id: `chatcmpl-${number}`, object: 'chat.completion', created: 0, model: body.model,
      choices: [{ index: 0, message: reply, finish_reason: finish }],
      usage: { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 },
    }), { status: 200, headers: { 'content-type': 'application/json' } });
  }
  // Server-sent chat.completion.chunk events: the content in pieces, then the tool calls.
  const chunk = (delta, finishReason = null) => `data: ${JSON.stringify({
    id: `chatcmpl-${number}`, object: 'chat.completion.chunk', created: 0, model: body.model,
    choices: [{ index: 0, delta, finish_reason: finishReason }],
  })}\n\n`;
  const events = [chunk({ role: 'assistant', content: '' })];
  const content = reply.content ?? '';
  for (let start = 0; start < content.length; start += 16) events.push(chunk({ content: content.slice(start, start + 16) }));
  (reply.tool_calls ?? []).forEach((call, index) => events.push(chunk({ tool_calls: [{ index, ...call }] })));
  events.push(chunk({}, finish), 'data: [DONE]\n\n');
  return new Response(events.join(''), { status: 200, headers: { 'content-type': 'text/event-stream' } });
}

/** A scripted fault beneath `client` (an OpenAI or Anthropic client, whose request timeout a hang
 * passes): the transport error its fetch throws, or the HTTP status `status(turn)` answers. */
export function transportFault(turn, client, status = faultResponse) {
  if (turn.fault === 'connection') throw new TypeError('fetch failed: scripted connection reset');
  if (turn.fault === 'hang') {
    // The endpoint never answers: the client's own request timeout (OpenAI `timeout`, its
    // DEFAULT_TIMEOUT of 600000 ms unless set, as Anthropic's; no caller sets a per-request one) passes on
    // the model's clock. Then fetchWithTimeout's timer aborts the request's controller, and fetch
    // rejects as an aborted fetch does: an AbortError, which the client retries (client.ts,
    // makeRequest) and reports as APIConnectionTimeoutError.
    notifyHang(typeof client.timeout === 'number' ? client.timeout / 1000 : null);
    throw new DOMException('This operation was aborted', 'AbortError');
  }
  if (turn.fault === 'timeout') {
    const error = new Error('scripted timeout: the request timed out');
    error.name = 'AbortError';
    throw error;
  }
  return status(turn);
}

// How many model requests each run has sent (Event.model_calls).
const sent = new Map();

/** How many chat-completions requests the calling run has sent. */
export function modelCalls() {
  return sent.get(currentRun()) ?? 0;
}

// The OpenAI client's fetch: each chat-completions request, answered from the script.
async function scripted(init, client) {
  const body = JSON.parse(init.body);
  sent.set(currentRun(), (sent.get(currentRun()) ?? 0) + 1);
  const call = { kind: 'step', adapter: 'native', messages: body.messages.map(shownMessage),
                 tools: body.tools?.length ? body.tools : null };
  let turn;
  try {
    turn = await askModel(call);
  } catch (error) {
    // Not scripted: answer as the suite's endpoint does, 400 (not transient, so not retried).
    return new Response(JSON.stringify({ error: { message: error.message } }), { status: 400, headers: { 'content-type': 'application/json' } });
  }
  if (turn.kind === 'fault') return transportFault(turn, client);
  return completion(body, openaiMessage(turn, ++replies), replies);
}

/** A tool call's arguments as the model wrote them: JSON data, or the text when it is not JSON. */
export function toolArgs(text) {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/** The `fetch` of an OpenAI client that answers every request from the script; `client` is what
 * holds the client's request timeout in ms (`timeout`: the client itself, or the library object
 * that sets it), which a hang passes. */
export function scriptedFetch(client) {
  return (url, init) => scripted(init, client);
}

/** The options of an OpenAI client answered from the script, or, with a `baseURL` (an `http`
 * scenario's CallRequest.base_url), pointed at it: for a library that builds the client itself from
 * options. `timeout()` is the request timeout in ms of the client they build (the script's hang
 * passes it on the model's clock). */
export function openAIOptions(baseURL, timeout) {
  if (baseURL != null) return { apiKey: 'placeholder-key', baseURL };
  return { apiKey: 'scripted', baseURL: 'http://scripted.invalid/v1',
           fetch: scriptedFetch({ get timeout() { return timeout(); } }) };
}

/** An OpenAI client (`OpenAI`, the constructor of the harness's own `openai`) answered from the
 * script, or, with a `baseURL`, pointed at it. */
export function openAIClient(OpenAI, baseURL) {
  // The scripted fetch reads the request timeout of the client it serves.
  const client = new OpenAI(openAIOptions(baseURL, () => client.timeout));
  return client;
}
