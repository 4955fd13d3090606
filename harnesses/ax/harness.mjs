// The react-conformance harness for Ax (npm package `@ax-llm/ax`), its tool-calling loop.
//
//   pytest --impl ax        (or --impl cmd:"node harnesses/ax/harness.mjs")
//
// An AxGen with functions is Ax's ReAct: each model request may call functions (native tool
// calls) or write the output fields, which ends the loop. The model is Ax's own custom-service
// seam, AxMockAIService, whose chatResponse asks the suite for every request. Ax has no finish
// tool and no separate extraction call: a scripted `finish` step is answered with its thought and
// no function call, which is how a model ends an Ax loop.

import { readFileSync } from 'node:fs';
import { AxGen, AxMockAIService, AxSignature } from '@ax-llm/ax';
import { askModel, callTool, errorInfo, json, serve } from '../lib/protocol.mjs';

const VERSION = JSON.parse(readFileSync(new URL('node_modules/@ax-llm/ax/package.json', import.meta.url), 'utf-8')).version;
const FIELD_TYPES = { str: 'string', int: 'number', float: 'number', bool: 'boolean', list: 'json', dict: 'json' };
const JSON_TYPES = { str: 'string', int: 'integer', float: 'number', bool: 'boolean', list: 'array', dict: 'object' };

const NO_EXTRACTION = 'no finish step and no extraction call: the model ends the loop by writing the output fields itself (AxGen.forward)';
const NO_ADAPTERS = 'Ax has no adapters: every request uses native function calling';
const NO_TRAJECTORY = `forward() returns the output values only, with no trajectory, and ${NO_EXTRACTION}`;
const KNOWN_FAILURES = {
  'SIG-1': NO_EXTRACTION,
  'SIG-2': NO_EXTRACTION,
  'SIG-3': NO_EXTRACTION,
  'SIG-4': `${NO_EXTRACTION}; a reply that lacks one of two outputs makes Ax ask the model again`,
  'test_a_malformed_signature_string_fails_at_construction_with_a_clear_error[-> answer-input-input]':
    'Ax refuses \'-> answer\' but names the wrong culprit: \'Invalid field name "->"\', not the missing inputs',
  'LOOP-1': NO_EXTRACTION,
  'LOOP-2': NO_EXTRACTION,
  'LOOP-5': NO_EXTRACTION,
  'STEP-1': 'native function calling admits exactly the declared functions: there is no finish',
  'STEP-2': NO_EXTRACTION,
  'STEP-3': NO_EXTRACTION,
  'EXT-1': NO_EXTRACTION,
  'ADP-1': `${NO_ADAPTERS}, and ${NO_EXTRACTION}`,
  'ADP-2': `${NO_ADAPTERS}, and ${NO_EXTRACTION}`,
  'ADP-3': NO_ADAPTERS,
  'TRJ-1': NO_TRAJECTORY,
  'TRJ-2': NO_EXTRACTION,
  'TRJ-3': NO_TRAJECTORY,
};

let callIds = 0;

function message(entry) {
  const { role, content, ...rest } = entry;
  const text = typeof content === 'string' ? content : JSON.stringify(content ?? null);
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
      return { results: [{ index: 0, content: turn.thought, finishReason: 'stop' }] };
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
  async run({ agent, call }) {
    const state = agents.get(agent);
    const options = { stream: false, ...(call.max_steps != null ? { maxSteps: call.max_steps } : {}) };
    try {
      const result = await state.gen.forward(service, call.inputs, options);
      state.last = result;
      const outputs = Object.fromEntries(state.spec.signature.outputs.map((f) => [f.name, json(result[f.name])]));
      // forward() hands back the output values only: Ax reports no trajectory.
      return { outcome: { outputs } };
    } catch (error) {
      return { outcome: { error: errorInfo(error) } };
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
