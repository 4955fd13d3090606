# frozen_string_literal: true

# A tiny native tool-calling loop, written for the suite's own tests (as tests/native/loop.py is):
# the library a Ruby harness binds. The model is a callable taking the messages and the tool
# declarations and returning a Reply; the loop runs tools until a reply calls none, or the step cap.

require 'json'

module TinyLoop
  Reply = Struct.new(:content, :tool_calls)
  ToolCall = Struct.new(:id, :name, :arguments)
  Tool = Struct.new(:name, :description, :schema, :function)
  Result = Struct.new(:output, :stop_reason, :steps_used, :steps, :message, :tool_errors)
  # Consecutive similar tool failures (same tool, same error kind) that stop the run.
  REPEATED_ERRORS = 3

  # A tool's arguments that cannot reach it.
  class ArgsError < StandardError; end

  JSON_TYPES = {
    'string' => ->(v) { v.is_a?(String) }, 'integer' => ->(v) { v.is_a?(Integer) },
    'number' => ->(v) { v.is_a?(Numeric) }, 'boolean' => ->(v) { [true, false].include?(v) },
    'array' => ->(v) { v.is_a?(Array) }, 'object' => ->(v) { v.is_a?(Hash) }
  }.freeze

  class Agent
    attr_accessor :model

    attr_accessor :observer

    # `observer`, if given, is the library's observation processor: a model call that may rewrite
    # each tool result before the model sees it (nil: none).
    # `needs_approval` names the tools that run only once `approve` (name, args, call id) says
    # true; false or a text rejects the call, a Hash `{'name', 'args'}` runs that call instead.
    attr_accessor :needs_approval, :approve

    def initialize(tools, model, max_steps:, instructions: '', observer: nil, needs_approval: [], approve: nil)
      @observer = observer
      @needs_approval = needs_approval
      @approve = approve
      @tools = tools.to_h { |t| [t.name, t] }
      @model = model
      @max_steps = max_steps
      @instructions = instructions
    end

    def declarations
      @tools.values.map do |t|
        { 'type' => 'function', 'function' => { 'name' => t.name, 'description' => t.description,
                                                'parameters' => t.schema } }
      end
    end

    # The tools the loop may run (replacing the ones it was built with).
    def tools=(tools)
      @tools = tools.to_h { |t| [t.name, t] }
    end

    # The async form: the run on a thread of the loop's own, whose `value` is the Result (or
    # raises what the run raised). The model, tools and callbacks are called on that thread.
    def run_async(user, max_steps: nil)
      Thread.new { run(user, max_steps: max_steps) }.tap { |t| t.report_on_exception = false }
    end

    # One call with its own budget: until a reply calls no tool, or the cap.
    def run(user, max_steps: nil)
      cap = max_steps || @max_steps
      raise ArgumentError, "max_steps must be at least 1, not #{cap}" if cap < 1

      # A library that prints to stdout, as many do: the protocol module keeps it off the wire.
      puts "tinyloop: a run with a cap of #{cap} steps"
      STDOUT.write("tinyloop: (and through STDOUT)\n")

      messages = []
      messages << { 'role' => 'system', 'content' => @instructions } unless @instructions.empty?
      messages << { 'role' => 'user', 'content' => user }
      steps = []
      tried = Hash.new(0)
      errors = [] # [tool, kind, message], oldest first
      streak = []
      completed = 0
      (1..cap).each do |step|
        reply = @model.call(JSON.parse(JSON.generate(messages)), declarations)
        messages << { 'role' => 'assistant', 'content' => reply.content,
                      'tool_calls' => reply.tool_calls.map(&:to_h).map { |c| c.transform_keys(&:to_s) } }
        return Result.new(reply.content, 'finish', step, steps, nil, texts(errors)) if reply.tool_calls.empty?

        reply.tool_calls.each do |call|
          observation, args, error, ran = execute(call)
          observation = @observer.call(call.name, observation) if @observer
          tried[call.name] += 1 if ran
          completed += 1 if error.nil?
          steps << { 'thought' => reply.content, 'tool_name' => call.name, 'tool_args' => args,
                     'observation' => observation, 'failed' => !error.nil?, 'call_id' => call.id }
          messages << { 'role' => 'tool', 'tool_call_id' => call.id, 'content' => observation }
          streak = [] if error.nil?
          next if error.nil? || !ran # only a tool that ran and raised is a tool error

          kind = [call.name, error_kind(error)]
          errors << [call.name, kind[1], error.message]
          streak = streak.last == kind ? streak + [kind] : [kind]
          next if streak.size < REPEATED_ERRORS

          message = "I stopped: the tool #{call.name} failed #{streak.size} times in a row " \
                    "(#{error.message}). Please check its input, or try rephrasing the request."
          return Result.new(nil, 'repeated_tool_errors', step, steps, message, texts(errors))
        end
      end
      summary = tried.select { |_, n| n.positive? }.map { |name, n| "ran #{name} #{n}×" }.join(', ')
      message = "I reached the step cap (#{cap} steps) without an answer: " \
                "#{summary.empty? ? 'ran no tool' : summary}."
      message += " The last tool error: #{errors.last[2]}." unless errors.empty?
      message += ' No tool completed.' if completed.zero?
      Result.new(nil, 'max_steps', cap, steps, message, texts(errors))
    end

    private

    def texts(errors)
      errors.last(10).map { |tool, kind, message| "#{tool}: #{kind}: #{message}" }
    end

    def error_kind(error)
      error.respond_to?(:type) ? error.type : error.class.name
    end

    # The observation, the args as parsed (or the raw text), the error if any, and whether the
    # tool ran.
    def execute(call, approved: false)
      tool = @tools[call.name]
      if tool.nil?
        error = ArgsError.new("Error: unknown tool #{call.name.inspect}; the tools are #{@tools.keys.sort}")
        return [error.message, call.arguments, error, false]
      end
      begin
        args = parse_args(tool, call.arguments)
      rescue ArgsError => e
        return ["Error: invalid arguments for #{tool.name}: #{e.message}", call.arguments, e, false]
      end
      if @needs_approval.include?(tool.name) && !approved
        raise "the tool #{tool.name} needs approval, and no one approves calls" if @approve.nil?

        answer = @approve.call(tool.name, JSON.parse(JSON.generate(args, max_nesting: false), max_nesting: false), call.id)
        if answer.is_a?(Hash) # an edited call, validated as the model's would be
          return execute(ToolCall.new(call.id, answer['name'].to_s, JSON.generate(answer['args'])), approved: true)
        end
        unless answer == true
          said = answer.is_a?(String) ? ": #{answer}" : ''
          error = ArgsError.new("the person rejected the call of #{tool.name}")
          return ["Error: the person rejected the call of #{tool.name}; it did not run#{said}", args, error, false]
        end
      end
      begin
        result = tool.function.call(args)
      rescue StandardError => e
        return ["Error executing #{tool.name}: #{e.message}", args, e, true]
      end
      [result.is_a?(String) ? result : JSON.generate(result), args, nil, true]
    end

    def parse_args(tool, text)
      begin
        # Any depth: arguments nested thousands of levels deep reach the tool (ARGS-5), through
        # the protocol module's deep path; deeper than Ruby's parser goes, they are refused.
        args = JSON.parse(text, max_nesting: false)
      rescue JSON::ParserError => e
        raise ArgsError, "the arguments are not valid JSON (#{e.message[0, 200]})"
      rescue SystemStackError
        raise ArgsError, 'the arguments are nested too deep to parse'
      end
      raise ArgsError, "the arguments must be a JSON object, not #{args.class}" unless args.is_a?(Hash)

      properties = tool.schema.fetch('properties', {})
      tool.schema.fetch('required', []).each do |name|
        raise ArgsError, "the field #{name.inspect} is missing" unless args.key?(name)
      end
      args.each do |name, value|
        raise ArgsError, "the field #{name.inspect} is not an argument of #{tool.name}" unless properties.key?(name)

        expected = properties[name]['type']
        check = JSON_TYPES[expected]
        raise ArgsError, "the field #{name.inspect} must be of type #{expected}" if check && !check.call(value)
      end
      args
    end
  end
end
