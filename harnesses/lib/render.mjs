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
