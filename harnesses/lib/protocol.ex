# The react-conformance harness protocol for Elixir harnesses: JSON lines on stdio. It mirrors
# harnesses/lib/protocol.rb and protocol.mjs; the message shapes are harnesses/protocol.schema.json,
# and docs/writing-a-harness.md explains them.
#
#     Code.require_file("protocol.ex", __DIR__)      # or the path to this file
#     ReactConformance.Protocol.serve(MyHarness)
#
# `serve(handlers)` reads the suite's commands from stdin and writes the replies to stdout. The
# handlers module has a function per command (`hello`, `build`, `run`, `mutate_last_result`, and
# where the library has them `configure`, `global_adapter`, `resume`, `step_tool_names`), each
# taking the command (a map with string keys) and returning the reply's payload (a map). While a
# `run` or `resume` is in progress, `ask_model(call)` and `call_tool(name, args)` send the
# harness's own requests and wait for the suite's answer. Each command runs in a process of its
# own, which knows its run id; so do the processes it starts with `Task` (through `$callers`), and
# any other process the library starts passes it on with `with_run(current_run(), fun)`.
#
# JSON: Elixir's own `JSON` (1.18 and later), else `Jason`, else Erlang's `jiffy` (Debian's
# erlang-jiffy), or the module given as `serve(handlers, json: Module)`, having `encode!/1` and
# `decode!/1`.

defmodule ReactConformance.Protocol do
  # The protocol version: the binding contract's (conformance/binding.py, CONTRACT_VERSION).
  @protocol 3

  # What each command is answered with.
  @replies %{
    "hello" => "welcome", "configure" => "done", "global_adapter" => "adapter", "build" => "built",
    "run" => "ran", "resume" => "ran", "run_concurrently" => "ran_all", "step_tool_names" => "names",
    "mutate_last_result" => "done"
  }

  # The replies to the commands a library without the feature need not implement: no global
  # adapter, no constraint on the step's tool names (the suite reads the declared tools).
  @defaults %{"global_adapter" => %{"adapter" => nil}, "step_tool_names" => %{"names" => nil}}

  # The suite's JSON parser refuses a message nested deeper than about 200 levels.
  @deepest 150

  @run_key :react_conformance_run

  defmodule UnexpectedModelCall do
    @moduledoc "Raised by `ask_model` when the suite did not expect the request: the model call must fail."
    defexception [:message]
  end

  defmodule ToolError do
    @moduledoc "A tool's error as the suite sent it: `type` is the tool's exception name."
    defexception [:type, :message]
  end

  defmodule Jiffy do
    @moduledoc "JSON through Erlang's jiffy (Debian's erlang-jiffy), with null as nil."
    def encode!(value), do: IO.iodata_to_binary(:jiffy.encode(value, [:use_nil]))
    def decode!(text), do: :jiffy.decode(text, [:return_maps, :use_nil])
  end

  @doc "The id of the run the calling process belongs to (nil outside a run)."
  def current_run do
    Process.get(@run_key) ||
      Enum.find_value(Process.get(:"$callers", []), fn pid ->
        case Process.info(pid, :dictionary) do
          {:dictionary, dictionary} -> with {_, run} <- List.keyfind(dictionary, @run_key, 0), do: run
          nil -> nil
        end
      end)
  end

  @doc "Runs `fun` as part of run `run` (in a process the library starts itself)."
  def with_run(run, fun) do
    before = Process.put(@run_key, run)

    try do
      fun.()
    after
      if before == nil, do: Process.delete(@run_key), else: Process.put(@run_key, before)
    end
  end

  @doc """
  The scripted turn answering `call` (an LMCall as a map); raises UnexpectedModelCall if the
  script did not expect it.
  """
  def ask_model(call) do
    answer = ask("model", %{"call" => call})

    if answer["error"] || answer["turn"] == nil,
      do: raise(UnexpectedModelCall, message: answer["error"] || "no turn"),
      else: answer["turn"]
  end

  @doc """
  The standing answer to an auxiliary model call (one the harness names in its welcome's
  `auxiliary_calls`: an observation processor, a planning call), `continue`: render it as the
  library's "go on, unchanged". It consumes no scripted turn.
  """
  def ask_auxiliary(name, call) do
    answer = ask("model", %{"call" => Map.merge(call, %{"kind" => "auxiliary", "auxiliary" => name})})

    if answer["error"] || answer["auxiliary"] == nil,
      do: raise(UnexpectedModelCall, message: answer["error"] || "no answer"),
      else: answer["auxiliary"]
  end

  @doc """
  The person's answer to the library's approval callback for the call `name(args)`
  (`approval_form: "callback"` in the welcome): `yes`, `no`, free text, or an edit as JSON text;
  `read_approval` reads it.
  """
  def ask_approval(name, args, call_id \\ nil),
    do: ask("approve", %{"name" => name, "args" => wire(args), "call_id" => call_id})["response"]

  @doc """
  A person's answer (an approval's, or a resume's `response`) read as the suite means it:
  `%{"decision" => "approve" | "reject" | "message", "text" => ...}`, or an edit,
  `%{"decision" => "edit", "name" => ..., "args" => ...}` (conformance.translate.approval).
  """
  def read_approval(response) do
    word = response |> String.trim() |> String.downcase()

    edit =
      try do
        case decode!(response) do
          %{"edit" => edit} when is_map(edit) -> edit
          _ -> nil
        end
      catch
        _, _ -> nil
      end

    cond do
      word in ["yes", "y"] -> %{"decision" => "approve", "text" => response}
      word in ["no", "n"] -> %{"decision" => "reject", "text" => response}
      edit != nil ->
        name = if is_binary(edit["name"]), do: edit["name"]
        %{"decision" => "edit", "text" => response, "name" => name, "args" => edit["args"]}
      true -> %{"decision" => "message", "text" => response}
    end
  end

  @doc """
  Runs the suite's tool `name` with `args` and returns its result; raises ToolError (with the
  tool's exception name as `type`) when the tool raised. Args nested deeper than a protocol
  message may be travel as their JSON text (`args_json`), which the suite parses to any depth.
  """
  def call_tool(name, args) do
    fields =
      if depth(args, @deepest) > @deepest,
        do: %{"args" => nil, "args_json" => encode!(args)},
        else: %{"args" => args}

    case ask("tool", Map.put(fields, "name", name)) do
      %{"error" => %{"type" => type, "message" => message}} -> raise ToolError, type: type, message: message
      answer -> answer["result"]
    end
  end

  @doc """
  A `hang` fault's notice: the request's own timeout in seconds (nil without one), which the suite
  passes on the run's model clock. Send it, then fail the request as that timeout would.
  """
  def notify_hang(timeout) do
    run = current_run() || raise ArgumentError, "a hang notice outside of any run"
    send_message(%{"type" => "hang", "run" => run, "timeout" => timeout})
  end

  @doc "A retry's wait, on the run's model clock (NET-1), instead of sleeping."
  def notify_sleep(seconds) do
    run = current_run() || raise ArgumentError, "a sleep notice outside of any run"
    send_message(%{"type" => "sleep", "run" => run, "seconds" => seconds})
  end

  @reasons %{
    400 => "Bad Request", 401 => "Unauthorized", 403 => "Forbidden", 404 => "Not Found",
    408 => "Request Timeout", 409 => "Conflict", 413 => "Payload Too Large",
    422 => "Unprocessable Entity", 429 => "Too Many Requests", 500 => "Internal Server Error",
    502 => "Bad Gateway", 503 => "Service Unavailable", 504 => "Gateway Timeout"
  }

  @doc """
  A scripted HTTP fault (a `fault` turn with a status) as the endpoint answers it: the status, its
  headers (retry-after) and an error body that says what failed in words, never the status code
  (as server.py does), as {status, headers, body}.
  """
  def fault_response(turn) do
    status = String.to_integer(to_string(turn["fault"]))
    headers = [{"content-type", "application/json"}]
    headers = if turn["retry_after"] == nil, do: headers, else: headers ++ [{"retry-after", to_string(turn["retry_after"])}]
    reason = Map.get(@reasons, status, if(status >= 500, do: "server error", else: "client error"))
    {status, headers, codec().encode!(%{"error" => %{"message" => "scripted fault: #{reason}"}})}
  end

  @doc "An exception as the protocol's ErrorInfo."
  def error_info(error, kind \\ "other", fields \\ %{}) do
    type =
      case error do
        %ToolError{type: type} -> type
        %{__struct__: struct} -> struct |> Module.split() |> List.last()
      end

    %{"type" => type, "message" => Exception.message(error), "kind" => kind, "fields" => fields}
  end

  @doc """
  A value as a protocol message may carry it (a step's `tool_args`): nested deeper than the suite
  parses a message, its JSON text.
  """
  def wire(value), do: if(depth(value, @deepest) > @deepest, do: encode!(value), else: value)

  @doc "`value` as JSON text, through the JSON library the protocol uses."
  def encode!(value), do: codec().encode!(value)

  @doc "JSON text as data, through the JSON library the protocol uses."
  def decode!(text), do: codec().decode!(text)

  # The applications of Erlang/OTP and of Elixir itself: the runtime, not the library's dependencies.
  @runtime_apps ~w(elixir eex ex_unit iex logger mix)a

  @doc """
  The welcome's `dependencies`: with a `lockfile` (the library's mix.lock, by default the one where
  the suite runs), the locked version of every package it holds (a git dependency's ref); without
  one, every application loaded in this VM but those of Erlang/OTP and Elixir itself. The report
  then names what exactly was judged.
  """
  def installed_versions(lockfile \\ "mix.lock") do
    if File.regular?(lockfile) do
      # As Mix reads it: mix.lock quotes every key.
      quoted = Code.string_to_quoted!(File.read!(lockfile), warn_on_unnecessary_quotes: false)
      {locked, _} = Code.eval_quoted(quoted)
      Map.new(locked, fn {name, entry} -> {to_string(name), locked_version(entry)} end)
    else
      for {app, _, vsn} <- Application.loaded_applications(),
          app not in @runtime_apps and not otp_app?(app),
          into: %{},
          do: {to_string(app), to_string(vsn)}
    end
  end

  defp otp_app?(app) do
    case :code.lib_dir(app) do
      dir when is_list(dir) -> List.starts_with?(dir, :code.root_dir())
      _ -> false
    end
  end

  defp locked_version(entry) when elem(entry, 0) == :hex, do: elem(entry, 2)
  defp locked_version(entry) when elem(entry, 0) == :git, do: "git #{elem(entry, 2)}"
  defp locked_version(entry), do: inspect(entry)

  @doc "A value as JSON data (what JSON cannot hold becomes its text)."
  def json(value) do
    codec().decode!(codec().encode!(value))
  rescue
    _ -> inspect(value)
  end

  @json_types %{"str" => "string", "int" => "integer", "float" => "number", "bool" => "boolean",
                "list" => "array", "dict" => "object"}

  @doc "A value as the text a message shows: a string as it is, anything else as JSON."
  def text(value) when is_binary(value), do: value
  def text(value), do: encode!(value)

  @doc "render.user_message: the one input's text, or `name: value` lines (in key order)."
  def user_message(inputs) when map_size(inputs) == 1, do: inputs |> Map.values() |> hd() |> text()
  def user_message(inputs), do: Enum.map_join(inputs, "\n", fn {name, value} -> "#{name}: #{text(value)}" end)

  @doc "FinalTurn.reply_text: the one output's text, or a JSON object of them all."
  def reply_text(outputs) when map_size(outputs) == 1, do: outputs |> Map.values() |> hd() |> text()
  def reply_text(outputs), do: encode!(outputs)

  @doc """
  render.reply_outputs: the reply under the signature's one output name ("answer" when it names
  none), or the JSON object of several.
  """
  def reply_outputs(signature, reply) do
    names = Enum.map(signature["outputs"] || [], & &1["name"])
    names = if names == [], do: ["answer"], else: names

    values =
      if length(names) > 1 and is_binary(reply) do
        try do
          decode!(reply)
        catch
          _, _ -> nil
        end
      end

    if is_map(values), do: values, else: %{hd(names) => json(reply)}
  end

  @doc "ToolSpec.json_schema: a suite tool's parameters as a JSON schema, every one required."
  def json_schema(tool) do
    params = tool["parameters"] || []
    properties = Map.new(params, &{&1["name"], %{"type" => @json_types[&1["type"]], "description" => &1["description"]}})
    %{"type" => "object", "properties" => properties, "required" => Enum.map(params, & &1["name"]),
      "additionalProperties" => false}
  end

  @doc "Serves the suite until it says stop (or closes stdin)."
  def serve(handlers, options \\ []) do
    Code.ensure_loaded!(handlers)
    codec = Keyword.get_lazy(options, :json, &default_codec/0)
    :persistent_term.put({__MODULE__, :json}, codec)
    # Only protocol messages may reach the suite's protocol stream: every process a command runs
    # in (with those it starts) writes to stderr, where whatever the library prints belongs.
    :persistent_term.put({__MODULE__, :out}, protocol_out())
    log_to_stderr()
    :ets.new(__MODULE__, [:named_table, :public])
    loop(handlers)
  end

  # The suite gives the harness a pipe of its own for the protocol (its file descriptor in
  # REACT_CONFORMANCE_PROTOCOL_FD): the standard output, file descriptor 1, which a process outside
  # the commands (under the `user` group leader), a port's program or a NIF still reach, is then a
  # log the suite keeps with stderr. A suite that gives no pipe reads the standard output.
  defp protocol_out do
    fd = System.get_env("REACT_CONFORMANCE_PROTOCOL_FD")
    System.delete_env("REACT_CONFORMANCE_PROTOCOL_FD")

    with true <- is_binary(fd) and fd =~ ~r/^[0-9]+$/,
         {:ok, pipe} <- File.open("/dev/fd/" <> fd, [:write, :utf8]) do
      pipe
    else
      _ ->
        out = Process.group_leader()
        :ok = :io.setopts(out, binary: true, encoding: :unicode)
        out
    end
  end

  # Logger writes to the standard output by default (its console backend before Elixir 1.15,
  # Erlang's default handler since), and a library's log lines would corrupt the protocol: they
  # go to stderr. A handler's output cannot be changed in place: it is replaced, as it was.
  defp log_to_stderr do
    if :console in Application.get_env(:logger, :backends, []),
      do: Logger.configure_backend(:console, device: :standard_error)

    case :logger.get_handler_config(:default) do
      {:ok, %{module: :logger_std_h, config: %{type: :standard_io}} = handler} ->
        :ok = :logger.remove_handler(:default)
        :ok = :logger.add_handler(:default, :logger_std_h, put_in(handler.config.type, :standard_error))

      _ ->
        :ok
    end
  end

  defp loop(handlers) do
    case IO.read(:stdio, :line) do
      :eof ->
        System.halt(0)

      line when is_binary(line) ->
        message = codec().decode!(String.trim_trailing(line, "\n"))

        case message["type"] do
          type when type in ["turn", "observation", "approval"] ->
            for {_, pid} <- :ets.take(__MODULE__, message["id"]), do: send(pid, {__MODULE__, message})

          "stop" ->
            send_message(%{"type" => "done", "id" => message["id"]})
            System.halt(0)

          _ ->
            stderr = Process.whereis(:standard_error)

            spawn(fn ->
              Process.group_leader(self(), stderr)
              reply(handlers, message)
            end)
        end

        loop(handlers)
    end
  end

  defp reply(handlers, command) do
    payload = carry_out(handlers, command)
    send_message(Map.merge(%{"type" => Map.fetch!(@replies, command["type"]), "id" => command["id"]}, payload))
  catch
    kind, reason ->
      send_message(%{"type" => "failed", "id" => command["id"],
                     "message" => Exception.format(kind, reason, __STACKTRACE__)})
  end

  defp carry_out(handlers, %{"type" => "hello"} = command),
    do: Map.merge(%{"protocol" => @protocol}, handlers.hello(command))

  defp carry_out(handlers, %{"type" => type} = command) when type in ["run", "resume"],
    do: with_run(command["run"], fn -> apply(handlers, String.to_atom(type), [command]) end)

  # A run that raises is the command's `failed` reply, as in a `run`: the Task returns what it
  # raised, for the command's process to raise again (a Task that raised would take that process,
  # linked to it, down with it: no reply at all).
  defp carry_out(handlers, %{"type" => "run_concurrently"} = command) do
    tasks =
      for entry <- command["runs"] do
        Task.async(fn ->
          try do
            {:ok, with_run(entry["run"], fn -> handlers.run(entry)["outcome"] end)}
          catch
            kind, reason -> {:raised, kind, reason, __STACKTRACE__}
          end
        end)
      end

    outcomes =
      for task <- tasks do
        case Task.await(task, :infinity) do
          {:ok, outcome} -> outcome
          {:raised, kind, reason, stacktrace} -> :erlang.raise(kind, reason, stacktrace)
        end
      end

    %{"outcomes" => outcomes}
  end

  defp carry_out(handlers, %{"type" => name} = command) do
    function = String.to_atom(name)

    cond do
      function_exported?(handlers, function, 1) -> apply(handlers, function, [command]) || %{}
      Map.has_key?(@defaults, name) -> @defaults[name]
      true -> raise ArgumentError, "this harness has no #{name} command"
    end
  end

  defp ask(type, fields) do
    run = current_run() || raise ArgumentError, "a #{type} request outside of any run"
    id = "#{type}-#{System.unique_integer([:positive, :monotonic])}"
    :ets.insert(__MODULE__, {id, self()})
    send_message(Map.merge(%{"type" => type, "id" => id, "run" => run}, fields))

    receive do
      {__MODULE__, %{"id" => ^id} = answer} -> answer
    end
  end

  # One write of the whole line: the standard output's server writes each request at once.
  defp send_message(message) do
    IO.write(:persistent_term.get({__MODULE__, :out}), [codec().encode!(message), "\n"])
  end

  # Outside `serve` (a helper called from a script or a test), the default library.
  defp codec, do: :persistent_term.get({__MODULE__, :json}, nil) || default_codec()

  defp default_codec do
    cond do
      Code.ensure_loaded?(JSON) and function_exported?(JSON, :decode!, 1) -> JSON
      Code.ensure_loaded?(Jason) -> Jason
      Code.ensure_loaded?(:jiffy) -> __MODULE__.Jiffy
      true -> raise "no JSON library: Elixir 1.18's JSON, Jason or jiffy (give one as json: Module)"
    end
  end

  defp depth(value, limit) do
    children =
      cond do
        is_map(value) -> Map.values(value)
        is_list(value) -> value
        true -> nil
      end

    cond do
      children == nil -> 0
      limit <= 0 -> 1
      true -> 1 + Enum.reduce(children, 0, &max(depth(&1, limit - 1), &2))
    end
  end
end
