# frozen_string_literal: true

# The react-conformance harness protocol for Ruby harnesses: JSON lines on stdio, the standard
# library only (json, thread). It mirrors harnesses/lib/protocol.mjs; the message shapes are
# harnesses/protocol.schema.json, and docs/writing-a-harness.md explains them.
#
#   require_relative 'protocol'            # or the path to this file
#   ReactConformance::Protocol.serve(MyHarness.new)
#
# `serve(handlers)` reads the suite's commands from stdin and writes the replies to stdout. The
# handlers object has a method per command (`hello`, `build`, `run`, `mutate_last_result`, and
# where the library has them `configure`, `global_adapter`, `resume`, `step_tool_names`), each
# taking the command (a Hash with string keys) and returning the reply's payload (a Hash). While a
# `run` or `resume` is in progress, `ask_model(call)` and `call_tool(name, args)` send the
# harness's own requests and wait for the suite's answer. Each run gets its own thread, which
# knows its run id; a thread or fiber the library starts does not inherit it, so the callbacks
# the harness hands the library carry it: `run = current_run`, then `with_run(run) { ... }`.

require 'json'
require 'thread'

module ReactConformance
  module Protocol
    # The protocol version: the binding contract's (conformance/binding.py, CONTRACT_VERSION).
    PROTOCOL = 3

    # What each command is answered with.
    REPLIES = {
      'hello' => 'welcome', 'configure' => 'done', 'global_adapter' => 'adapter', 'build' => 'built',
      'run' => 'ran', 'resume' => 'ran', 'run_concurrently' => 'ran_all', 'step_tool_names' => 'names',
      'mutate_last_result' => 'done'
    }.freeze

    # The replies to the commands a library without the feature need not implement: no global
    # adapter, no constraint on the step's tool names (the suite reads the declared tools).
    DEFAULTS = { 'global_adapter' => { 'adapter' => nil }, 'step_tool_names' => { 'names' => nil } }.freeze

    # The suite's JSON parser refuses a message nested deeper than about 200 levels.
    DEEPEST = 150

    # Raised by `ask_model` when the suite did not expect the request: the model call must fail.
    class UnexpectedModelCall < StandardError; end

    # A tool's error as the suite sent it: `type` is the tool's exception name.
    class ToolError < StandardError
      attr_reader :type

      def initialize(type, message)
        super(message)
        @type = type
      end
    end

    # Every line on stdout must be a protocol message: the protocol keeps its own copy of stdout,
    # and stdout (the Ruby object and file descriptor 1) goes to stderr, where whatever the
    # library prints belongs.
    @out = $stdout.dup
    @out.sync = true
    $stdout.reopen($stderr)
    @write_lock = Mutex.new
    @waiting = {}
    @waiting_lock = Mutex.new
    @next_id = 0

    RUN_KEY = :react_conformance_run

    class << self
      # The id of the run the calling code belongs to (nil outside a run).
      def current_run
        Thread.current[RUN_KEY] || Thread.current.thread_variable_get(RUN_KEY)
      end

      # Runs the block as part of run `run` (for a thread or fiber the library starts itself).
      def with_run(run)
        before = Thread.current[RUN_KEY]
        Thread.current[RUN_KEY] = run
        yield
      ensure
        Thread.current[RUN_KEY] = before
      end

      # The scripted turn answering `call` (an LMCall as a Hash); raises UnexpectedModelCall if
      # the script did not expect it.
      def ask_model(call)
        answer = ask('model', 'call' => call)
        raise UnexpectedModelCall, (answer['error'] || 'no turn') if answer['error'] || answer['turn'].nil?

        answer['turn']
      end

      # The standing answer to an auxiliary model call (one the harness names in its welcome's
      # `auxiliary_calls`: an observation processor, a planning call), `continue`: render it as the
      # library's "go on, unchanged". It consumes no scripted turn.
      def ask_auxiliary(name, call)
        answer = ask('model', 'call' => call.merge('kind' => 'auxiliary', 'auxiliary' => name))
        raise UnexpectedModelCall, (answer['error'] || 'no answer') if answer['error'] || answer['auxiliary'].nil?

        answer['auxiliary']
      end

      # The person's answer to the library's approval callback for the call `name(args)`
      # (`approval_form: "callback"` in the welcome): `yes`, `no`, free text, or an edit as JSON
      # text; `read_approval` reads it.
      def ask_approval(name, args, call_id = nil)
        ask('approve', 'name' => name, 'args' => wire(args), 'call_id' => call_id)['response']
      end

      # A person's answer (an approval's, or a resume's `response`) read as the suite means it:
      # `{'decision' => 'approve' | 'reject' | 'message', 'text' => ...}`, or an edit,
      # `{'decision' => 'edit', 'name' => ..., 'args' => ...}` (conformance.translate.approval).
      def read_approval(response)
        word = response.strip.downcase
        return { 'decision' => word.start_with?('y') ? 'approve' : 'reject', 'text' => response } if %w[yes y no n].include?(word)

        edit = begin
          JSON.parse(response, max_nesting: false)
        rescue JSON::ParserError, SystemStackError
          nil
        end
        edit = edit['edit'] if edit.is_a?(Hash)
        return { 'decision' => 'message', 'text' => response } unless edit.is_a?(Hash)

        { 'decision' => 'edit', 'text' => response, 'name' => edit['name'].is_a?(String) ? edit['name'] : nil,
          'args' => edit['args'] }
      end

      # Runs the suite's tool `name` with `args` and returns its result; raises ToolError (with the
      # tool's exception name as `type`) when the tool raised. Args nested deeper than a protocol
      # message may be travel as their JSON text (`args_json`), which the suite parses to any
      # depth: the library's handing them over is judged, not the protocol's.
      def call_tool(name, args)
        deep = depth(args, DEEPEST) > DEEPEST
        answer = ask('tool', 'name' => name, **(deep ? { 'args' => nil, 'args_json' => generate_deep(args) } : { 'args' => args }))
        error = answer['error']
        raise ToolError.new(error['type'], error['message']) if error

        answer['result']
      end

      # A `hang` fault's notice: the request's own timeout in seconds (nil without one), which the
      # suite passes on the run's model clock. Send it, then fail the request as that timeout would.
      def notify_hang(timeout)
        run = current_run or raise ArgumentError, 'a hang notice outside of any run'
        send_message('type' => 'hang', 'run' => run, 'timeout' => timeout)
      end

      # A retry's wait, on the run's model clock (NET-1), instead of sleeping.
      def notify_sleep(seconds)
        run = current_run or raise ArgumentError, 'a sleep notice outside of any run'
        send_message('type' => 'sleep', 'run' => run, 'seconds' => seconds)
      end

      # A scripted HTTP fault (a `fault` turn with a status) as the endpoint answers it: the status,
      # its headers (Retry-After) and an error body that says what failed in words, never the status
      # code (as server.py does), as [status, headers, body].
      def fault_response(turn)
        status = Integer(turn['fault'])
        headers = { 'content-type' => 'application/json' }
        headers['retry-after'] = turn['retry_after'].to_s unless turn['retry_after'].nil?
        body = JSON.generate('error' => { 'message' => "scripted fault: #{reason_phrase(status)}" })
        [status, headers, body]
      end

      # An exception as the protocol's ErrorInfo.
      def error_info(error, kind: 'other', fields: {})
        type = error.is_a?(ToolError) ? error.type : error.class.name.to_s.split('::').last
        { 'type' => type, 'message' => error.message.to_s, 'kind' => kind, 'fields' => fields }
      end

      # A value as a protocol message may carry it (a step's `tool_args`): nested deeper than the
      # suite parses a message, its JSON text.
      def wire(value)
        depth(value, DEEPEST) > DEEPEST ? generate_deep(value) : value
      end

      # `value` as JSON text without recursion: JSON.generate recurses, and a run's thread has a
      # small stack (it overflows near a few thousand levels; ARGS-5 sends a hundred thousand).
      def generate_deep(value)
        out = +''
        stack = [[value, false]]
        until stack.empty?
          item, text = stack.pop
          next out << item if text

          case item
          when Hash, Array
            open, close = item.is_a?(Hash) ? %w[{ }] : %w[[ ]]
            out << open
            stack.push([close, true])
            entries = item.is_a?(Hash) ? item.to_a : item.map { |child| [nil, child] }
            entries.each_with_index.reverse_each do |(key, child), i|
              stack.push([child, false])
              stack.push(["#{JSON.generate(key.to_s)}:", true]) if item.is_a?(Hash)
              stack.push([',', true]) if i.positive?
            end
          else
            out << JSON.generate(item)
          end
        end
        out
      end

      # The welcome's `dependencies`: with a `lockfile` (the library's Gemfile.lock, by default the
      # one where the suite runs), the locked version of each gem its DEPENDENCIES name, "not
      # installed" for one it does not lock; without one, every gem this process loaded that is not
      # one of Ruby's default gems. The report then names what exactly was judged.
      def installed_versions(lockfile = 'Gemfile.lock')
        unless File.file?(lockfile)
          return Gem.loaded_specs.values.reject(&:default_gem?).to_h { |spec| [spec.name, spec.version.to_s] }
        end

        locked, direct, section = {}, [], nil
        File.foreach(lockfile, chomp: true) do |line|
          section = line unless line.start_with?(' ') || line.empty?
          if (spec = line.match(/\A {4}([^\s(]+) \(([^)]+)\)\z/))
            locked[spec[1]] = spec[2]
          elsif section == 'DEPENDENCIES' && (dependency = line.match(/\A {2}([^\s!(]+)/))
            direct << dependency[1]
          end
        end
        direct.to_h { |name| [name, locked.fetch(name, 'not installed')] }
      end

      # A value as JSON data (what JSON cannot hold becomes its text).
      def json(value)
        JSON.parse(JSON.generate(value, max_nesting: false), max_nesting: false)
      rescue StandardError
        value.to_s
      end

      # A value as the text a message shows: a String as it is, anything else as JSON.
      def text(value)
        value.is_a?(String) ? value : JSON.generate(value)
      end

      # render.user_message: the one input's text, or `name: value` lines in the inputs' order.
      def user_message(inputs)
        return text(inputs.values.first) if inputs.size == 1

        inputs.map { |name, value| "#{name}: #{text(value)}" }.join("\n")
      end

      # FinalTurn.reply_text: the one output's text, or a JSON object of them all.
      def reply_text(outputs)
        outputs.size == 1 ? text(outputs.values.first) : JSON.generate(outputs)
      end

      # render.reply_outputs: the reply under the signature's one output name ("answer" when it
      # names none), or the JSON object of several.
      def reply_outputs(signature, reply)
        names = (signature['outputs'] || []).map { |field| field['name'] }
        names = ['answer'] if names.empty?
        if names.size > 1 && reply.is_a?(String)
          values = begin
            JSON.parse(reply)
          rescue JSON::ParserError
            nil
          end
          return values if values.is_a?(Hash)
        end
        { names.first => json(reply) }
      end

      JSON_TYPES = { 'str' => 'string', 'int' => 'integer', 'float' => 'number', 'bool' => 'boolean',
                     'list' => 'array', 'dict' => 'object' }.freeze

      # ToolSpec.json_schema: a suite tool's parameters as a JSON schema, every one required.
      def json_schema(tool)
        params = tool['parameters'] || []
        { 'type' => 'object',
          'properties' => params.to_h do |param|
            [param['name'], { 'type' => JSON_TYPES[param['type']], 'description' => param['description'] }]
          end,
          'required' => params.map { |param| param['name'] }, 'additionalProperties' => false }
      end

      # Serves the suite until it says stop (or closes stdin).
      def serve(handlers)
        $stdin.each_line do |line|
          message = JSON.parse(line, max_nesting: false)
          case message['type']
          when 'turn', 'observation', 'approval'
            queue = @waiting_lock.synchronize { @waiting.delete(message['id']) }
            queue&.push(message)
          when 'stop'
            send_message('type' => 'done', 'id' => message['id'])
            exit!(0) # the library's threads end with the process
          else
            Thread.new(message) { |command| reply(handlers, command) }
          end
        end
        exit!(0)
      end

      private

      def reply(handlers, command)
        payload = carry_out(handlers, command)
        send_message({ 'type' => REPLIES.fetch(command['type']), 'id' => command['id'] }.merge(payload))
      rescue Exception => e # rubocop:disable Lint/RescueException -- any harness failure is reported
        send_message('type' => 'failed', 'id' => command['id'],
                     'message' => ([e.full_message(highlight: false)]).join)
      end

      def carry_out(handlers, command)
        case command['type']
        when 'hello'
          { 'protocol' => PROTOCOL }.merge(handlers.hello(command))
        when 'run', 'resume'
          with_run(command['run']) { handlers.public_send(command['type'], command) }
        when 'run_concurrently'
          threads = command['runs'].map do |entry|
            Thread.new(entry) { |e| with_run(e['run']) { handlers.run(e)['outcome'] } }
          end
          { 'outcomes' => threads.map(&:value) }
        else
          name = command['type']
          return DEFAULTS.fetch(name) if !handlers.respond_to?(name) && DEFAULTS.key?(name)
          raise NotImplementedError, "this harness has no #{name} command" unless handlers.respond_to?(name)

          handlers.public_send(name, command) || {}
        end
      end

      def ask(type, fields)
        run = current_run or raise ArgumentError, "a #{type} request outside of any run"
        queue = Queue.new
        id = @waiting_lock.synchronize do
          @next_id += 1
          "#{type}-#{@next_id}".tap { |key| @waiting[key] = queue }
        end
        send_message({ 'type' => type, 'id' => id, 'run' => run }.merge(fields))
        queue.pop
      end

      def send_message(message)
        line = JSON.generate(message, max_nesting: false)
        @write_lock.synchronize { @out.write(line, "\n") }
      end

      def depth(value, limit)
        children = case value
                   when Hash then value.values
                   when Array then value
                   else return 0
                   end
        return 1 if limit <= 0

        1 + (children.map { |child| depth(child, limit - 1) }.max || 0)
      end

      REASONS = {
        400 => 'Bad Request', 401 => 'Unauthorized', 403 => 'Forbidden', 404 => 'Not Found',
        408 => 'Request Timeout', 409 => 'Conflict', 413 => 'Payload Too Large', 422 => 'Unprocessable Entity',
        429 => 'Too Many Requests', 500 => 'Internal Server Error', 502 => 'Bad Gateway',
        503 => 'Service Unavailable', 504 => 'Gateway Timeout'
      }.freeze

      def reason_phrase(status)
        REASONS.fetch(status) { status >= 500 ? 'server error' : 'client error' }
      end
    end
  end
end
