// A tiny native tool-calling loop in JavaScript, written as a third-party library would be
// (tests/test_quickstart.py installs it as the package `mylib` of a fresh project): its model is any
// async function from a chat-completions request to the assistant message; it checks arguments
// against each tool's JSON schema, and on its cap makes one last call with its tools declared and
// their use forbidden (`tool_choice: "none"`) to write the answer.

const TYPES = {
  string: (v) => typeof v === 'string', integer: (v) => Number.isInteger(v), number: (v) => typeof v === 'number',
  boolean: (v) => typeof v === 'boolean', array: (v) => Array.isArray(v),
  object: (v) => v !== null && typeof v === 'object' && !Array.isArray(v),
};

function checked(schema, args) {
  if (!TYPES.object(args)) throw new TypeError(`arguments must be an object, got ${JSON.stringify(args)}`);
  for (const name of Object.keys(args)) {
    if (!(name in schema.properties)) throw new TypeError(`unexpected argument '${name}'`);
  }
  for (const [name, property] of Object.entries(schema.properties)) {
    if (!(name in args) || !TYPES[property.type](args[name])) {
      throw new TypeError(`argument '${name}' must be ${property.type}, got ${JSON.stringify(args[name])}`);
    }
  }
  return args;
}

export class Agent {
  /** `tools`: `{ name, description, parameters (a JSON schema), execute(args) }`; `model(request)`
   *  answers a chat-completions request with the assistant message. */
  constructor({ instructions, tools, maxSteps = 10, model }) {
    if (maxSteps < 1) throw new RangeError(`maxSteps must be at least 1, got ${maxSteps}`);
    this.instructions = instructions;
    this.maxSteps = maxSteps;
    this.tools = new Map(tools.map((t) => [t.name, t]));
    this.model = model;
  }

  async #ask(messages, extra = {}) {
    const tools = [...this.tools.values()].map((t) => ({
      type: 'function', function: { name: t.name, description: t.description, parameters: t.parameters } }));
    return this.model({ model: 'm', messages: structuredClone(messages), ...(tools.length ? { tools } : {}), ...extra });
  }

  async #call(name, raw) {
    const tool = this.tools.get(name);
    if (tool === undefined) throw new Error(`no tool named '${name}'`);
    return tool.execute(checked(tool.parameters, JSON.parse(raw)));
  }

  /** Run the loop on `question`; `maxSteps` caps this call only. */
  async run(question, { maxSteps } = {}) {
    const cap = maxSteps ?? this.maxSteps;
    if (cap < 1) throw new RangeError(`maxSteps must be at least 1, got ${cap}`);
    const messages = [{ role: 'system', content: this.instructions }, { role: 'user', content: question }];
    const steps = [];
    for (let rounds = 1; rounds <= cap; rounds += 1) {
      const message = await this.#ask(messages);
      const calls = message.tool_calls ?? [];
      messages.push({ role: 'assistant', content: message.content ?? null, ...(calls.length ? { tool_calls: calls } : {}) });
      if (calls.length === 0) return { answer: message.content ?? '', steps, capped: false, rounds };
      for (const call of calls) {
        const { name, arguments: raw } = call.function;
        let observation;
        try {
          observation = await this.#call(name, raw);
        } catch (error) { // the model sees the error and may try again
          observation = `error: ${error.message}`;
        }
        let args = raw;
        try { args = JSON.parse(raw); } catch { /* recorded as the text the model wrote */ }
        steps.push({ tool: name, args, observation });
        messages.push({ role: 'tool', tool_call_id: call.id,
                        content: typeof observation === 'string' ? observation : JSON.stringify(observation) });
      }
    }
    const message = await this.#ask(messages, { tool_choice: 'none' });
    return { answer: message.content ?? '', steps, capped: true, rounds: cap };
  }
}
