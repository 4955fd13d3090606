# A tiny native tool-calling loop, written for the suite's own tests (as tests/native/loop.py and
# tests/ruby/loop.rb are): the library an Elixir harness binds. The model is a function taking the
# messages and the tool declarations and returning a Reply; the loop runs tools until a reply calls
# none, or the step cap. Its JSON is Erlang's jiffy (Debian's erlang-jiffy).

defmodule TinyLoop do
  # Consecutive similar tool failures (same tool, same error kind) that stop the run.
  @repeated_errors 3

  defmodule Reply, do: defstruct([:content, tool_calls: []])
  defmodule ToolCall, do: defstruct([:id, :name, :arguments])
  defmodule Tool, do: defstruct([:name, :description, :schema, :function])
  defmodule Result, do: defstruct([:output, :stop_reason, :steps_used, :steps, :message, :tool_errors])

  defmodule ArgsError do
    @moduledoc "A tool's arguments that cannot reach it."
    defexception [:message]
  end

  # `observer`, if given, is the library's observation processor: a model call that may rewrite
  # each tool result before the model sees it (nil: none). `needs_approval` names the tools that
  # run only once `approve` (name, args, call id) says true; false or a text rejects the call, a
  # map `%{"name", "args"}` runs that call instead.
  defstruct [:tools, :model, :max_steps, instructions: "", observer: nil, needs_approval: [], approve: nil]

  @json_types %{
    "string" => &is_binary/1, "integer" => &is_integer/1, "number" => &is_number/1,
    "boolean" => &is_boolean/1, "array" => &is_list/1, "object" => &is_map/1
  }

  def new(tools, model, options) do
    %TinyLoop{tools: Map.new(tools, &{&1.name, &1}), model: model, max_steps: options[:max_steps],
              instructions: options[:instructions] || "", observer: options[:observer],
              needs_approval: options[:needs_approval] || []}
  end

  def declarations(agent) do
    for tool <- Map.values(agent.tools) do
      %{"type" => "function",
        "function" => %{"name" => tool.name, "description" => tool.description, "parameters" => tool.schema}}
    end
  end

  # The async form: the run in a Task of the loop's own, where the model, tools and callbacks are
  # called; `await/1` gives its Result, or raises in the caller what the run raised.
  def run_async(agent, user, options \\ []) do
    Task.async(fn ->
      try do
        {:ok, run(agent, user, options)}
      rescue
        error -> {:error, error, __STACKTRACE__}
      end
    end)
  end

  def await(task) do
    case Task.await(task, :infinity) do
      {:ok, result} -> result
      {:error, error, stacktrace} -> reraise error, stacktrace
    end
  end

  # One call with its own budget: until a reply calls no tool, or the cap.
  def run(agent, user, options \\ []) do
    cap = options[:max_steps] || agent.max_steps
    if cap < 1, do: raise(ArgumentError, "max_steps must be at least 1, not #{cap}")
    # A library that prints to stdout, as many do: the protocol module keeps it off the wire.
    IO.puts("tinyloop: a run with a cap of #{cap} steps")

    system = if agent.instructions == "", do: [], else: [%{"role" => "system", "content" => agent.instructions}]
    state = %{messages: system ++ [%{"role" => "user", "content" => user}], steps: [], tried: [],
              errors: [], streak: [], completed: 0}
    step(agent, 1, cap, state)
  end

  defp step(_agent, number, cap, state) when number > cap do
    summary = for {name, n} <- state.tried, n > 0, do: "ran #{name} #{n}×"
    summary = if summary == [], do: "ran no tool", else: Enum.join(summary, ", ")
    message = "I reached the step cap (#{cap} steps) without an answer: #{summary}."
    message = if state.errors == [], do: message, else: message <> " The last tool error: #{elem(List.last(state.errors), 2)}."
    message = if state.completed == 0, do: message <> " No tool completed.", else: message
    result(nil, "max_steps", cap, state, message)
  end

  defp step(agent, number, cap, state) do
    reply = agent.model.(state.messages, declarations(agent))
    calls = for c <- reply.tool_calls, do: %{"id" => c.id, "name" => c.name, "arguments" => c.arguments}
    state = %{state | messages: state.messages ++ [%{"role" => "assistant", "content" => reply.content, "tool_calls" => calls}]}

    if reply.tool_calls == [] do
      result(reply.content, "finish", number, state, nil)
    else
      case Enum.reduce_while(reply.tool_calls, state, &call(agent, reply, &1, &2, number)) do
        {:stopped, result} -> result
        state -> step(agent, number + 1, cap, state)
      end
    end
  end

  defp call(agent, reply, call, state, number) do
    {observation, args, error, ran} = execute(agent, call)
    observation = if agent.observer, do: agent.observer.(call.name, observation), else: observation
    tried = if ran, do: bump(state.tried, call.name), else: state.tried
    step = %{"thought" => reply.content, "tool_name" => call.name, "tool_args" => args,
             "observation" => observation, "failed" => error != nil, "call_id" => call.id}
    state = %{state | tried: tried, completed: state.completed + if(error == nil, do: 1, else: 0),
                      steps: state.steps ++ [step],
                      messages: state.messages ++ [%{"role" => "tool", "tool_call_id" => call.id, "content" => observation}],
                      streak: if(error == nil, do: [], else: state.streak)}

    # Only a tool that ran and raised is a tool error.
    if error == nil or not ran do
      {:cont, state}
    else
      kind = {call.name, error_kind(error)}
      streak = if List.last(state.streak) == kind, do: state.streak ++ [kind], else: [kind]
      state = %{state | errors: state.errors ++ [{call.name, elem(kind, 1), Exception.message(error)}], streak: streak}

      if length(streak) < @repeated_errors do
        {:cont, state}
      else
        message = "I stopped: the tool #{call.name} failed #{length(streak)} times in a row " <>
                    "(#{Exception.message(error)}). Please check its input, or try rephrasing the request."
        {:halt, {:stopped, result(nil, "repeated_tool_errors", number, state, message)}}
      end
    end
  end

  defp result(output, stop_reason, steps_used, state, message) do
    texts = for {tool, kind, message} <- Enum.take(state.errors, -10), do: "#{tool}: #{kind}: #{message}"
    %Result{output: output, stop_reason: stop_reason, steps_used: steps_used, steps: state.steps,
            message: message, tool_errors: texts}
  end

  defp bump(tried, name) do
    if List.keymember?(tried, name, 0),
      do: List.keyreplace(tried, name, 0, {name, elem(List.keyfind(tried, name, 0), 1) + 1}),
      else: tried ++ [{name, 1}]
  end

  defp error_kind(%{type: type}) when is_binary(type), do: type
  defp error_kind(%{__struct__: struct}), do: inspect(struct)

  # The observation, the args as parsed (or the raw text), the error if any, and whether the tool ran.
  defp execute(agent, call, approved \\ false) do
    case Map.fetch(agent.tools, call.name) do
      :error ->
        names = agent.tools |> Map.keys() |> Enum.sort()
        error = %ArgsError{message: "Error: unknown tool #{inspect(call.name)}; the tools are #{inspect(names)}"}
        {error.message, call.arguments, error, false}

      {:ok, tool} ->
        case parse_args(tool, call.arguments) do
          {:error, error} ->
            {"Error: invalid arguments for #{tool.name}: #{error.message}", call.arguments, error, false}

          {:ok, args} ->
            if tool.name in agent.needs_approval and not approved,
              do: ask_approval(agent, tool, call, args),
              else: run_tool(tool, args)
        end
    end
  end

  defp ask_approval(agent, tool, call, args) do
    if agent.approve == nil, do: raise("the tool #{tool.name} needs approval, and no one approves calls")

    case agent.approve.(tool.name, args, call.id) do
      true ->
        run_tool(tool, args)

      # An edited call, validated as the model's would be.
      %{"name" => name, "args" => edited} ->
        arguments = IO.iodata_to_binary(:jiffy.encode(edited, [:use_nil]))
        execute(agent, %ToolCall{call | name: to_string(name), arguments: arguments}, true)

      answer ->
        said = if is_binary(answer), do: ": #{answer}", else: ""
        error = %ArgsError{message: "the person rejected the call of #{tool.name}"}
        {"Error: the person rejected the call of #{tool.name}; it did not run#{said}", args, error, false}
    end
  end

  defp run_tool(tool, args) do
    try do
      tool.function.(args)
    rescue
      error -> {"Error executing #{tool.name}: #{Exception.message(error)}", args, error, true}
    else
      text when is_binary(text) -> {text, args, nil, true}
      value -> {IO.iodata_to_binary(:jiffy.encode(value, [:use_nil])), args, nil, true}
    end
  end

  defp parse_args(tool, text) do
    args =
      try do
        :jiffy.decode(text, [:return_maps, :use_nil])
      catch
        _, reason -> throw({:args, "the arguments are not valid JSON (#{String.slice(inspect(reason), 0, 200)})"})
      end

    unless is_map(args), do: throw({:args, "the arguments must be a JSON object, not #{json_type(args)}"})
    properties = Map.get(tool.schema, "properties", %{})

    for name <- Map.get(tool.schema, "required", []), not Map.has_key?(args, name),
        do: throw({:args, "the field #{inspect(name)} is missing"})

    for {name, value} <- args do
      unless Map.has_key?(properties, name), do: throw({:args, "the field #{inspect(name)} is not an argument of #{tool.name}"})
      expected = properties[name]["type"]
      check = @json_types[expected]
      if check && !check.(value), do: throw({:args, "the field #{inspect(name)} must be of type #{expected}"})
    end

    {:ok, args}
  catch
    {:args, message} -> {:error, %ArgsError{message: message}}
  end

  defp json_type(value) do
    cond do
      is_list(value) -> "array"
      is_binary(value) -> "string"
      is_integer(value) -> "integer"
      is_number(value) -> "number"
      is_boolean(value) -> "boolean"
      value == nil -> "null"
    end
  end
end
