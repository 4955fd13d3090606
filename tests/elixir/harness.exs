# An Elixir harness for the suite's own tests: binds the tiny loop of loop.ex through the Elixir
# protocol module (harnesses/lib/protocol.ex), as an Elixir library's maintainers would bind theirs:
#
#   pytest --impl "cmd:elixir tests/elixir/harness.exs"
#
# Only the translation is written here; the protocol module does the wire.

Code.require_file("../../harnesses/lib/protocol.ex", __DIR__)
Code.require_file("loop.ex", __DIR__)

defmodule Harness do
  alias ReactConformance.Protocol, as: P

  @claimed ~w[max-steps-return cap-summary per-call-cap repeated-error-stop parallel-tool-calls tool-approval
              approval-edit async]
  @not_claimed %{
    "signature" => "a native loop: no signature, adapters or extraction call",
    "adapters" => "a native loop: the replies are tool calls, in no adapter format",
    "max-steps-error" => "on the cap the run returns; it never raises",
    "max-steps-extract" => "on the cap the run returns; no extra call writes the outputs",
    "ask-user" => "no built-in tool to ask the user",
    "durable-approvals" => "approval is a callback during the run: there is no pause to keep",
    "streaming" => "no event stream",
    "lm-retry" => "the model is a plain function: no client, no retries",
    "http" => "the model is a plain function: no HTTP client"
  }

  # With OBSERVER=1 the loop runs its observation processor: an auxiliary model call per tool result.
  defp observer?, do: System.get_env("OBSERVER") == "1"

  def hello(_command) do
    auxiliary = if observer?(), do: %{"observation" => "the loop may rewrite each tool result with a model call"}, else: %{}
    %{"name" => "elixir-loop", "version" => "0", "capabilities" => @claimed, "not_claimed" => @not_claimed,
      "known_failures" => %{}, "auxiliary_calls" => auxiliary, "approval_form" => "callback"}
  end

  # The agents built, by the suite's id, in a table every command's process reads (made by the
  # harness's own process, below, which outlives them).
  @agents :elixir_loop_agents
  def agents_table, do: @agents

  def build(command) do
    spec = command["spec"]
    agent = TinyLoop.new(tools_of(spec), nil, max_steps: spec["max_steps"],
                         instructions: spec["signature"]["instructions"] || "",
                         needs_approval: for(t <- spec["tools"], t["interruptible"], do: t["name"]))
    :ets.insert(@agents, {command["agent"], agent, spec})
    %{"error" => nil}
  rescue
    error -> %{"error" => P.error_info(error)}
  end

  def run(command) do
    [{_, agent, spec}] = :ets.lookup(@agents, command["agent"])
    call = command["call"]
    # Each run its own model seam; the tools and cap are the agent's. The async form calls them in
    # a Task of the loop's own, which knows the run id through `$callers`.
    agent = %{agent | model: seam(), observer: if(observer?(), do: &observe/2), approve: &approve/3}
    user = P.user_message(call["inputs"])

    try do
      if call["mode"] == "async",
        do: TinyLoop.await(TinyLoop.run_async(agent, user, max_steps: call["max_steps"])),
        else: TinyLoop.run(agent, user, max_steps: call["max_steps"])
    rescue
      error -> %{"outcome" => %{"error" => P.error_info(error)}}
    else
      result ->
        # The caller's copy of what the call returned, which `mutate_last_result` changes.
        :ets.insert(@agents, {{:last, command["agent"]}, result})
        outputs = if result.output == nil, do: nil, else: P.reply_outputs(spec["signature"], result.output)
        %{"outcome" => %{"outputs" => outputs, "trajectory" => Enum.map(result.steps, &step_of/1),
                         "stop_reason" => result.stop_reason, "iterations" => result.steps_used,
                         "fallback" => result.message, "tool_errors" => result.tool_errors}}
    end
  end

  # What a run handed out is immutable in Elixir: no caller can change it in place. The caller's
  # change is its own copy rebound to changed steps, as an Elixir caller would (TRJ-2 judges that
  # the agent and its next run are unaffected).
  def mutate_last_result(%{"agent" => agent, "marker" => marker}) do
    case :ets.lookup(@agents, {:last, agent}) do
      [{_, result}] ->
        marked = Enum.map(result.steps, &Map.merge(&1, %{"thought" => marker, "observation" => marker}))
        extra = %{"thought" => marker, "tool_name" => marker, "tool_args" => %{}, "observation" => marker}
        :ets.insert(@agents, {{:last, agent}, %{result | steps: marked ++ [extra]}})
        %{"changed" => ["result.steps (#{length(result.steps)} steps, rebound: Elixir data is immutable)"]}

      [] ->
        %{"changed" => []}
    end
  end

  # The suite's tools, declared in the loop's form; each call goes to the suite.
  defp tools_of(spec) do
    for t <- spec["tools"] do
      schema = P.json_schema(t)
      %TinyLoop.Tool{name: t["name"], description: t["description"], schema: schema,
                     function: fn args -> P.call_tool(t["name"], args) end}
    end
  end

  # The loop's model: each request logged as the model saw it, answered from the script.
  defp seam do
    counter = :counters.new(1, [])

    fn messages, tools ->
      shown =
        for m <- messages do
          calls = for c <- m["tool_calls"] || [], do: "call #{c["name"]}(#{c["arguments"]})"
          %{"role" => m["role"], "content" => String.trim(Enum.join([to_string(m["content"]) | calls], "\n"))}
        end

      turn = P.ask_model(%{"kind" => "step", "adapter" => "native", "messages" => shown, "tools" => tools})
      :counters.add(counter, 1, 1)
      number = :counters.get(counter, 1)

      case turn["kind"] do
        "step" ->
          calls =
            for {c, i} <- Enum.with_index([turn | turn["parallel"] || []]) do
              args = c["raw_tool_args"] || P.encode!(c["tool_args"])
              %TinyLoop.ToolCall{id: "call_#{number}_#{i}", name: c["tool_name"], arguments: args}
            end

          %TinyLoop.Reply{content: turn["thought"], tool_calls: calls}

        kind when kind in ["final", "extract"] ->
          %TinyLoop.Reply{content: P.reply_text(turn["outputs"])}

        _ ->
          raise RuntimeError, "the model's transport failed: #{turn["fault"]}"
      end
    end
  end

  defp step_of(step) do
    %{"thought" => if(step["thought"] in [nil, ""], do: nil, else: step["thought"]),
      "tool_name" => step["tool_name"], "tool_args" => P.wire(step["tool_args"]),
      "observation" => step["observation"], "is_error" => step["failed"], "call_id" => step["call_id"]}
  end

  # The loop's approval callback: the person's answer, in the loop's terms.
  defp approve(name, args, call_id) do
    answer = P.read_approval(P.ask_approval(name, args, call_id))

    case answer["decision"] do
      "approve" -> true
      "reject" -> false
      "edit" -> %{"name" => answer["name"], "args" => answer["args"]}
      _ -> answer["text"]
    end
  end

  # The observation processor's model call: `continue` keeps the observation as it is.
  defp observe(tool, observation) do
    call = %{"kind" => "auxiliary", "adapter" => "other", "tools" => nil,
             "messages" => [%{"role" => "user", "content" => "Rewrite the result of #{tool}, or say continue: #{observation}"}]}
    answer = P.ask_auxiliary("observation", call)
    if answer == "continue", do: observation, else: answer
  end
end

:ets.new(Harness.agents_table(), [:named_table, :public])
ReactConformance.Protocol.serve(Harness)
