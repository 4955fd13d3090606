// The react-conformance harness for dspy.ts (npm package `dspy.ts`), its ReAct module.
//
//   pytest --impl dspy-ts        (or --impl cmd:"node harnesses/dspy-ts/harness.mjs")
//
// dspy.ts's ReAct is text-based: each step is two model requests, a thought ("Final Answer: ..."
// ends the loop) and then an action ("ReActTool: <name>" / "Input: <text>"). The harness asks the
// suite once per step, on the thought request, and answers the action request of the same step
// from that turn. dspy.ts has no finish tool and no extraction call: a thought with 'Final
// Answer:' ends the loop and carries the outputs. So a scripted `finish` step and the extraction
// turn after it are rendered as that one thought: the harness asks the suite for the step turn,
// then for the extraction turn (showing the same prompt), and answers with the step's thought
// followed by 'Final Answer:' and one 'name: value' line per output. A `finish` step that carries
// output values itself is a model writing its answer in the thought that ends the loop: those
// values are the answer, and no extraction turn is asked for, since dspy.ts makes no such call.
//
// The step cap: ReAct's maxIterations counts loop iterations, each one thought request (a step)
// plus its action request, so spec.max_steps maps to it one to one. On the cap run() returns
// normally (modules/react.js, extractFallbackAnswer): max-steps-return. The steps it returns carry
// their iteration number (stepNumber), which is the iteration count reported; the run ended with
// a final answer when they hold the thought that matched ReAct's own 'answer:' test, and by the
// cap when they reach maxIterations without it (the loop ends on nothing else).

import { createRequire } from 'node:module';
import { askModel, callTool, currentRun, errorInfo, installedVersion, installedVersions, json, serve } from '../lib/protocol.mjs';

const require = createRequire(import.meta.url);
const { ReAct } = require('dspy.ts/dist/src/modules/react.js');
const { configureLM } = require('dspy.ts/dist/src/lm/base.js');
const VERSION = installedVersion(import.meta.url, 'dspy.ts');

const TYPES = { str: 'string', int: 'number', float: 'number', bool: 'boolean', list: 'object', dict: 'object' };
const THOUGHT = 'You are a ReAct agent';
const ACTION = 'Based on your thought, what action should you take?';

const NO_INSTRUCTIONS = 'dspy.ts signatures are field lists with no instructions: no prompt shows them';
const TEXT_ARGS = "a dspy.ts action's input is one text: the trajectory records the args as that string, not as an object";
const NO_SCHEMA = "the prompt lists each tool as '- <name>: <description>' only: no argument names or types (modules/react.js)";
// The contract this harness is written against: catalogue 3's capabilities, and each step's
// is_error and call_id (both null: a text protocol with no call ids, and an observation that is
// only the text executeTool returns, 'Error: ...' included).
const PROTOCOL = 3;
const CAPABILITIES = ['signature', 'max-steps-return', 'async'];
// How the harness fills the contract's derivable fields (conformance.binding.PARITY).
const PARITY = {
  stop_reason: "derived: from the output's steps (modules/react.js, ReAct.run): a thought that passed ReAct's 'answer:' test is the answer; steps numbered up to maxIterations without one the cap stop, as run() loops only until either",
  iterations: "derived: the highest stepNumber of the output's steps, which ReAct numbers by iteration (modules/react.js, ReAct.run)",
  max_iterations: 'none: on maxIterations run() raises nothing; it returns the fallback answer (modules/react.js, extractFallbackAnswer)',
  partial_run: 'none: on maxIterations run() raises nothing; its output holds the steps',
  concurrency: 'shared',
};
const NOT_CLAIMED = {
  adapters: 'no pluggable format-and-parse layer: ReAct builds its thought and action prompts and parses the replies itself (modules/react.js, buildThoughtPrompt and extractAction)',
  'cap-summary': 'on the step cap extractFallbackAnswer (modules/react.js) copies the last observation or thought into the first output: no message of what was tried',
  'per-call-cap': 'ReAct.run(input) (modules/react.js) takes only the input: maxIterations is fixed when the module is built',
  'repeated-error-stop': 'ReAct keeps no count of tool errors: a tool that fails every time is called again until maxIterations (modules/react.js, run)',
  'approval-edit': 'ReAct.executeTool (modules/react.js) runs the chosen tool at once: no approval to edit',
  'durable-approvals': 'ReAct.executeTool (modules/react.js) runs the chosen tool at once: no approval to persist',
  'max-steps-error': 'on the step cap ReAct.run returns the fallback answer (modules/react.js, extractFallbackAnswer): it never raises',
  'max-steps-extract': 'on the step cap ReAct.run makes no extraction call: extractFallbackAnswer (modules/react.js) copies the last observation or thought into the first output',
  'ask-user': 'ReAct has no built-in tool through which the agent asks the person a question',
  'tool-approval': 'ReAct.executeTool (modules/react.js) runs the chosen tool at once: no approval step, no resume',
  streaming: 'ReAct.run returns one promise of the whole output: no event stream',
  'parallel-tool-calls': "each iteration's action request names one tool ('ReActTool: <name>', modules/react.js, extractAction)",
  'lm-retry': 'OpenAILM.callOpenAI (lm/providers/openai.js) throws on the first non-2xx status or network error: no retry',
  http: "OpenAILM takes an endpoint, but its init() spends a model call on a test request, and the suite's endpoint answers in DSPy's chat or JSON formats, not ReAct's free-text thought and action",
};
const NO_ARGS_CHECK = "the action's 'Input:' text goes to tool.execute as it is (modules/react.js, extractAction and executeTool): nothing checks that it is a JSON object";
const NO_SCHEMA_CHECK = 'executeTool (modules/react.js) hands the input text to the tool: the parameters a tool declares are never checked';
const KNOWN_FAILURES = {
  'SIG-1': "dspy.ts has no arrow-string signature: ReActConfig's signature is a Signature, an object of field lists (modules/react.d.ts, core/signature.d.ts), and nothing in dspy.ts parses a string; handed one, ReAct's constructor (modules/react.js, extendSignature) calls signature.outputs.some() and throws TypeError \"Cannot read properties of undefined (reading 'some')\", which names neither the signature nor the form it expects",
  'SIG-2': `dspy.ts has no signature classes, and ${NO_INSTRUCTIONS}`,
  'SIG-3': NO_INSTRUCTIONS,
  'The prediction holds each output as the type its signature declares':
    "the answer is read from the rest of the 'Final Answer:' line only (/answer:\\s*(.+)/), so a second output is never found and run() throws 'Missing required output field'",
  'A signature value whose input and output share a name fails at construction':
    "a dspy.ts signature is a plain object of field lists that nothing checks (core/signature.js's isValidFieldDefinition is never called; Module and ReAct read the lists as they are): an input and an output of one name build an agent",
  'An unknown tool name is never run, and the loop goes on':
    'an unknown tool is skipped silently: the next prompt shows the thought under Previous steps and no error (modules/react.js)',
  'The agent is told that the tool it chose does not exist':
    'an unknown tool is skipped silently: the next prompt shows the thought under Previous steps and no error (modules/react.js)',
  "The model is offered exactly the agent's tools": "the action is free text ('ReActTool: <name>'): no step output constrains the tool name",
  'STEP-2': "the action prompt asks for 'Input: <input_for_tool>', not a JSON object",
  "Every step prompt shows the inputs and each tool's name, description and arguments": NO_SCHEMA,
  "Every step prompt shows a tool's argument schema, not only its description": NO_SCHEMA,
  'A typed output that does not parse is asked for again or refused, naming the field':
    "a number output is read with parseFloat(value) || 0 (modules/react.js, parseAnswer): 'four' becomes 0, a number the model never wrote",
  'The outputs come from the extraction call, not from a step':
    "no separate extraction call: the answer the model writes in the thought that ends the loop ('Final Answer:') is the prediction",
  'TRJ-1': TEXT_ARGS,
  'Fifty overlapping async runs share no state': `dspy.ts has no adapters (every request is a free-text prompt), and ${TEXT_ARGS}`,
  'After repeated tool errors the steps appear in the order they ran, one observation each': TEXT_ARGS,
  'The last step call of a long run shows the whole trajectory':
    "buildThoughtPrompt (modules/react.js) shows only the last six entries of the steps (steps.slice(-6), three steps of thought, action and observation): the earlier ones never reach the model",
  'ARGS-2': NO_ARGS_CHECK,
  'ARGS-3': NO_ARGS_CHECK,
  "Tool args that break the tool's schema never reach it with a wrong or missing value": NO_SCHEMA_CHECK,
  'ARGS-6': "executeTool (modules/react.js) hands the input text to the tool: a key the tool does not declare reaches it, nothing refuses it",
  'After the step cap the steps appear in the order they ran, one observation each':
    'after the step cap extractFallbackAnswer reverses the returned steps in place (steps.reverse())',
};

// The turn each run's last thought request got: its action request is answered from it.
const stepOf = new Map();

// One driver for the whole process (dspy.ts has one global LM); the run travels with the call.
configureLM({
  async generate(prompt) {
    const run = currentRun();
    if (prompt.startsWith(ACTION)) {
      const turn = stepOf.get(run);
      if (turn === undefined) throw new Error('an action request before any thought request');
      // A step reply without its args field is an action without its 'Input:' line.
      if (turn.without_tool_args) return `ReActTool: ${turn.tool_name}`;
      return `ReActTool: ${turn.tool_name}\nInput: ${argsText(turn)}`;
    }
    const call = { kind: prompt.startsWith(THOUGHT) ? 'step' : 'other', adapter: 'other',
                   messages: [{ role: 'user', content: prompt }] };
    const turn = await askModel(call);
    if (turn.kind === 'fault') throw new Error(`scripted transport failure: ${turn.fault}`);
    stepOf.set(run, turn);
    if (turn.tool_name !== 'finish') return turn.thought;
    const written = turn.tool_args ?? {};
    if (Object.keys(written).length) return finalAnswer(turn.thought, written);
    const extract = await askModel({ ...call, kind: 'extract' });
    if (extract.kind === 'fault') throw new Error(`scripted transport failure: ${extract.fault}`);
    return finalAnswer(turn.thought, extract.outputs);
  },
});

function finalAnswer(thought, outputs) {
  const lines = Object.entries(outputs).map(([name, value]) =>
    `${name}: ${typeof value === 'string' ? value : JSON.stringify(value)}`);
  return [thought, 'Final Answer:', ...lines].join('\n');
}

function argsText(turn) {
  return turn.raw_tool_args ?? JSON.stringify(turn.tool_args);
}

function signature(spec) {
  // dspy.ts documents one signature form, an object of field lists (its README's "Signatures",
  // core/signature.d.ts): no arrow strings, no classes, no instructions. An arrow string a
  // scenario judges (spec.form_judged: SIG-1, SIG-4, SIG-5, an EXT-1 scenario) is handed over as it
  // is, as a user would write it, and dspy.ts refuses it; every other form, the suite's default
  // string included, is handed over as that object, built from the spec's fields.
  if (spec.form === 'string' && spec.form_judged) return spec.text ?? arrow(spec);
  const field = (f) => ({ name: f.name, type: TYPES[f.type], description: f.description, required: true });
  return { inputs: spec.inputs.map(field), outputs: spec.outputs.map(field) };
}

function arrow(spec) {
  return `${spec.inputs.map((f) => f.name).join(', ')} -> ${spec.outputs.map((f) => f.name).join(', ')}`;
}

function tool(spec) {
  return {
    name: spec.name,
    description: spec.description,
    parameters: spec.parameters.map((p) => ({ name: p.name, description: p.description, required: true })),
    // A dspy.ts tool takes one text input; a tool written for it reads its JSON arguments itself.
    async execute(input) {
      let args = input;
      try {
        args = JSON.parse(input);
      } catch {
        // not JSON: the tool gets the text as it is
      }
      return JSON.stringify(await callTool(spec.name, args));
    },
  };
}

// The run's iterations: the highest stepNumber of its steps (ReAct numbers them by iteration).
function iterations(steps) {
  return steps.reduce((n, step) => Math.max(n, step.stepNumber ?? 0), 0);
}

// Whether the run ended with a final answer: a thought that passed ReAct's own test for one.
function answered(steps) {
  return steps.some((step) => step.type === 'thought' && /(?:final answer|answer):\s*(.+)/i.test(step.content));
}

function trajectory(steps) {
  const byNumber = new Map();
  for (const step of steps) {
    const entry = byNumber.get(step.stepNumber) ?? {};
    entry[step.type] = step;
    byNumber.set(step.stepNumber, entry);
  }
  const out = [];
  for (const { thought, action, observation } of byNumber.values()) {
    if (action !== undefined) {
      out.push({ thought: thought?.content ?? null, tool_name: action.tool, tool_args: json(action.content),
                 observation: json(observation?.content), is_error: null, call_id: null });
    } else if (thought !== undefined && /(?:final answer|answer):/i.test(thought.content)) {
      out.push({ thought: thought.content, tool_name: 'finish', tool_args: {}, observation: null, is_error: null,
                 call_id: null });
    }
  }
  return out;
}

const agents = new Map();

serve({
  hello: () => ({ protocol: PROTOCOL, name: 'dspy-ts', version: VERSION, dependencies: installedVersions(import.meta.url),
                  capabilities: CAPABILITIES, not_claimed: NOT_CLAIMED,
                  known_failures: KNOWN_FAILURES, parity: PARITY }),
  // dspy.ts has no adapters: there is nothing to configure, and nothing to read back.
  configure: () => ({}),
  global_adapter: () => ({ adapter: null }),
  build({ agent, spec }) {
    try {
      const react = new ReAct({ name: agent, signature: signature(spec.signature),
                                tools: spec.tools.map(tool), maxIterations: spec.max_steps });
      agents.set(agent, { react, spec, last: null });
      return { error: null };
    } catch (error) {
      return { error: errorInfo(error) };
    }
  },
  async run({ agent, run, call }) {
    const state = agents.get(agent);
    try {
      // dspy.ts's run(input) takes no per-call step cap: call.max_steps has nowhere to go.
      const output = await state.react.run(call.inputs);
      state.last = output;
      const outputs = Object.fromEntries(state.spec.signature.outputs.map((f) => [f.name, json(output[f.name])]));
      const steps = output.steps ?? [];
      // run() says nothing of why it stopped, but loops only until a final-answer thought or
      // maxIterations: its steps tell the two apart (PARITY.stop_reason).
      const used = iterations(steps);
      const stop = answered(steps) ? 'finish' : used >= state.react.maxIterations ? 'max_steps' : null;
      return { outcome: { outputs, trajectory: trajectory(steps), iterations: used, stop_reason: stop } };
    } catch (error) {
      return { outcome: { error: errorInfo(error) } };
    } finally {
      stepOf.delete(run);
    }
  },
  // dspy.ts's step output is free text: the tool name is not constrained.
  step_tool_names: () => ({ names: null }),
  mutate_last_result({ agent, marker }) {
    const steps = agents.get(agent).last?.steps ?? [];
    const held = steps.length;
    for (const step of steps) step.content = marker;
    steps.push({ type: 'thought', content: marker, stepNumber: steps.length + 1 });
    return { changed: agents.get(agent).last ? [`output.steps (${held} steps)`] : [] };
  },
});
