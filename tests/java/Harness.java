// A Java harness for the suite's own tests: binds the tiny loop of TinyLoop.java through the Java
// protocol module (harnesses/lib/java/Protocol.java), as a JVM library's maintainers would bind
// theirs:
//
//   javac -d build harnesses/lib/java/Protocol.java tests/java/*.java
//   pytest --impl "cmd:java -cp build Harness"
//
// Only the translation is written here; the protocol module does the wire.

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;

import reactconformance.Protocol;
import tinyloop.TinyLoop;

public final class Harness implements Protocol.Handlers {
    private static final List<String> CLAIMED = List.of("max-steps-return", "cap-summary", "per-call-cap",
            "repeated-error-stop", "parallel-tool-calls", "tool-approval", "approval-edit", "async");

    private static final Map<String, Object> NOT_CLAIMED = Protocol.object(
            "signature", "a native loop: no signature, adapters or extraction call",
            "adapters", "a native loop: the replies are tool calls, in no adapter format",
            "max-steps-error", "on the cap the run returns; it never raises",
            "max-steps-extract", "on the cap the run returns; no extra call writes the outputs",
            "ask-user", "no built-in tool to ask the user",
            "durable-approvals", "approval is a callback during the run: there is no pause to keep",
            "streaming", "no event stream",
            "lm-retry", "the model is a plain function: no client, no retries",
            "http", "the model is a plain function: no HTTP client");

    // With OBSERVER=1 the loop runs its observation processor: an auxiliary model call per tool result.
    private static final boolean OBSERVER = "1".equals(System.getenv("OBSERVER"));

    /** The suite's tool error in the loop's terms: its kind is the tool's exception name. */
    static final class ToolFailure extends Exception implements TinyLoop.Typed {
        private static final long serialVersionUID = 1L;
        private final String kind;

        ToolFailure(Protocol.ToolError error) {
            super(error.getMessage());
            this.kind = error.type();
        }

        @Override
        public String kind() {
            return kind;
        }
    }

    private static final class Agent {
        final Map<String, Object> spec;
        TinyLoop.Result last;

        Agent(Map<String, Object> spec) {
            this.spec = spec;
        }
    }

    private final Map<String, Agent> agents = new ConcurrentHashMap<>();

    /** The suite's tools in the loop's form; each call goes to the suite, as part of `run`. */
    private static List<TinyLoop.Tool> tools(String run, Map<String, Object> spec) {
        List<TinyLoop.Tool> out = new ArrayList<>();
        for (Object t : Protocol.asList(spec.get("tools"))) {
            Map<String, Object> tool = Protocol.asObject(t);
            String name = Protocol.asString(tool.get("name"));
            Map<String, Object> schema = Protocol.jsonSchema(tool);
            // The loop's async form calls tools on a thread of its own: each call carries the run.
            out.add(new TinyLoop.Tool(name, Protocol.asString(tool.get("description")), schema, args -> {
                try {
                    return Protocol.withRun(run, () -> Protocol.callTool(name, args));
                } catch (Protocol.ToolError e) {
                    throw new ToolFailure(e);
                }
            }));
        }
        return out;
    }

    /** The loop's model: each request logged as the model saw it, answered from the script. */
    private static TinyLoop.Model seam(String run) {
        int[] counter = {0};
        return (messages, declared) -> {
            List<Object> shown = new ArrayList<>();
            for (Map<String, Object> m : messages) {
                StringBuilder content = new StringBuilder(Protocol.asString(m.get("content")));
                for (Object c : Protocol.asList(m.get("tool_calls"))) {
                    Map<String, Object> call = Protocol.asObject(c);
                    content.append("\ncall ").append(call.get("name")).append('(').append(call.get("arguments")).append(')');
                }
                shown.add(Protocol.object("role", m.get("role"), "content", content.toString().strip()));
            }
            Map<String, Object> turn = Protocol.withRun(run, () -> Protocol.askModel(Protocol.object(
                    "kind", "step", "adapter", "native", "messages", shown, "tools", new ArrayList<Object>(declared))));
            counter[0]++;
            switch (Protocol.asString(turn.get("kind"))) {
                case "step": {
                    List<TinyLoop.ToolCall> calls = new ArrayList<>();
                    List<Object> all = new ArrayList<>();
                    all.add(turn);
                    all.addAll(Protocol.asList(turn.get("parallel")));
                    for (int i = 0; i < all.size(); i++) {
                        Map<String, Object> call = Protocol.asObject(all.get(i));
                        Object raw = call.get("raw_tool_args");
                        String args = raw instanceof String ? (String) raw : Protocol.text(call.get("tool_args"));
                        calls.add(new TinyLoop.ToolCall("call_" + counter[0] + "_" + i,
                                Protocol.asString(call.get("tool_name")), args));
                    }
                    return new TinyLoop.Reply(Protocol.asString(turn.get("thought")), calls);
                }
                case "final":
                case "extract":
                    return new TinyLoop.Reply(Protocol.replyText(Protocol.asObject(turn.get("outputs"))), List.of());
                default:
                    throw new IllegalStateException("the model's transport failed: " + turn.get("fault"));
            }
        };
    }

    private static Map<String, Object> stepOf(TinyLoop.Step step) {
        return Protocol.object("thought", step.thought.isEmpty() ? null : step.thought, "tool_name", step.toolName,
                "tool_args", Protocol.wire(step.toolArgs), "observation", step.observation, "is_error", step.failed,
                "call_id", step.callId);
    }

    @Override
    public Map<String, Object> hello(Map<String, Object> command) {
        Map<String, Object> auxiliary = Protocol.object();
        if (OBSERVER) {
            auxiliary.put("observation", "the loop may rewrite each tool result with a model call");
        }
        return Protocol.object("name", "java-loop", "version", "0", "capabilities", CLAIMED,
                "not_claimed", NOT_CLAIMED, "known_failures", Protocol.object(), "auxiliary_calls", auxiliary,
                "approval_form", "callback", "dependencies", Protocol.installedVersions());
    }

    @Override
    public Map<String, Object> build(Map<String, Object> command) {
        agents.put(Protocol.asString(command.get("agent")), new Agent(Protocol.asObject(command.get("spec"))));
        return Protocol.object("error", null);
    }

    @Override
    public Map<String, Object> run(Map<String, Object> command) throws InterruptedException {
        Agent agent = agents.get(Protocol.asString(command.get("agent")));
        if (agent == null) {
            throw new IllegalStateException("no agent " + command.get("agent") + " was built");
        }
        Map<String, Object> spec = agent.spec;
        Map<String, Object> call = Protocol.asObject(command.get("call"));
        String run = Protocol.currentRun();
        // Each run its own loop: its callbacks carry the run's id, on whatever thread they run.
        TinyLoop loop = new TinyLoop();
        loop.tools = tools(run, spec);
        loop.model = seam(run);
        loop.maxSteps = ((Number) spec.get("max_steps")).intValue();
        loop.instructions = Protocol.asString(Protocol.asObject(spec.get("signature")).get("instructions"));
        for (Object t : Protocol.asList(spec.get("tools"))) {
            if (Boolean.TRUE.equals(Protocol.asObject(t).get("interruptible"))) {
                loop.needsApproval.add(Protocol.asString(Protocol.asObject(t).get("name")));
            }
        }
        loop.approver = (name, args, callId) -> Protocol.withRun(run, () -> approve(name, args, callId));
        if (OBSERVER) {
            loop.observer = (tool, observation) -> Protocol.withRun(run, () -> observe(tool, observation));
        }
        int perCall = call.get("max_steps") instanceof Number ? ((Number) call.get("max_steps")).intValue() : 0;
        String user = Protocol.userMessage(Protocol.asObject(call.get("inputs")));
        TinyLoop.Result result;
        try {
            if ("async".equals(call.get("mode"))) {
                result = loop.runAsync(user, perCall).get();
            } else {
                result = loop.run(user, perCall);
            }
        } catch (ExecutionException e) {
            return Protocol.object("outcome", Protocol.object("error", Protocol.errorInfo(e.getCause())));
        } catch (InterruptedException e) {
            throw e;
        } catch (Exception e) {
            return Protocol.object("outcome", Protocol.object("error", Protocol.errorInfo(e)));
        }
        synchronized (agent) {
            agent.last = result;
        }
        List<Object> trajectory = new ArrayList<>();
        result.steps.forEach(s -> trajectory.add(stepOf(s)));
        Object outputs = result.output == null ? null
                : Protocol.replyOutputs(Protocol.asObject(spec.get("signature")), result.output);
        return Protocol.object("outcome", Protocol.object("outputs", outputs, "trajectory", trajectory,
                "stop_reason", result.stopReason, "iterations", result.stepsUsed, "fallback", result.message,
                "tool_errors", result.toolErrors));
    }

    /** The loop's approval callback: the person's answer, in the loop's terms. */
    private static Object approve(String name, Object args, String callId) {
        Protocol.Approval answer = Protocol.readApproval(Protocol.askApproval(name, args, callId));
        return switch (answer.decision()) {
            case "approve" -> true;
            case "reject" -> false;
            case "edit" -> new TinyLoop.Edit(answer.name(), answer.args());
            default -> answer.text();
        };
    }

    /** The observation processor's model call: `continue` keeps the observation as it is. */
    private static String observe(String tool, String observation) {
        Map<String, Object> call = Protocol.object("kind", "auxiliary", "adapter", "other", "tools", null,
                "messages", List.of(Protocol.object("role", "user",
                        "content", "Rewrite the result of " + tool + ", or say continue: " + observation)));
        String answer = Protocol.askAuxiliary("observation", call);
        return answer.equals("continue") ? observation : answer;
    }

    @Override
    public Map<String, Object> mutateLastResult(Map<String, Object> command) {
        Agent agent = agents.get(Protocol.asString(command.get("agent")));
        if (agent == null) {
            return Protocol.object("changed", List.of());
        }
        synchronized (agent) {
            if (agent.last == null) {
                return Protocol.object("changed", List.of());
            }
            String marker = Protocol.asString(command.get("marker"));
            int held = agent.last.steps.size();
            for (TinyLoop.Step s : agent.last.steps) {
                s.thought = marker;
                s.observation = marker;
            }
            agent.last.steps.add(new TinyLoop.Step(marker, marker, Protocol.object(), marker, "", false));
            return Protocol.object("changed", List.of("result.steps (" + held + " steps)"));
        }
    }

    public static void main(String[] args) {
        Protocol.serve(new Harness());
    }
}
