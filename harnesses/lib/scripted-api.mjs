// A provider API (the Anthropic Messages API, the OpenAI Responses API) answered from the script
// beneath its client's documented `fetch` option, as conformance/server.py answers it on the
// loopback endpoint: a request (a continuation expanded) is shown to the suite as the LMCall of its
// chat-completions form, and the scripted turn comes back in the API's own shape, a fault as the
// status and error body the real API sends. Each API module gives its translation.

import { askModel, currentRun, faultResponse } from './protocol.mjs';
import { nativeCall, openaiMessage } from './render.mjs';
import { transportFault } from './chat-completions.mjs';

/** A request the endpoint answers with an error, as the real API would: its status and body. */
export class Refused extends Error {
  constructor(status, body) {
    super(body.error.message);
    this.status = status;
    this.body = body;
  }
}

function refusal(status, body) {
  return new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json' } });
}

/** The scripted endpoint of an API translated by `expand` (the whole request a continuation stands
 * for; throws Refused), `chatBody`, `reply(body, message, number)` (a Response), `errorBody(status,
 * message)` and `status` (the status the real API answers where a scenario scripts one):
 * `fetch(clientOf, hasTools)`, the fetch of the client `clientOf()` returns once it is built (whose
 * request timeout a hang passes), for an agent with tools or without (how a tool-less request is logged: server.native_call_for); and
 * `modelCalls()`, how many requests the calling run has sent (Event.model_calls). */
export function scriptedApi({ expand, chatBody, reply, errorBody, status = (scripted) => scripted }) {
  let replies = 0;
  const sent = new Map();
  async function answer(init, client, hasTools) {
    sent.set(currentRun(), (sent.get(currentRun()) ?? 0) + 1);
    let body;
    try {
      body = expand(JSON.parse(init.body));
    } catch (error) {
      if (error instanceof Refused) return refusal(error.status, error.body);
      throw error;
    }
    let turn;
    try {
      turn = await askModel(nativeCall(chatBody(body), hasTools));
    } catch (error) {
      // Not scripted: answer as the suite's endpoint does, 400 (not transient, so not retried).
      return refusal(400, errorBody(400, error.message));
    }
    if (turn.kind === 'fault') return transportFault(turn, client, (t) => faultResponse(t, errorBody, status));
    replies += 1;
    return reply(body, openaiMessage(turn, replies), replies);
  }
  return {
    fetch: (clientOf, hasTools) => (url, init) => answer(init, clientOf(), hasTools),
    modelCalls: () => sent.get(currentRun()) ?? 0,
  };
}
