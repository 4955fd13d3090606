# frozen_string_literal: true

# The react-conformance harness for DSPy.rb (the `dspy` gem), its DSPy::ReAct module.
#
#   pytest --impl dspy-rb     (DSPy.rb on the load path: DSPY_RB_LOAD_PATH, see README.md)
#   pytest --impl "cmd:bundle exec ruby harnesses/dspy-rb/harness.rb"
#
# DSPy::ReAct is a JSON text protocol. Each step is one model call of its thought generator (a
# DSPy::Predict whose reply is a JSON object: thought, action, tool_input, final_answer); `action`
# "finish" ends the loop, and its `final_answer` is the prediction's first output: ReAct makes no
# extraction call. So a scripted `finish` step and the extraction turn after it are rendered as
# that one reply: the harness asks the suite for the step turn, then for the extraction turn
# (showing the same prompt), and answers with the step's thought and the extraction's first
# output as `final_answer`. A `finish` whose args already hold output values is a model writing
# them in that reply: those are rendered, and no extraction turn is asked for.
#
# After every tool call ReAct asks its observation processor (a second Predict, re_act.rb
# process_observation_and_decide_next_step) to interpret the observation and choose `continue` or
# `finish`: the auxiliary call `observation_processor`, whose standing answer is rendered as
# `{"interpretation": <the observation>, "next_step": "continue"}`, the loop going on unchanged.
#
# The model seam is a DSPy::LM::Adapter, the interface DSPy.rb's provider gems implement
# (lm/adapter.rb): DSPy::LM's own prompt building, JSON extraction (lm/json_strategy.rb) and
# parsing run on every reply. Each run has its own LM (DSPy.with_lm, fiber-local), whose adapter
# knows its run. The suite's tools are DSPy::Tools::Base subclasses in their documented Sorbet
# form (`tool_name`, `tool_description`, a `sig` with one keyword per parameter and `def call`),
# so dynamic_call's coercion and Sorbet's runtime checks run before the suite's tool does.

require 'json'
require 'open3'
# The suite's Ruby protocol module: beside this file in a library's repository, else the suite's own.
require_relative File.exist?(File.join(__dir__, 'protocol.rb')) ? 'protocol' : '../lib/protocol'

# DSPy.rb logs every event to log/development.log under the working directory (dspy.rb
# create_logger) unless DSPY_LOG names another stream: not into the repository the suite runs in.
ENV['DSPY_LOG'] ||= File::NULL

begin
  require 'dspy'
rescue LoadError => e
  warn "harnesses/dspy-rb: DSPy.rb is not on the Ruby load path (#{e.message}). Put its lib/ and its " \
       'gems there (DSPY_RB_LOAD_PATH for --impl dspy-rb, or run under `bundle exec`): see ' \
       'harnesses/dspy-rb/README.md.'
  exit 1
end

P = ReactConformance::Protocol

# Where the generated signature and tool classes live: each gets a constant's name, as a user's
# `class QA < DSPy::Signature` does.
module DspyRbAgents; end

module DspyRbHarness
  module_function

  TYPES = { 'str' => 'String', 'int' => 'Integer', 'float' => 'Float', 'bool' => 'T::Boolean',
            'list' => 'T::Array[T.untyped]', 'dict' => 'T::Hash[String, T.untyped]' }.freeze
  OBSERVATION = 'observation_processor'

  CAPABILITIES = %w[signature max-steps-error].freeze
  REACT = 'DSPy::ReAct (lib/dspy/re_act.rb)'
  NOT_CLAIMED = {
    'adapters' => 'DSPy.rb has no chat or JSON adapter to choose: every Predict call asks for a JSON object ' \
                  '(lm/json_strategy.rb); its formats (data_format :json or :toon) belong to the LM',
    'max-steps-extract' => "on the step cap #{REACT} raises MaxIterationsError (create_enhanced_result): " \
                           'no call extracts outputs from the partial trajectory',
    'max-steps-return' => "on the step cap #{REACT} raises MaxIterationsError: it never returns without an answer",
    'cap-summary' => 'the step cap raises MaxIterationsError, whose message names only the tools used; ' \
                     'cap-summary is a message on a cap that returns',
    'per-call-cap' => 'ReAct#forward(**kwargs) takes only the signature inputs: max_iterations is fixed ' \
                      'when the agent is built (re_act.rb initialize)',
    'repeated-error-stop' => "#{REACT} keeps no count of tool errors: execute_action lets a tool's error " \
                             'propagate (re_act.rb)',
    'ask-user' => "#{REACT} offers only the agent's tools and finish: no built-in tool to ask the user",
    'tool-approval' => "#{REACT} runs the chosen tool at once (execute_tool_with_instrumentation): no " \
                       'approval, pause or resume',
    'approval-edit' => "#{REACT} runs the chosen tool at once: no approval to edit",
    'durable-approvals' => "#{REACT} runs the chosen tool at once: no pause to serialise",
    'async' => 'DSPy.rb has no async form of ReAct: its docs (advanced/concurrent-predictions.md) leave ' \
               'concurrency to the application, around the blocking call',
    'streaming' => 'ReAct#call returns the whole prediction; its instrumentation bus (DSPy.events) reports a ' \
                   'tool step as react.iteration_complete, but neither the step that finishes nor the end of the ' \
                   'run (re_act.rb execute_single_iteration)',
    'parallel-tool-calls' => "each step's reply names one action (the thought signature's `action`, " \
                             're_act.rb create_thought_signature)',
    'lm-retry' => "DSPy::LM sends each request once (lm.rb, 'no retry, no fallback'): retries are the provider " \
                  "gem's HTTP client's (dspy-openai's over the openai gem), beneath the DSPy::LM::Adapter this " \
                  'harness replaces',
    'http' => "DSPy.rb's HTTP clients are its provider gems' (dspy-openai's adapters over the openai gem), and " \
              "ReAct's reply is its own JSON object (thought, action, tool_input, final_answer): the suite's " \
              "endpoint answers in DSPy's chat or JSON adapter formats or native tool calls, none of which it parses"
  }.freeze
  PARITY = {
    'stop_reason' => 'derived: ReAct#call returns a prediction only when the model chose finish, and raises ' \
                     'MaxIterationsError on the step cap (re_act.rb create_enhanced_result)',
    'iterations' => "library: the prediction's iterations, and MaxIterationsError#iterations (re_act.rb)",
    'max_iterations' => 'library: MaxIterationsError#max_iterations (re_act.rb build_max_iterations_error)',
    'partial_run' => "library: MaxIterationsError's history, tools_used and last_observation (re_act.rb " \
                     'build_max_iterations_error)',
    'concurrency' => 'shared'
  }.freeze
  AUXILIARY = {
    OBSERVATION => "after every tool call ReAct's observation processor (a Predict) interprets the " \
                   "observation and chooses continue or finish (re_act.rb process_observation_and_decide_next_step)"
  }.freeze
  # What DSPy.rb does where it fails, and where in its source (checked by driving DSPy.rb directly).
  CRASHES = 'which ReAct does not catch (re_act.rb execute_action: "let errors propagate"): the run ends with it'
  ONE_REPLY = "the tool args are a field of the step's one JSON reply, so they are parsed with it"
  FIRST_OUTPUT = "the thought signature has one final_answer, typed as the signature's first output " \
                 '(re_act.rb create_thought_signature), and create_enhanced_result sets that output alone: ' \
                 "the others are missing and validate_required_fields! raises ArgumentError 'Missing required properties'"
  TOO_DEEP = "#{ONE_REPLY}: JSON's default max_nesting of 100 refuses it (lm.rb parse_response raises RuntimeError " \
             "'Failed to parse LLM response as JSON: nesting of 101 is too deep'), or JSONStrategy (lm/json_strategy.rb " \
             'extract_json_from_content) takes an inner object for the reply and Predict raises PredictionInvalidError ' \
             "'Missing required properties: :thought, :action'; the run ends with it"
  ARGS4 = 'test_tool_args_that_break_the_tools_schema_never_reach_it_with_a_wrong_or_missing_value'
  ARGS5 = 'test_tool_args_of_any_size_or_nesting_reach_the_tool_intact_or_are_refused_saying_why'
  KNOWN_FAILURES = {
    'SIG-1' => "DSPy.rb has no arrow-string signature: ReAct.new's sig takes T.class_of(DSPy::Signature) (re_act.rb " \
               'initialize; Predict.new alike, predict.rb), a class with input and output blocks (signature.rb), and ' \
               "nothing in DSPy.rb parses a string: Sorbet's runtime check raises TypeError for the String",
    'SIG-3' => 'DSPy.rb documents no signature value: its one form is a class declared `class X < DSPy::Signature` ' \
               "with input and output blocks (docs core-concepts/signatures.md, signature.rb), and ReAct.new's sig " \
               '(re_act.rb initialize) refuses anything else with TypeError',
    'ERR-1' => "a tool's exception propagates out of ReAct#call: execute_tool_with_instrumentation has no rescue " \
               'and execute_action says "let errors propagate" (re_act.rb): the run ends with it, and the model ' \
               'never sees an error observation',
    'LOOP-5' => "an action that is not a tool fails Predict's coercion to the ActionEnum of the thought signature " \
                "(re_act.rb create_action_enum_class): Predict raises PredictionInvalidError \"Type Mismatch in 'action'\" " \
                '(predict.rb create_prediction_result), and no error observation reaches the model',
    'ARGS-2' => "tool_input is typed T.nilable(T::Hash[String, T.untyped]) (re_act.rb ToolInput): an array, string or " \
                "number fails Predict's type check (PredictionInvalidError \"Type Mismatch in 'tool_input'\"), and null " \
                "is no args, for which Tools::Base#dynamic_call (tools/base.rb) raises ArgumentError 'Missing required " \
                "parameter', #{CRASHES}",
    'ARGS-3' => "#{ONE_REPLY}: malformed args make the whole reply unparsable, and lm.rb parse_response raises " \
                "RuntimeError 'Failed to parse LLM response as JSON' (or JSONStrategy takes an inner object for the " \
                "reply and Predict raises PredictionInvalidError 'Missing required properties'): the run ends with it",
    'ARGS-6' => "Tools::Base#dynamic_call (tools/base.rb) passes on only the keywords of the tool's Sorbet sig: an " \
                'undeclared argument is dropped silently and the tool runs',
    "#{ARGS4}[{\"amount\": \"fifty\", \"recipient\": \"Ann\"}-amount]" =>
      "Tools::Base#dynamic_call coerces each argument to its sig's type (mixins/type_coercion.rb " \
      "coerce_value_to_type: value.to_i): 'fifty' reaches the tool as 0",
    "#{ARGS4}[{\"amount\": 50.5, \"recipient\": \"Ann\"}-amount]" =>
      'Tools::Base#dynamic_call coerces each argument to its sig\'s type (mixins/type_coercion.rb ' \
      'coerce_value_to_type: value.to_i): 50.5 reaches the tool as 50',
    "#{ARGS4}[{\"amount\": null, \"recipient\": \"Ann\"}-amount]" =>
      "Tools::Base#dynamic_call passes null on as nil, and the tool's Sorbet sig raises TypeError " \
      "(\"Parameter 'amount': Expected type Integer\"), #{CRASHES}",
    "#{ARGS4}[{\"amount\": 50, \"recipient\": [\"Ann\", \"Bob\"]}-recipient]" =>
      "mixins/type_coercion.rb coerce_to_string raises TypeError 'Cannot coerce Array to String', #{CRASHES}",
    "#{ARGS4}[{\"amount\": 50}-recipient]" =>
      "Tools::Base#dynamic_call (tools/base.rb) raises ArgumentError 'Missing required parameter: recipient', #{CRASHES}",
    "#{ARGS5}[store-an object nested 5000 levels deep]" => TOO_DEEP,
    "#{ARGS5}[store-an object nested 5000 levels deep after an escaped quote]" => TOO_DEEP,
    "#{ARGS5}[store-arrays nested 5000 levels deep inside its object]" => TOO_DEEP,
    "#{ARGS5}[store-arrays nested 5000 levels deep, each beside an empty one]" => TOO_DEEP,
    "#{ARGS5}[store-an object nested 100000 levels deep]" => TOO_DEEP,
    'test_under_the_json_adapter_tool_args_of_any_size_or_nesting_reach_the_tool_intact_or_are_refused_saying_why' \
    '[store-an object nested 100000 levels deep]' => TOO_DEEP,
    'A step reply without its tool args never crashes the run' =>
      "tool_input is optional in the thought signature (default: nil, re_act.rb): a reply without it calls the tool " \
      "with no args, and Tools::Base#dynamic_call raises ArgumentError 'Missing required parameter: a', #{CRASHES}",
    'A step reply without the args of a tool that takes none is asked again or shown as an error' =>
      'tool_input is optional in the thought signature (default: nil, re_act.rb): a reply without it is a ' \
      'complete step, and execute_action runs the tool with no args',
    'The prediction holds each output as the type its signature declares' => FIRST_OUTPUT,
    'The outputs come from the extraction call, not from a step' =>
      "ReAct makes no extraction call: the final_answer the model writes in the step that chooses finish is the " \
      'prediction (re_act.rb handle_finish_action)',
    "A text output the model writes as a JSON number is that number's text" =>
      "Predict coerces final_answer to String with coerce_to_string (mixins/type_coercion.rb), which raises " \
      "TypeError 'Cannot coerce Integer to String' for a number, #{CRASHES}",
    'A typed output that does not parse is asked for again or refused, naming the field' =>
      "Predict coerces an Integer output with value.to_i (mixins/type_coercion.rb coerce_value_to_type): 'four' " \
      'becomes 0, a number the model never wrote',
    'A list output nested a hundred levels deep is handed over intact or refused, naming the field' =>
      "the reply is parsed with JSON's default max_nesting of 100: lm.rb parse_response raises RuntimeError " \
      "'Failed to parse LLM response as JSON: nesting of 101 is too deep', which names no field",
    "A signature class's field descriptions reach the model" =>
      "the thought signature's final_answer carries ReAct's own description (re_act.rb create_thought_signature): " \
      "the output field's description never reaches the model",
    'After steps with thoughts, a partial final answer the library gives is not empty' =>
      'MaxIterationsError#partial_final_answer is nil on the step cap: create_enhanced_result calls ' \
      'build_max_iterations_error without one (re_act.rb); only a forced finish passes one'
  }.freeze

  # The gems DSPy::ReAct runs on: each with the file that defines its version, and the constant.
  GEMS = { 'dspy' => ['dspy/version', 'DSPy::VERSION'], 'dspy-schema' => ['dspy/schema/version', 'DSPy::Schema::VERSION'],
           'sorbet-toon' => ['sorbet/toon/version', 'Sorbet::Toon::VERSION'],
           'sorbet-runtime' => [nil, nil], 'sorbet-schema' => ['sorbet-schema/version', 'SorbetSchema::VERSION'],
           'sorbet-baml' => ['sorbet_baml/version', 'SorbetBaml::VERSION'],
           'dry-configurable' => ['dry/configurable/version', 'Dry::Configurable::VERSION'],
           'dry-logger' => ['dry/logger/version', 'Dry::Logger::VERSION'], 'async' => ['async/version', 'Async::VERSION'],
           'io-event' => ['io/event/version', 'IO::Event::VERSION'],
           'concurrent-ruby' => ['concurrent/version', 'Concurrent::VERSION'] }.freeze

  # The versions of DSPy.rb and of the gems its loop runs on: Bundler's, where it loaded them; else
  # each gem's own VERSION constant (gems put on the load path by hand have no spec), and the
  # commit of a DSPy.rb checkout.
  def dependencies
    found = GEMS.to_h do |name, (feature, constant)|
      spec = Gem.loaded_specs[name]
      [name, spec ? spec.version.to_s : constant_version(feature, constant)]
    end.compact
    found['dspy'] = "#{found['dspy']} (commit #{commit})" if commit
    found.merge('ruby' => RUBY_VERSION)
  end

  def constant_version(feature, constant)
    return nil if feature.nil?

    require feature
    Object.const_get(constant).to_s
  rescue LoadError, NameError
    nil
  end

  # The git commit of the DSPy.rb checkout loaded, where it was loaded from one.
  def commit
    return @commit if defined?(@commit)

    version_file = $LOADED_FEATURES.find { |path| path.end_with?('/dspy/version.rb') }
    out, status = version_file && Open3.capture2e('git', '-C', File.dirname(version_file), 'rev-parse', 'HEAD')
    @commit = status&.success? ? out.strip : nil
  end

  # The agent's signature in the form the scenario asks for. DSPy.rb's one documented form is a
  # DSPy::Signature subclass (docs core-concepts/signatures.md): the class form, and the suite's
  # default string form that no scenario judges, are handed over as that class. An arrow string a
  # scenario judges (SIG-1, SIG-4, SIG-5) is handed over as it is, and a signature value as the
  # suite's data: DSPy.rb has neither form, and nothing of the harness stands in for them.
  def signature(agent, spec)
    return spec['text'] || arrow(spec) if spec['form'] == 'string' && spec['form_judged']
    return spec.slice('inputs', 'outputs', 'instructions') if spec['form'] == 'value'

    klass = Class.new(DSPy::Signature)
    instructions = spec['instructions'].to_s
    klass.description(instructions) unless instructions.empty?
    inputs = fields(spec['inputs'])
    outputs = fields(spec['outputs'])
    klass.input { inputs.each { |name, type, text| const name, type, description: text } }
    klass.output { outputs.each { |name, type, text| const name, type, description: text } }
    DspyRbAgents.const_set(constant(agent, 'Signature'), klass)
  end

  def arrow(spec)
    "#{spec['inputs'].map { |f| f['name'] }.join(', ')} -> #{spec['outputs'].map { |f| f['name'] }.join(', ')}"
  end

  def fields(list)
    list.map { |f| [f['name'].to_sym, type(f['type']), f['description'].to_s.empty? ? nil : f['description']] }
  end

  def type(name)
    Object.class_eval(TYPES.fetch(name), __FILE__, __LINE__)
  end

  def constant(agent, suffix)
    "#{agent.to_s.split(/[^A-Za-z0-9]+/).map(&:capitalize).join}#{suffix}"
  end

  IDENTIFIER = /\A[a-z_][A-Za-z0-9_]*\z/

  # A suite tool as a DSPy::Tools::Base subclass, written as DSPy.rb's docs write one.
  def tool_class(agent, index, tool)
    params = tool['parameters'] || []
    odd = params.map { |p| p['name'] }.grep_v(IDENTIFIER)
    raise ArgumentError, "the harness cannot declare #{odd.inspect} as Ruby keyword parameters" unless odd.empty?

    klass = Class.new(DSPy::Tools::Base) do
      extend T::Sig
    end
    klass.tool_name(tool['name'])
    klass.tool_description(tool['description'])
    signature = params.map { |p| "#{p['name']}: #{TYPES.fetch(p['type'])}" }.join(', ')
    keywords = params.map { |p| "#{p['name']}:" }.join(', ')
    args = params.map { |p| "#{p['name'].inspect} => #{p['name']}" }.join(', ')
    sig = params.empty? ? 'sig { returns(T.untyped) }' : "sig { params(#{signature}).returns(T.untyped) }"
    klass.class_eval(<<~RUBY, __FILE__, __LINE__ + 1)
      #{sig}
      def call(#{keywords})
        P.call_tool(#{tool['name'].inspect}, { #{args} })
      rescue P::ToolError => e
        raise DspyRbHarness.tool_error(e)
      rescue StandardError => e
        raise HarnessFault, "the harness's tool failed: \#{e.class}: \#{e.message}"
      end
    RUBY
    DspyRbAgents.const_set(constant(agent, "Tool#{index}"), klass)
  end

  # The suite's scripted tool error, raised under its own name (any exception type, ERR-1).
  def tool_error(error)
    name = error.type.to_s
    name = 'ToolFailure' unless name.match?(/\A[A-Z][A-Za-z0-9_]*\z/)
    klass = DspyRbAgents::Errors.const_defined?(name, false) ? DspyRbAgents::Errors.const_get(name, false) : nil
    klass ||= DspyRbAgents::Errors.const_set(name, Class.new(StandardError))
    klass.new(error.message)
  end

  # A history entry (a Hash the library handed out) as the contract's step.
  def step(entry)
    finish = entry[:action].to_s.downcase == DSPy::ReAct::FINISH_ACTION
    { 'thought' => entry[:thought], 'tool_name' => entry[:action],
      'tool_args' => finish ? {} : P.wire(P.json(entry[:tool_input])),
      'observation' => finish ? nil : P.wire(P.json(entry[:observation])), 'is_error' => nil, 'call_id' => nil }
  end

  def outcome_of(prediction, spec)
    outputs = spec['signature']['outputs'].to_h { |f| [f['name'], P.json(prediction.public_send(f['name']))] }
    { 'outputs' => outputs, 'trajectory' => prediction.history.map { |entry| step(entry) },
      'stop_reason' => 'finish', 'iterations' => prediction.iterations, 'error' => nil }
  end

  # An exception as the protocol's ErrorInfo, its message naming no folder of this machine: Sorbet's
  # TypeError names the caller's and the method's files (`Caller: .../call_validation.rb:145`), shown
  # from the gem's folder (`sorbet-runtime/lib/...`) or the suite's checkout, as the suite shows a
  # harness's stderr.
  def error_info(error, **kwargs)
    P.error_info(error, **kwargs).merge('message' => unplaced(error.message.to_s))
  end

  CHECKOUT = File.expand_path('../..', __dir__)

  def unplaced(text)
    gem_folders = $LOAD_PATH.map(&:to_s).grep(%r{/lib\z}).map { |lib| File.dirname(lib, 2) }
    folders = [[CHECKOUT, ''], *gem_folders.uniq.map { |folder| [folder, ''] }, [Dir.home, '~/']]
    folders.reject { |folder, _| ['', '/'].include?(folder) }.sort_by { |folder, _| -folder.length }
           .reduce(text) { |shown, (folder, as)| shown.gsub("#{folder}/", as) }
  end

  def cap_error(error)
    fields = { 'iterations' => error.iterations, 'max_iterations' => error.max_iterations,
               'tools_used' => error.tools_used, 'history' => error.history.map { |entry| step(entry) },
               'last_observation' => P.wire(P.json(error.last_observation)),
               'partial_final_answer' => P.json(error.partial_final_answer) }
    error_info(error, kind: 'max-iterations', fields: fields)
  end
end

module DspyRbAgents
  module Errors; end
end

# A failure of the harness's own code inside a run (its model seam, its tools): not a StandardError,
# so neither DSPy.rb nor the harness's `run` reports it as the library's; the command fails, and the
# scenario is errored.
class HarnessFault < Exception # rubocop:disable Lint/InheritException -- past every `rescue StandardError`
end

# The model seam: an LM adapter (the interface of DSPy.rb's provider adapters) that asks the
# suite for each reply of one run.
class ScriptedAdapter < DSPy::LM::Adapter
  def initialize(run, spec)
    super(model: 'scripted', api_key: 'none')
    @run = run
    @spec = spec
  end

  def chat(messages:, signature: nil, &_block)
    raise DSPy::LM::AdapterError, 'a model call outside of any run' if @run.nil?

    content = P.with_run(@run) { reply(messages, signature) }
    DSPy::LM::Response.new(content: content, usage: nil, metadata: { provider: 'scripted', model: model })
  rescue P::UnexpectedModelCall, DSPy::LM::AdapterError
    raise # the model call fails, as the script asks
  rescue StandardError => e
    raise HarnessFault, "the harness's model seam failed: #{e.class}: #{e.message}"
  end

  private

  def reply(messages, signature)
    shown = messages.map { |m| { 'role' => m[:role].to_s, 'content' => m[:content].to_s } }
    call = { 'adapter' => 'json', 'messages' => shown, 'tools' => nil }
    outputs = signature&.output_struct_class&.props || {}
    if outputs.key?(:next_step)
      P.ask_auxiliary(DspyRbHarness::OBSERVATION, call.merge('kind' => 'auxiliary'))
      return JSON.generate('interpretation' => observation(shown), 'next_step' => 'continue')
    end
    unless outputs.key?(:action)
      P.ask_model(call.merge('kind' => 'other'))
      raise DSPy::LM::AdapterError, 'a model call of neither ReAct predictor'
    end

    turn = answer(P.ask_model(call.merge('kind' => 'step')))
    return step_reply(turn) unless turn['tool_name'] == DSPy::ReAct::FINISH_ACTION

    written = turn['tool_args'].is_a?(Hash) && !turn['tool_args'].empty? ? turn['tool_args'] : nil
    written ||= answer(P.ask_model(call.merge('kind' => 'extract')))['outputs']
    final_reply(turn['thought'], written)
  end

  # A transport fault as a provider adapter raises it.
  def answer(turn)
    raise DSPy::LM::AdapterError, "scripted transport failure: #{turn['fault']}" if turn['kind'] == 'fault'

    turn
  end

  # The model's reply as the prompt asks for it: the output fields as one JSON object, in the
  # schema's order; `raw_tool_args` verbatim, so DSPy.rb's own parsing meets malformed JSON.
  def step_reply(turn)
    args = turn['raw_tool_args'] || JSON.generate(turn['tool_args'], max_nesting: false)
    thought = JSON.generate(turn['thought'].to_s)
    action = JSON.generate(turn['tool_name'])
    return "{\"thought\": #{thought}, \"action\": #{action}, \"final_answer\": null}" if turn['without_tool_args']

    "{\"thought\": #{thought}, \"action\": #{action}, \"tool_input\": #{args}, \"final_answer\": null}"
  end

  # The final answer: ReAct's reply has one `final_answer`, typed as the signature's first output.
  def final_reply(thought, outputs)
    first = @spec['signature']['outputs'].first
    value = first ? outputs[first['name']] : outputs.values.first
    JSON.generate({ 'thought' => thought.to_s, 'action' => DSPy::ReAct::FINISH_ACTION, 'tool_input' => nil,
                    'final_answer' => value }, max_nesting: false)
  end

  # The observation the processor was shown, passed through as the interpretation.
  def observation(shown)
    text = shown.last && shown.last['content']
    block = text.to_s[/```json\s*\n(.*)\n```/m, 1]
    value = block && JSON.parse(block, max_nesting: false)['observation']
    P.text(value)
  rescue JSON::ParserError
    ''
  end
end

# DSPy::LM over a scripted adapter: DSPy::LM.new resolves its adapter from a provider prefix of
# its own map (lm/adapter_factory.rb), so the seam sets the one attribute the factory would.
class ScriptedLM < DSPy::LM
  def initialize(adapter)
    @model_id = 'scripted/scripted'
    @api_key = nil
    @schema_format = :json
    @data_format = :json
    @provider = 'scripted'
    @model = 'scripted'
    @adapter = adapter
  end
end

# The harness: one method per command.
class Harness
  def initialize
    @agents = {}
    @lock = Mutex.new
    # As a DSPy.rb user configures one: every run then uses an LM of its own (DSPy.with_lm).
    DSPy.configure { |config| config.lm = ScriptedLM.new(ScriptedAdapter.new(nil, nil)) }
  end

  def hello(_command)
    { 'name' => 'dspy-rb', 'version' => DSPy::VERSION, 'capabilities' => DspyRbHarness::CAPABILITIES,
      'not_claimed' => DspyRbHarness::NOT_CLAIMED, 'known_failures' => DspyRbHarness::KNOWN_FAILURES,
      'auxiliary_calls' => DspyRbHarness::AUXILIARY, 'parity' => DspyRbHarness::PARITY,
      'dependencies' => DspyRbHarness.dependencies }
  end

  # DSPy.rb has no global chat or JSON adapter to set (`adapters` is not claimed): nothing to do.
  def configure(_command)
    {}
  end

  def build(command)
    agent_id = command['agent']
    spec = command['spec']
    # The tool classes are the harness's own writing: a failure there is the harness's (errored).
    tools = spec['tools'].each_with_index.map { |t, i| DspyRbHarness.tool_class(agent_id, i, t).new }
    options = spec['max_steps'].nil? ? {} : { max_iterations: spec['max_steps'] }
    begin
      signature = DspyRbHarness.signature(agent_id, spec['signature'])
      agent = DSPy::ReAct.new(signature, tools: tools, **options)
    rescue StandardError => e # DSPy.rb refused the signature or the agent: reported as data
      return { 'error' => DspyRbHarness.error_info(e) }
    end
    @lock.synchronize { @agents[agent_id] = { agent: agent, spec: spec, last: nil } }
    { 'error' => nil }
  end

  def run(command)
    entry = @lock.synchronize { @agents.fetch(command['agent']) }
    call = command['call']
    raise NotImplementedError, 'a per-call step cap: the harness does not claim per-call-cap' unless call['max_steps'].nil?

    inputs = call['inputs'].to_h { |name, value| [name.to_sym, value] }
    lm = ScriptedLM.new(ScriptedAdapter.new(P.current_run, entry[:spec]))
    begin
      prediction = DSPy.with_lm(lm) { entry[:agent].call(**inputs) }
    rescue DSPy::ReAct::MaxIterationsError => e
      entry[:last] = e
      return { 'outcome' => { 'error' => DspyRbHarness.cap_error(e) } }
    rescue StandardError => e
      entry[:last] = nil
      return { 'outcome' => { 'error' => DspyRbHarness.error_info(e) } }
    end
    entry[:last] = prediction
    { 'outcome' => DspyRbHarness.outcome_of(prediction, entry[:spec]) }
  end

  # The names ReAct's thought signature admits as `action`: its ActionEnum, the agent's tools and finish.
  def step_tool_names(command)
    agent = @lock.synchronize { @agents.fetch(command['agent'])[:agent] }
    thought = agent.named_predictors.to_h.fetch('thought_generator')
    enum = thought.signature_class.output_struct_class.props.fetch(:action).fetch(:type_object).raw_type
    { 'names' => enum.values.map(&:serialize) }
  end

  # What the last call handed the caller: the prediction's history, or the error's.
  def mutate_last_result(command)
    last = @lock.synchronize { @agents.fetch(command['agent'])[:last] }
    marker = command['marker']
    return { 'changed' => [] } if last.nil?

    where = last.is_a?(Exception) ? 'error.history' : 'prediction.history'
    history = last.history
    held = history.length
    history.each { |e| e[:thought] = e[:observation] = marker }
    history << { step: held + 1, thought: marker, action: marker, tool_input: {}, observation: marker }
    { 'changed' => ["#{where} (#{held} entries)"] }
  end
end

P.serve(Harness.new)
