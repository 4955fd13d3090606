// A tiny native tool-calling loop, written for the suite's own tests (as tests/go/tinyloop is): the
// library a Java harness binds. The model is a function taking the messages and the tool
// declarations and returning a Reply; the loop runs tools until a reply calls none, or the step cap.
package tinyloop;

import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.function.BiFunction;

import reactconformance.Protocol;

public final class TinyLoop {
    /** How many consecutive similar tool failures (same tool, same error kind) stop the run. */
    public static final int REPEATED_ERRORS = 3;

    /** One call in a reply; arguments is JSON text. */
    public record ToolCall(String id, String name, String arguments) {}

    /** The model's reply. */
    public record Reply(String content, List<ToolCall> toolCalls) {}

    /** A tool the loop may run. */
    public interface Function {
        Object call(Map<String, Object> args) throws Exception;
    }

    /** A tool: its JSON schema has `properties` and `required`. */
    public record Tool(String name, String description, Map<String, Object> schema, Function function) {}

    /** The model: the messages and the tool declarations to the reply. */
    public interface Model {
        Reply reply(List<Map<String, Object>> messages, List<Map<String, Object>> tools) throws Exception;
    }

    /** An approval callback's edited call. */
    public record Edit(String name, Object args) {}

    /** The approval callback: true runs the call, false or a String rejects it, an Edit runs that instead. */
    public interface Approver {
        Object approve(String name, Object args, String callId);
    }

    /** A tool error with a kind of its own (a tool's exception name). */
    public interface Typed {
        String kind();
    }

    /** One tool call of a run. */
    public static final class Step {
        public String thought;
        public String toolName;
        public Object toolArgs;
        public String observation;
        public String callId;
        public boolean failed;

        public Step(String thought, String toolName, Object toolArgs, String observation, String callId, boolean failed) {
            this.thought = thought;
            this.toolName = toolName;
            this.toolArgs = toolArgs;
            this.observation = observation;
            this.callId = callId;
            this.failed = failed;
        }
    }

    /** A run's result; output and message may be null. */
    public static final class Result {
        public final String output;
        public final String stopReason;
        public final int stepsUsed;
        public final List<Step> steps;
        public final String message;
        public final List<String> toolErrors;

        Result(String output, String stopReason, int stepsUsed, List<Step> steps, String message, List<String> toolErrors) {
            this.output = output;
            this.stopReason = stopReason;
            this.stepsUsed = stepsUsed;
            this.steps = steps;
            this.message = message;
            this.toolErrors = toolErrors;
        }
    }

    /** A tool's arguments that cannot reach it. */
    public static final class ArgsError extends Exception {
        private static final long serialVersionUID = 1L;

        ArgsError(String message) {
            super(message);
        }
    }

    public List<Tool> tools = new ArrayList<>();
    public Model model;
    public BiFunction<String, String, String> observer;
    public List<String> needsApproval = new ArrayList<>();
    public Approver approver;
    public int maxSteps;
    public String instructions = "";

    private List<Map<String, Object>> declarations() {
        List<Map<String, Object>> out = new ArrayList<>();
        for (Tool t : tools) {
            out.add(Protocol.object("type", "function", "function",
                    Protocol.object("name", t.name(), "description", t.description(), "parameters", t.schema())));
        }
        return out;
    }

    /** The async form: the run on a thread of the loop's own. */
    public CompletableFuture<Result> runAsync(String user, int maxSteps) {
        CompletableFuture<Result> done = new CompletableFuture<>();
        Thread thread = new Thread(() -> {
            try {
                done.complete(run(user, maxSteps));
            } catch (Exception e) {
                done.completeExceptionally(e);
            }
        }, "tinyloop async");
        thread.setDaemon(true);
        thread.start();
        return done;
    }

    /** One call with its own budget (maxSteps 0: the agent's). */
    public Result run(String user, int perCall) throws Exception {
        int limit = perCall == 0 ? maxSteps : perCall;
        if (limit < 1) {
            throw new IllegalArgumentException("max_steps must be at least 1, not " + limit);
        }
        // A library that prints to stdout, as many do: the protocol module keeps it off the wire.
        System.out.println("tinyloop: a run with a cap of " + limit + " steps");
        // (and through file descriptor 1, as native code writes; never closed: it is the process's)
        @SuppressWarnings("resource")
        FileOutputStream fd1 = new FileOutputStream(FileDescriptor.out);
        fd1.write("tinyloop: (and through file descriptor 1)\n".getBytes(StandardCharsets.UTF_8));

        List<Map<String, Object>> messages = new ArrayList<>();
        if (!instructions.isEmpty()) {
            messages.add(Protocol.object("role", "system", "content", instructions));
        }
        messages.add(Protocol.object("role", "user", "content", user));
        List<Step> steps = new ArrayList<>();
        Map<String, Integer> tried = new LinkedHashMap<>();
        List<String[]> errors = new ArrayList<>();
        List<String> streak = new ArrayList<>();
        int completed = 0;
        for (int step = 1; step <= limit; step++) {
            Reply reply = model.reply(messages, declarations());
            List<Object> calls = new ArrayList<>();
            for (ToolCall c : reply.toolCalls()) {
                calls.add(Protocol.object("id", c.id(), "name", c.name(), "arguments", c.arguments()));
            }
            messages.add(Protocol.object("role", "assistant", "content", reply.content(), "tool_calls", calls));
            if (reply.toolCalls().isEmpty()) {
                return new Result(reply.content(), "finish", step, steps, null, texts(errors));
            }
            for (ToolCall call : reply.toolCalls()) {
                Executed done = execute(call, false);
                String observation = observer == null ? done.observation : observer.apply(call.name(), done.observation);
                if (done.ran) {
                    tried.merge(call.name(), 1, Integer::sum);
                }
                if (done.error == null) {
                    completed++;
                    streak.clear();
                }
                steps.add(new Step(reply.content(), call.name(), done.args, observation, call.id(), done.error != null));
                messages.add(Protocol.object("role", "tool", "tool_call_id", call.id(), "content", observation));
                if (done.error == null || !done.ran) {
                    continue;
                }
                String kind = errorKind(done.error);
                errors.add(new String[] {call.name(), kind, done.error.getMessage()});
                String similar = call.name() + "\u0000" + kind;
                if (!streak.isEmpty() && !streak.get(streak.size() - 1).equals(similar)) {
                    streak.clear();
                }
                streak.add(similar);
                if (streak.size() < REPEATED_ERRORS) {
                    continue;
                }
                String message = "I stopped: the tool " + call.name() + " failed " + streak.size() + " times in a row ("
                        + done.error.getMessage() + "). Please check its input, or try rephrasing the request.";
                return new Result(null, "repeated_tool_errors", step, steps, message, texts(errors));
            }
        }
        List<String> summary = new ArrayList<>();
        tried.forEach((name, times) -> summary.add("ran " + name + " " + times + "\u00d7"));
        String ran = summary.isEmpty() ? "ran no tool" : String.join(", ", summary);
        StringBuilder message = new StringBuilder("I reached the step cap (" + limit + " steps) without an answer: " + ran + ".");
        if (!errors.isEmpty()) {
            message.append(" The last tool error: ").append(errors.get(errors.size() - 1)[2]).append('.');
        }
        if (completed == 0) {
            message.append(" No tool completed.");
        }
        return new Result(null, "max_steps", limit, steps, message.toString(), texts(errors));
    }

    private static List<String> texts(List<String[]> errors) {
        List<String> out = new ArrayList<>();
        for (String[] e : errors.subList(Math.max(0, errors.size() - 10), errors.size())) {
            out.add(e[0] + ": " + e[1] + ": " + e[2]);
        }
        return out;
    }

    private static String errorKind(Exception error) {
        return error instanceof Typed ? ((Typed) error).kind() : error.getClass().getSimpleName();
    }

    private Tool tool(String name) {
        for (Tool t : tools) {
            if (t.name().equals(name)) {
                return t;
            }
        }
        return null;
    }

    /** A call's observation, its args as parsed (or the raw text), its error if any, and whether the tool ran. */
    private record Executed(String observation, Object args, Exception error, boolean ran) {}

    private Executed execute(ToolCall call, boolean approved) {
        Tool tool = tool(call.name());
        if (tool == null) {
            TreeSet<String> names = new TreeSet<>();
            tools.forEach(t -> names.add(t.name()));
            ArgsError error = new ArgsError("Error: unknown tool \"" + call.name() + "\"; the tools are " + names);
            return new Executed(error.getMessage(), call.arguments(), error, false);
        }
        Map<String, Object> args;
        try {
            args = parseArgs(tool, call.arguments());
        } catch (ArgsError e) {
            return new Executed("Error: invalid arguments for " + tool.name() + ": " + e.getMessage(), call.arguments(), e, false);
        }
        if (!approved && needsApproval.contains(tool.name())) {
            if (approver == null) {
                ArgsError error = new ArgsError("the tool " + tool.name() + " needs approval, and no one approves calls");
                return new Executed("", args, error, false);
            }
            Object answer = approver.approve(tool.name(), args, call.id());
            if (answer instanceof Edit) {
                Edit edit = (Edit) answer;
                return execute(new ToolCall(call.id(), edit.name(), Protocol.stringify(edit.args())), true);
            }
            if (answer instanceof String) {
                return reject(tool.name(), args, ": " + answer);
            }
            if (!Boolean.TRUE.equals(answer)) {
                return reject(tool.name(), args, "");
            }
        }
        Object result;
        try {
            result = tool.function().call(args);
        } catch (Exception e) {
            return new Executed("Error executing " + tool.name() + ": " + e.getMessage(), args, e, true);
        }
        String text = result instanceof String ? (String) result : Protocol.stringify(result);
        return new Executed(text, args, null, true);
    }

    private static Executed reject(String name, Object args, String said) {
        ArgsError error = new ArgsError("the person rejected the call of " + name);
        return new Executed("Error: the person rejected the call of " + name + "; it did not run" + said, args, error, false);
    }

    private static boolean ofType(String expected, Object value) {
        return switch (expected) {
            case "string" -> value instanceof String;
            case "integer" -> value instanceof Long || value instanceof java.math.BigInteger;
            case "number" -> value instanceof Number;
            case "boolean" -> value instanceof Boolean;
            case "array" -> value instanceof List;
            case "object" -> value instanceof Map;
            default -> true;
        };
    }

    private static Map<String, Object> parseArgs(Tool tool, String text) throws ArgsError {
        Object parsed;
        try {
            parsed = Protocol.parse(text);
        } catch (IllegalArgumentException e) {
            String message = e.getMessage();
            throw new ArgsError("the arguments are not valid JSON (" + message.substring(0, Math.min(200, message.length())) + ")");
        }
        if (!(parsed instanceof Map)) {
            throw new ArgsError("the arguments must be a JSON object, not " + (parsed == null ? "null" : parsed.getClass().getSimpleName()));
        }
        Map<String, Object> args = Protocol.asObject(parsed);
        Map<String, Object> properties = Protocol.asObject(tool.schema().get("properties"));
        for (Object name : Protocol.asList(tool.schema().get("required"))) {
            if (!args.containsKey(name)) {
                throw new ArgsError("the field \"" + name + "\" is missing");
            }
        }
        for (Map.Entry<String, Object> entry : args.entrySet()) {
            if (!(properties.get(entry.getKey()) instanceof Map)) {
                throw new ArgsError("the field \"" + entry.getKey() + "\" is not an argument of " + tool.name());
            }
            String expected = Protocol.asString(Protocol.asObject(properties.get(entry.getKey())).get("type"));
            if (!ofType(expected, entry.getValue())) {
                throw new ArgsError("the field \"" + entry.getKey() + "\" must be of type " + expected);
            }
        }
        return args;
    }
}
