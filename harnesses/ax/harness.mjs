// The react-conformance harness for Ax (npm package `@ax-llm/ax`), its tool-calling loop.
//
//   pytest --impl ax        (or --impl cmd:"node harnesses/ax/harness.mjs")
//
// An AxGen with functions is Ax's ReAct: each model request may call functions (native tool
// calls) or write the output fields, which ends the loop. The model is Ax's own custom-service
// seam, AxMockAIService, whose chatResponse asks the suite for every request. Ax has no finish
// tool and no separate extraction call: the model ends the loop by writing the output fields in
// its reply. So a scripted `finish` step and the extraction turn after it are rendered as that one
// reply: the harness asks the suite for the step turn, then for the extraction turn (showing the
// same request), and answers with the step's thought and the extraction's outputs. A `finish` step
// that carries output values itself is a model writing its outputs in the step that ends the loop:
// those values are the reply, and no extraction turn is asked for, since Ax makes no such call.

import { readFileSync } from 'node:fs';
import { AxGen, AxMockAIService, AxSignature } from '@ax-llm/ax';
import { askModel, callTool, currentRun, errorInfo, json, serve } from '../lib/protocol.mjs';

const VERSION = JSON.parse(readFileSync(new URL('node_modules/@ax-llm/ax/package.json', import.meta.url), 'utf-8')).version;
const FIELD_TYPES = { str: 'string', int: 'number', float: 'number', bool: 'boolean', list: 'json', dict: 'json' };
const JSON_TYPES = { str: 'string', int: 'integer', float: 'number', bool: 'boolean', list: 'array', dict: 'object' };

const NO_ADAPTERS = 'Ax has no adapters: every request uses native function calling';
const NO_TRAJECTORY = 'forward() returns the output values only: Ax reports no trajectory';
// Ax keeps a step's thought in its own field of the chat entry, apart from the message text (the
// AI service decides whether to send it back): later requests show the calls and results only.
const THOUGHT_APART = "later requests show each function call and its result, but Ax keeps the step's thought apart from the message text";
const KNOWN_FAILURES = {
  'test_a_malformed_signature_string_fails_at_construction_with_a_clear_error[-> answer-input-input]':
    'Ax refuses \'-> answer\' but names the wrong culprit: \'Invalid field name "->"\', not the missing inputs',
  'The chosen tool runs with exactly the chosen args and its result becomes an observation':
    `the tool runs with exactly the chosen args and its result reaches the next request, but ${NO_TRAJECTORY} to hold the observation`,
  'STEP-1': 'native function calling admits exactly the declared functions: there is no finish',
  'STEP-2': "native function calling: the arguments are a JSON object by each function's parameter schema, and no prompt names next_tool_args",
  'Each step prompt shows the trajectory so far': THOUGHT_APART,
  'Extraction receives the inputs and the whole trajectory':
    `no separate extraction call: the outputs are written in the final step reply, whose request is the step conversation (${THOUGHT_APART})`,
  'The outputs come from the extraction call, not from a step':
    'no separate extraction call: the output values the model writes in the reply that ends the loop are the prediction',
  'ADP-1': NO_ADAPTERS,
  'ADP-2': NO_ADAPTERS,
  'ADP-3': NO_ADAPTERS,
  'TRJ-1': NO_TRAJECTORY,
  'TRJ-2': `${NO_TRAJECTORY}, so there is none to hand out as a snapshot`,
  'TRJ-3': NO_TRAJECTORY,
};

let callIds = 0;
// The output field titles ('Answer') of each run's agent: a final reply writes 'Answer: ...' lines.
const titlesOf = new Map();

function finalReply(thought, outputs) {
  const lines = titlesOf.get(currentRun()).map(({ name, title }) => {
    const value = outputs[name];
    return `${title}: ${typeof value === 'string' ? value : JSON.stringify(value ?? null)}`;
  });
  return { index: 0, thought, content: lines.join('\n'), finishReason: 'stop' };
}

// A chat entry as the model sees it: a function call's result and an assistant's function calls
// are the text of their message (a provider sends them as such); the rest travels as extra keys.
function message(entry) {
  const { role, content, ...rest } = entry;
  const shown = content ?? (role === 'function' ? rest.result : rest.functionCalls) ?? null;
  const text = typeof shown === 'string' ? shown : JSON.stringify(shown);
  return Object.keys(rest).length ? { role, content: text, ...json(rest) } : { role, content: text };
}

const service = new AxMockAIService({
  features: { functions: true, streaming: false },
  async chatResponse(request) {
    const call = { kind: 'step', adapter: 'native', messages: request.chatPrompt.map(message),
                   tools: request.functions?.length ? json(request.functions) : null };
    const turn = await askModel(call);
    if (turn.kind === 'fault') throw new Error(`scripted transport failure: ${turn.fault}`);
    if (turn.tool_name === 'finish') {
      const written = turn.tool_args ?? {};
      if (Object.keys(written).length) return { results: [finalReply(turn.thought, written)] };
      const extract = await askModel({ ...call, kind: 'extract' });
      if (extract.kind === 'fault') throw new Error(`scripted transport failure: ${extract.fault}`);
      return { results: [finalReply(turn.thought, extract.outputs)] };
    }
    const params = turn.raw_tool_args ?? turn.tool_args;
    return { results: [{ index: 0, thought: turn.thought, finishReason: 'function_call',
      functionCalls: [{ id: `call-${++callIds}`, type: 'function', function: { name: turn.tool_name, params } }] }] };
  },
});

function field(f) {
  return { name: f.name, description: f.description || undefined, type: { name: FIELD_TYPES[f.type] } };
}

function signature(spec) {
  if (spec.form === 'string') return spec.text ?? `${spec.inputs.map((f) => f.name).join(', ')} -> ${spec.outputs.map((f) => f.name).join(', ')}`;
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
    func: (args) => callTool(spec.name, args),
  };
}

const agents = new Map();

serve({
  hello: () => ({ name: 'ax', version: VERSION, capabilities: [], known_failures: KNOWN_FAILURES }),
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
    const options = { stream: false, ...(call.max_steps != null ? { maxSteps: call.max_steps } : {}) };
    try {
      const result = await state.gen.forward(service, call.inputs, options);
      state.last = result;
      const outputs = Object.fromEntries(state.spec.signature.outputs.map((f) => [f.name, json(result[f.name])]));
      // forward() hands back the output values only: Ax reports no trajectory.
      return { outcome: { outputs } };
    } catch (error) {
      return { outcome: { error: errorInfo(error) } };
    } finally {
      titlesOf.delete(run);
    }
  },
  // Native function calling: the model may name exactly the declared functions (there is no finish).
  step_tool_names: ({ agent }) => ({ names: agents.get(agent).spec.tools.map((t) => t.name) }),
  mutate_last_result({ agent, marker }) {
    const last = agents.get(agent).last;
    if (last != null) last[marker] = marker;
    return {};
  },
});
