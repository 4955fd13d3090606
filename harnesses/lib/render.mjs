// The translation every native tool-calling harness shares, as conformance/render.py does it for the
// Python bindings: the inputs as one user message, a final reply as outputs, a final turn as the
// reply's text, and a suite tool's parameters as the zod object its library declares.

import { json } from './protocol.mjs';

/** A value as the text a message shows (JSON for anything but a string). */
export function text(value) {
  return typeof value === 'string' ? value : JSON.stringify(json(value ?? null));
}

/** render.user_message: the one input's text, or `name: value` lines. */
export function userMessage(inputs) {
  const entries = Object.entries(inputs);
  if (entries.length === 1) return text(entries[0][1]);
  return entries.map(([name, value]) => `${name}: ${text(value)}`).join('\n');
}

/** FinalTurn.reply_text: the one output's text, or a JSON object of them. */
export function replyText(outputs) {
  const values = Object.values(outputs ?? {});
  return values.length === 1 ? text(values[0]) : JSON.stringify(outputs ?? {});
}

/** render.reply_outputs: the reply under the one output's name (a JSON object of them for several). */
export function replyOutputs(signature, reply) {
  const names = signature.outputs.length ? signature.outputs.map((f) => f.name) : ['answer'];
  if (names.length > 1 && typeof reply === 'string') {
    try {
      const values = JSON.parse(reply);
      if (values && typeof values === 'object' && !Array.isArray(values)) return values;
    } catch { /* not JSON: judged as it is */ }
  }
  return { [names[0]]: json(reply) };
}

const ZOD = {
  str: (z) => z.string(), int: (z) => z.number().int(), float: (z) => z.number(), bool: (z) => z.boolean(),
  list: (z) => z.array(z.any()), dict: (z) => z.record(z.string(), z.any()),
};

/** A ToolSpec's parameters as a strict zod object (the suite's schema has `additionalProperties:
 * false`), built with the harness's own `z`, the zod its library resolves. */
export function zodObject(z, spec) {
  return z.strictObject(Object.fromEntries(spec.parameters.map((p) => {
    const type = ZOD[p.type](z);
    return [p.name, p.description ? type.describe(p.description) : type];
  })));
}

const JSON_TYPES = { str: 'string', int: 'integer', float: 'number', bool: 'boolean', list: 'array', dict: 'object' };

/** ToolSpec.json_schema: a tool's parameters as a JSON schema object, every one required and no
 * other admitted, for a library that declares its tools in JSON schema. */
export function jsonSchema(spec) {
  return {
    type: 'object', additionalProperties: false, required: spec.parameters.map((p) => p.name),
    properties: Object.fromEntries(spec.parameters.map((p) => [p.name, {
      type: JSON_TYPES[p.type], ...(p.description ? { description: p.description } : {}) }])),
  };
}

/** A chat-completions message as the model sees it (an LMCall's message): its text, and an
 * assistant's tool calls. */
export function shownMessage(message) {
  const parts = [];
  if (typeof message.content === 'string') parts.push(message.content);
  else if (Array.isArray(message.content)) parts.push(message.content.map((p) => p.text ?? '').join(''));
  if (message.tool_calls?.length) parts.push(JSON.stringify(message.tool_calls));
  return { role: message.role, content: parts.join('\n') };
}

/** server.native_call_for: a chat-completions request as the LMCall to ask the suite's model. A
 * request that offers tools is a step, and so is every request of an agent with none (`hasTools`
 * false); one that offers none (no tools, or `tool_choice: "none"`) is the final call on the cap. */
export function nativeCall(body, hasTools) {
  const offers = Boolean(body.tools?.length) && body.tool_choice !== 'none';
  return { kind: offers || !hasTools ? 'step' : 'extract', adapter: 'native',
           messages: body.messages.map(shownMessage), tools: body.tools?.length ? body.tools : null };
}

/** render.openai_message: a turn as the chat-completions assistant message answering a request (a
 * step's calls as `tool_calls` with ids `call_<number>_<i>`, each with the arguments as the model
 * wrote them; a final answer or an extraction as a reply that calls no tool). */
export function openaiMessage(turn, number) {
  if (turn.kind !== 'step') return { role: 'assistant', content: replyText(turn.outputs) };
  const calls = [turn, ...(turn.parallel ?? [])];
  return {
    role: 'assistant', content: turn.thought || null,
    tool_calls: calls.map((c, i) => ({
      id: `call_${number}${i ? `_${i}` : ''}`, type: 'function',
      function: { name: c.tool_name, arguments: c.raw_tool_args ?? JSON.stringify(c.tool_args) },
    })),
  };
}
