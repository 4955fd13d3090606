// The AI SDK's language-model interface (LanguageModelV4, npm `@ai-sdk/provider`) as the harnesses
// that drive a loop over it see it: the Vercel AI SDK's own (harnesses/ai) and Mastra's Agent
// (harnesses/mastra), both with `MockLanguageModelV4` from `ai/test` as the model. A request's
// prompt as the LMCall the suite reads, a scripted turn as the model's content (generate) or
// stream parts, and the trajectory in the response messages the loop hands back.

import { faultResponse, json, notifyHang, wire } from './protocol.mjs';
import { replyText, text } from './render.mjs';

function outputText(output) {
  if (output == null) return '';
  switch (output.type) {
    case 'text': case 'error-text': return output.value;
    case 'json': case 'error-json': return JSON.stringify(output.value);
    case 'execution-denied': return `execution denied${output.reason ? `: ${output.reason}` : ''}`;
    case 'content': return output.value.map((p) => p.text ?? '').join('');
    default: return JSON.stringify(output);
  }
}

function partText(part) {
  switch (part.type) {
    case 'text': case 'reasoning': return part.text;
    case 'tool-call': return `${part.toolName}(${text(part.input)})`;
    case 'tool-result': return `${part.toolName}: ${outputText(part.output)}`;
    case 'tool-approval-response':
      return `approval ${part.approvalId}: ${part.approved ? 'approved' : 'denied'}${part.reason ? ` (${part.reason})` : ''}`;
    default: return JSON.stringify(part);
  }
}

// A request as the model is shown it: each prompt message as text, the tools as declarations.
export function lmCall(options) {
  const messages = options.prompt.map((m) => ({
    role: m.role,
    content: typeof m.content === 'string' ? m.content : m.content.map(partText).join('\n'),
  }));
  const tools = (options.tools ?? []).map((t) => ({
    type: 'function', function: { name: t.name, description: t.description ?? '', parameters: t.inputSchema },
  }));
  return { kind: 'step', adapter: 'native', messages, tools: tools.length ? tools : null };
}

let callIds = 0;

// The turn as the model's response content and finish reason.
function content(turn) {
  if (turn.kind !== 'step') return { parts: [{ type: 'text', text: replyText(turn.outputs) }], finish: 'stop' };
  const number = ++callIds;
  const calls = [turn, ...(turn.parallel ?? [])].map((c, i) => ({
    type: 'tool-call', toolCallId: `call_${number}${i ? `_${i}` : ''}`, toolName: c.tool_name,
    input: c.raw_tool_args ?? JSON.stringify(c.tool_args),
  }));
  return { parts: [...(turn.thought ? [{ type: 'text', text: turn.thought }] : []), ...calls], finish: 'tool-calls' };
}

const USAGE = {
  inputTokens: { total: 0, noCache: 0, cacheRead: 0, cacheWrite: 0 },
  outputTokens: { total: 0, text: 0, reasoning: 0 },
};

function finishReason(finish) {
  return { unified: finish, raw: finish === 'stop' ? 'stop' : 'tool_calls' };
}

export function parsed(value) {
  if (typeof value !== 'string') return json(value);
  try {
    return JSON.parse(value);
  } catch {
    return value;
  }
}

export function observation(output) {
  if (output == null) return null;
  if (output.type === 'json' || output.type === 'error-json') return json(output.value);
  return outputText(output);
}

// The trajectory in the run's messages: one step per tool call of each assistant message, its
// thought the message's text, its observation the tool result of the same call id. With `bound`
// (contract 3), each step also carries that call id and the result's own error flag (an
// `error-text` or `error-json` output).
export function trajectory(messages, { bound = false } = {}) {
  const results = new Map();
  for (const m of messages) {
    if (m.role !== 'tool') continue;
    for (const part of m.content) if (part.type === 'tool-result') results.set(part.toolCallId, part.output);
  }
  const steps = [];
  for (const m of messages) {
    if (m.role !== 'assistant' || typeof m.content === 'string') continue;
    const thought = m.content.filter((p) => p.type === 'text').map((p) => p.text).join('') || null;
    for (const part of m.content) {
      if (part.type !== 'tool-call') continue;
      const output = results.get(part.toolCallId);
      const step = { thought, tool_name: part.toolName, tool_args: wire(parsed(part.input)), observation: observation(output) };
      if (bound) {
        step.is_error = output == null ? null : output.type === 'error-text' || output.type === 'error-json';
        step.call_id = part.toolCallId;
      }
      steps.push(step);
    }
  }
  return steps;
}

/** A turn as a doGenerate result. */
export function generated(turn) {
  const { parts, finish } = content(turn);
  return { content: parts, finishReason: finishReason(finish), usage: USAGE, warnings: [] };
}

/** A turn as the stream parts of a doStream result: each text part as start, delta and end. */
export function streamChunks(turn) {
  const { parts, finish } = content(turn);
  const chunks = [{ type: 'stream-start', warnings: [] }];
  parts.forEach((part, i) => {
    if (part.type !== 'text') chunks.push(part);
    else chunks.push({ type: 'text-start', id: `t${i}` }, { type: 'text-delta', id: `t${i}`, delta: part.text }, { type: 'text-end', id: `t${i}` });
  });
  chunks.push({ type: 'finish', finishReason: finishReason(finish), usage: USAGE });
  return chunks;
}

/** A scripted transport fault as the `fetch` of the SDK's own OpenAI-compatible client
 * (`@ai-sdk/openai-compatible`): its APICallError is what the loop's retry layer judges. */
export function faultFetch(turn) {
  return async () => {
    if (turn.fault === 'hang') {
      // The endpoint never answers: the request's own timeout would pass on the model's clock,
      // but neither loop gives the request one by default (no abort signal unless the caller
      // passes one or sets a timeout option): the notice says so. The request then fails as a
      // timeout below, only so that the run ends; the suite judges the missing timeout.
      notifyHang(null);
    }
    if (turn.fault === 'connection' || turn.fault === 'timeout' || turn.fault === 'hang') {
      // What Node's fetch (undici) throws: a TypeError whose cause is the socket's error.
      const cause = turn.fault !== 'connection'
        ? Object.assign(new Error('Headers Timeout Error (scripted timeout)'), { name: 'HeadersTimeoutError', code: 'UND_ERR_HEADERS_TIMEOUT' })
        : Object.assign(new Error('read ECONNRESET (scripted connection reset)'), { code: 'ECONNRESET' });
      throw new TypeError('fetch failed', { cause });
    }
    return faultResponse(turn);
  };
}
