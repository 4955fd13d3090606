# frozen_string_literal: true

# A Ruby harness for the suite's own tests: binds the tiny loop of loop.rb through the Ruby
# protocol module (harnesses/lib/protocol.rb), as a Ruby library's maintainers would bind theirs:
#
#   pytest --impl "cmd:ruby tests/ruby/harness.rb"
#
# Only the translation is written here; the protocol module does the wire.

require 'json'
require_relative '../../harnesses/lib/protocol'
require_relative 'loop'

P = ReactConformance::Protocol

CLAIMED = %w[max-steps-return cap-summary per-call-cap repeated-error-stop parallel-tool-calls tool-approval
             approval-edit async].freeze
NOT_CLAIMED = {
  'signature' => 'a native loop: no signature, adapters or extraction call',
  'adapters' => 'a native loop: the replies are tool calls, in no adapter format',
  'max-steps-error' => 'on the cap the run returns; it never raises',
  'max-steps-extract' => 'on the cap the run returns; no extra call writes the outputs',
  'ask-user' => 'no built-in tool to ask the user',
  'durable-approvals' => 'approval is a callback during the run: there is no pause to keep',
  'streaming' => 'no event stream',
  'lm-retry' => 'the model is a plain callable: no client, no retries',
  'http' => 'the model is a plain callable: no HTTP client'
}.freeze

# The suite's tools, declared in the loop's form; each call goes to the suite.
def tools_of(spec)
  spec['tools'].map do |t|
    schema = P.json_schema(t)
    TinyLoop::Tool.new(t['name'], t['description'], schema, ->(args) { P.call_tool(t['name'], args) })
  end
end

# The loop's model: each request logged as the model saw it, answered from the script.
def seam
  counter = 0
  lambda do |messages, tools|
    shown = messages.map do |m|
      calls = (m['tool_calls'] || []).map { |c| "call #{c['name']}(#{c['arguments']})" }
      { 'role' => m['role'], 'content' => [m['content'].to_s, *calls].join("\n").strip }
    end
    turn = P.ask_model('kind' => 'step', 'adapter' => 'native', 'messages' => shown, 'tools' => tools)
    counter += 1
    case turn['kind']
    when 'step'
      calls = [turn, *turn['parallel']].each_with_index.map do |c, i|
        args = c['raw_tool_args'] || JSON.generate(c['tool_args'], max_nesting: false)
        TinyLoop::ToolCall.new("call_#{counter}_#{i}", c['tool_name'], args)
      end
      TinyLoop::Reply.new(turn['thought'], calls)
    when 'final', 'extract'
      TinyLoop::Reply.new(P.reply_text(turn['outputs']), [])
    else
      raise IOError, "the model's transport failed: #{turn['fault']}"
    end
  end
end

def step_of(step)
  { 'thought' => step['thought'].to_s.empty? ? nil : step['thought'], 'tool_name' => step['tool_name'],
    'tool_args' => P.wire(step['tool_args']), 'observation' => step['observation'],
    'is_error' => step['failed'], 'call_id' => step['call_id'] }
end

# The harness: one method per command.
class Harness
  def initialize
    @agents = {}
    @lock = Mutex.new
  end

  # With OBSERVER=1 the loop runs its observation processor: an auxiliary model call per tool result.
  OBSERVER = ENV['OBSERVER'] == '1'

  def hello(_command)
    auxiliary = OBSERVER ? { 'observation' => 'the loop may rewrite each tool result with a model call' } : {}
    { 'name' => 'ruby-loop', 'version' => '0', 'capabilities' => CLAIMED, 'not_claimed' => NOT_CLAIMED,
      'known_failures' => {}, 'auxiliary_calls' => auxiliary, 'approval_form' => 'callback' }
  end

  def build(command)
    spec = command['spec']
    agent = TinyLoop::Agent.new(tools_of(spec), nil, max_steps: spec['max_steps'],
                                                     instructions: spec['signature']['instructions'].to_s,
                                                     needs_approval: spec['tools'].select { |t| t['interruptible'] }
                                                                                  .map { |t| t['name'] })
    @lock.synchronize { @agents[command['agent']] = { agent: agent, spec: spec, last: nil } }
    { 'error' => nil }
  rescue StandardError => e
    { 'error' => P.error_info(e) }
  end

  def run(command)
    entry = @lock.synchronize { @agents.fetch(command['agent']) }
    call = command['call']
    # Each run its own model seam; the tools and cap are the agent's. The async form calls them
    # on a thread of the loop's own, so each carries the run id there.
    run = P.current_run
    in_run = ->(callback) { ->(*args) { P.with_run(run) { callback.call(*args) } } }
    agent = entry[:agent].dup
    agent.tools = tools_of(entry[:spec]).each { |t| t.function = in_run.call(t.function) }
    agent.model = in_run.call(seam)
    agent.observer = OBSERVER ? in_run.call(method(:observe)) : nil
    agent.approve = in_run.call(method(:approve))
    begin
      user = P.user_message(call['inputs'])
      result = if call['mode'] == 'async'
                 agent.run_async(user, max_steps: call['max_steps']).value
               else
                 agent.run(user, max_steps: call['max_steps'])
               end
    rescue StandardError => e
      return { 'outcome' => { 'error' => P.error_info(e) } }
    end
    entry[:last] = result
    outputs = result.output.nil? ? nil : P.reply_outputs(entry[:spec]['signature'], result.output)
    { 'outcome' => { 'outputs' => outputs, 'trajectory' => result.steps.map { |s| step_of(s) },
                     'stop_reason' => result.stop_reason, 'iterations' => result.steps_used,
                     'fallback' => result.message, 'tool_errors' => result.tool_errors } }
  end

  # The loop's approval callback: the person's answer, in the loop's terms.
  def approve(name, args, call_id)
    answer = P.read_approval(P.ask_approval(name, args, call_id))
    case answer['decision']
    when 'approve' then true
    when 'reject' then false
    when 'edit' then { 'name' => answer['name'], 'args' => answer['args'] }
    else answer['text']
    end
  end

  # The observation processor's model call: `continue` keeps the observation as it is.
  def observe(tool, observation)
    call = { 'kind' => 'auxiliary', 'adapter' => 'other', 'tools' => nil,
             'messages' => [{ 'role' => 'user', 'content' => "Rewrite the result of #{tool}, or say continue: #{observation}" }] }
    answer = P.ask_auxiliary('observation', call)
    answer == 'continue' ? observation : answer
  end

  def mutate_last_result(command)
    last = @lock.synchronize { @agents.fetch(command['agent'])[:last] }
    marker = command['marker']
    return { 'changed' => [] } if last.nil?

    held = last.steps.length
    last.steps.each { |s| s['thought'] = s['observation'] = marker }
    last.steps << { 'thought' => marker, 'tool_name' => marker, 'tool_args' => {}, 'observation' => marker }
    { 'changed' => ["result.steps (#{held} steps)"] }
  end
end

P.serve(Harness.new)
