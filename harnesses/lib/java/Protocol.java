// The react-conformance harness protocol for Java (and Kotlin) harnesses: JSON lines on stdio, the
// JDK only (Java 17), one file to copy beside a harness. It mirrors harnesses/lib/protocol.mjs and
// the Go module; the message shapes are harnesses/protocol.schema.json, explained by
// docs/writing-a-harness.md.
package reactconformance;

import java.io.BufferedReader;
import java.io.File;
import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.net.URL;
import java.nio.charset.StandardCharsets;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Deque;
import java.util.Enumeration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;
import java.util.jar.Attributes;
import java.util.jar.Manifest;

/**
 * {@link #serve} reads the suite's commands from stdin and writes the replies on the protocol
 * stream. A {@link Handlers} answers each command with its reply's payload; {@link #askModel},
 * {@link #callTool} and {@link #askApproval} send the harness's own requests and wait for the
 * suite's answer. Each command runs on a thread of its own, which knows its run id; a thread the
 * library starts does not: hand it callbacks made with {@link #withRun} and {@link #currentRun}.
 * JSON values are {@code Map<String, Object>} (in the order sent), {@code List<Object>},
 * {@code String}, {@code Boolean}, {@code Long} or {@code BigInteger}, {@code BigDecimal}, and null.
 */
public final class Protocol {
    /** The protocol version: the binding contract's (conformance/binding.py, CONTRACT_VERSION). */
    public static final int PROTOCOL = 3;

    /** How deep a value may nest in a protocol message (the suite's parser refuses ~200 levels). */
    public static final int DEEPEST = 150;

    private Protocol() {}

    /** The suite's commands; each returns its reply's payload. Kotlin: implement the interface. */
    public interface Handlers {
        Map<String, Object> hello(Map<String, Object> command) throws Exception;

        Map<String, Object> build(Map<String, Object> command) throws Exception;

        /** One call, on a thread that knows the run id ({@link #currentRun}). */
        Map<String, Object> run(Map<String, Object> command) throws Exception;

        Map<String, Object> mutateLastResult(Map<String, Object> command) throws Exception;

        default Map<String, Object> configure(Map<String, Object> command) throws Exception {
            throw new UnsupportedOperationException("this harness has no configure command");
        }

        /** A library with a global adapter names it; the default: none. */
        default Map<String, Object> globalAdapter(Map<String, Object> command) throws Exception {
            return object("adapter", null);
        }

        default Map<String, Object> resume(Map<String, Object> command) throws Exception {
            throw new UnsupportedOperationException("this harness has no resume command");
        }

        /** A library that constrains a step's tool names names them; the default: none. */
        default Map<String, Object> stepToolNames(Map<String, Object> command) throws Exception {
            return object("names", null);
        }
    }

    /** The suite did not expect a model request (its `error`), or answered it without a turn. */
    public static final class UnexpectedModelCall extends RuntimeException {
        private static final long serialVersionUID = 1L;

        public UnexpectedModelCall(String message) {
            super("unexpected model call: " + message);
        }
    }

    /** A tool's error as the suite sent it: {@link #type} is the tool's exception name. */
    public static final class ToolError extends RuntimeException {
        private static final long serialVersionUID = 1L;
        private final String type;

        public ToolError(String type, String message) {
            super(message);
            this.type = type;
        }

        public String type() {
            return type;
        }
    }

    /** A protocol request that could not be made or answered (outside a run, interrupted). */
    public static final class ProtocolException extends RuntimeException {
        private static final long serialVersionUID = 1L;

        public ProtocolException(String message, Throwable cause) {
            super(message, cause);
        }
    }

    /** A person's answer read as the suite means it (conformance.translate.approval). */
    public record Approval(String decision, String text, String name, Object args) {}

    /** A scripted HTTP fault as an endpoint answers it: status, headers (Retry-After) and body. */
    public record FaultResponse(int status, Map<String, String> headers, String body) {}

    private static final Map<String, String> REPLIES = Map.of(
            "hello", "welcome", "configure", "done", "global_adapter", "adapter", "build", "built",
            "run", "ran", "resume", "ran", "run_concurrently", "ran_all", "step_tool_names", "names",
            "mutate_last_result", "done");

    private static final ThreadLocal<String> RUN = new ThreadLocal<>();
    private static final Map<String, CompletableFuture<Map<String, Object>>> WAITING = new ConcurrentHashMap<>();
    private static final AtomicLong NEXT_ID = new AtomicLong();
    private static final Object WRITE_LOCK = new Object();
    private static final OutputStream OUT = protocolStream();

    // Only protocol messages may reach the protocol stream. The suite gives the harness a pipe of
    // its own (its descriptor in REACT_CONFORMANCE_PROTOCOL_FD): file descriptor 1, which native code
    // and a child process with inheritIO() reach past System.out, is then a log the suite keeps. A
    // JVM cannot dup2 fd 1 away, so without the pipe only System.out (pointed at stderr) is guarded.
    private static OutputStream protocolStream() {
        OutputStream stdout = new FileOutputStream(FileDescriptor.out);
        System.setOut(System.err);
        String fd = System.getenv("REACT_CONFORMANCE_PROTOCOL_FD");
        if (fd == null || !fd.matches("[0-9]+") || Integer.parseInt(fd) < 3) {
            return stdout;
        }
        File pipe = new File("/dev/fd/" + fd);
        try {
            return pipe.exists() ? new FileOutputStream(pipe) : stdout;
        } catch (IOException e) {
            return stdout;
        }
    }

    // --- runs ---------------------------------------------------------------------------------

    /** The id of the run the calling thread belongs to (null outside a run). */
    public static String currentRun() {
        return RUN.get();
    }

    /** {@code body} run as part of run {@code run}, on the calling thread (a library's own thread). */
    public static <T> T withRun(String run, Supplier<T> body) {
        String before = RUN.get();
        RUN.set(run);
        try {
            return body.get();
        } finally {
            RUN.set(before);
        }
    }

    /** {@code body} run as part of run {@code run}. */
    public static void withRun(String run, Runnable body) {
        withRun(run, () -> {
            body.run();
            return null;
        });
    }

    // --- requests -----------------------------------------------------------------------------

    /** The scripted turn answering {@code call} (an LMCall); {@link UnexpectedModelCall} if the
     *  script did not expect it. */
    public static Map<String, Object> askModel(Map<String, Object> call) {
        Map<String, Object> answer = ask("model", object("call", call));
        Object turn = answer.get("turn");
        if (answer.get("error") != null || !(turn instanceof Map)) {
            throw new UnexpectedModelCall(String.valueOf(orElse(answer.get("error"), "no turn")));
        }
        return asObject(turn);
    }

    /** The standing answer to an auxiliary model call (one the welcome's `auxiliary_calls` names),
     *  "continue": render it as the library's "go on, unchanged". */
    public static String askAuxiliary(String name, Map<String, Object> call) {
        Map<String, Object> withKind = new LinkedHashMap<>(call);
        withKind.put("kind", "auxiliary");
        withKind.put("auxiliary", name);
        Map<String, Object> answer = ask("model", object("call", withKind));
        if (answer.get("error") != null || !(answer.get("auxiliary") instanceof String)) {
            throw new UnexpectedModelCall(String.valueOf(orElse(answer.get("error"), "no answer")));
        }
        return (String) answer.get("auxiliary");
    }

    /** The person's answer to the library's approval callback for the call name(args)
     *  ({@code approval_form: "callback"}): yes, no, free text, or an edit as JSON text;
     *  {@link #readApproval} reads it. {@code callId} may be null. */
    public static String askApproval(String name, Object args, String callId) {
        Map<String, Object> fields = object("name", name, "args", wire(args));
        fields.put("call_id", callId);
        return asString(ask("approve", fields).get("response"));
    }

    /** A person's answer (an approval's, or a resume's `response`) read as the suite means it. */
    public static Approval readApproval(String response) {
        String said = response.strip().toLowerCase(Locale.ROOT);
        if (said.equals("yes") || said.equals("y")) {
            return new Approval("approve", response, null, null);
        }
        if (said.equals("no") || said.equals("n")) {
            return new Approval("reject", response, null, null);
        }
        Object parsed;
        try {
            parsed = parse(response);
        } catch (IllegalArgumentException e) {
            return new Approval("message", response, null, null);
        }
        if (!(parsed instanceof Map)) {
            return new Approval("message", response, null, null);
        }
        Map<String, Object> edit = asObject(parsed);
        if (edit.get("edit") instanceof Map) {
            edit = asObject(edit.get("edit"));
        }
        Object name = edit.get("name");
        return new Approval("edit", response, name instanceof String ? (String) name : null, edit.get("args"));
    }

    /** Runs the suite's tool {@code name} with {@code args} and returns its result; throws a
     *  {@link ToolError} when the tool raised. Args nested deeper than a protocol message may be
     *  travel as their JSON text ({@code args_json}), which the suite parses to any depth. */
    public static Object callTool(String name, Object args) {
        Map<String, Object> fields = object("name", name, "args", args);
        if (depth(args, DEEPEST) > DEEPEST) {
            fields.put("args", null);
            fields.put("args_json", stringify(args));
        }
        Map<String, Object> answer = ask("tool", fields);
        if (answer.get("error") instanceof Map) {
            Map<String, Object> error = asObject(answer.get("error"));
            throw new ToolError(asString(error.get("type")), asString(error.get("message")));
        }
        return answer.get("result");
    }

    /** A `hang` fault's notice: the request's own timeout in seconds (null without one), which the
     *  suite passes on the run's model clock. Then fail the request as that timeout would. */
    public static void notifyHang(Double timeout) {
        send(object("type", "hang", "run", runOrFail("hang notice"), "timeout", timeout));
    }

    /** A retry's wait, sent on the run's model clock (NET-1) instead of sleeping. */
    public static void notifySleep(double seconds) {
        send(object("type", "sleep", "run", runOrFail("sleep notice"), "seconds", seconds));
    }

    private static final Map<Integer, String> REASONS = Map.ofEntries(
            Map.entry(400, "Bad Request"), Map.entry(401, "Unauthorized"), Map.entry(403, "Forbidden"),
            Map.entry(404, "Not Found"), Map.entry(408, "Request Timeout"), Map.entry(409, "Conflict"),
            Map.entry(413, "Payload Too Large"), Map.entry(422, "Unprocessable Entity"),
            Map.entry(429, "Too Many Requests"), Map.entry(500, "Internal Server Error"),
            Map.entry(502, "Bad Gateway"), Map.entry(503, "Service Unavailable"),
            Map.entry(504, "Gateway Timeout"), Map.entry(529, "Site is overloaded"));

    /** A scripted HTTP fault (a `fault` turn with a status) as the endpoint answers it: the body
     *  says what failed in words, never the status code (as server.py does). */
    public static FaultResponse faultResponse(Map<String, Object> turn) {
        int status;
        try {
            status = Integer.parseInt(String.valueOf(turn.get("fault")));
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("a fault turn without an HTTP status: " + turn.get("fault"), e);
        }
        Map<String, String> headers = new LinkedHashMap<>();
        headers.put("Content-Type", "application/json");
        if (turn.get("retry_after") != null) {
            headers.put("Retry-After", String.valueOf(turn.get("retry_after")));
        }
        String reason = REASONS.getOrDefault(status, status >= 500 ? "server error" : "client error");
        return new FaultResponse(status, headers,
                stringify(object("error", object("message", "scripted fault: " + reason))));
    }

    /** An exception as the protocol's ErrorInfo: kind "other" unless given, a tool's error under
     *  the tool's exception name. */
    public static Map<String, Object> errorInfo(Throwable error, String kind, Map<String, Object> fields) {
        String type = error instanceof ToolError ? ((ToolError) error).type() : error.getClass().getSimpleName();
        return object("type", type, "message", String.valueOf(orElse(error.getMessage(), "")),
                "kind", kind == null ? "other" : kind, "fields", fields == null ? object() : fields);
    }

    /** {@link #errorInfo(Throwable, String, Map)} of kind "other". */
    public static Map<String, Object> errorInfo(Throwable error) {
        return errorInfo(error, null, null);
    }

    /** A value as a protocol message may carry it (a step's `tool_args`): nested deeper than the
     *  suite parses a message, its JSON text. */
    public static Object wire(Object value) {
        return depth(value, DEEPEST) > DEEPEST ? stringify(value) : value;
    }

    /** The version of the Maven artifact {@code groupId:artifactId} on the class path (its jar's
     *  pom.properties, or, for a jar built without one, the Implementation-Version of the manifest
     *  whose Implementation-Title is the artifact), or "not installed": for the welcome's
     *  `dependencies`. */
    public static String installedVersion(String groupId, String artifactId) {
        String path = "META-INF/maven/" + groupId + "/" + artifactId + "/pom.properties";
        try (InputStream in = Protocol.class.getClassLoader().getResourceAsStream(path)) {
            if (in == null) {
                return manifestVersion(artifactId);
            }
            Properties properties = new Properties();
            properties.load(in);
            return properties.getProperty("version", "not installed");
        } catch (IOException e) {
            throw new ProtocolException("cannot read " + path, e);
        }
    }

    /** The Implementation-Version of the class path's manifest titled {@code artifactId} (a Gradle
     *  build, such as Anthropic's Java SDK, writes no pom.properties), or "not installed". */
    private static String manifestVersion(String artifactId) {
        try {
            Enumeration<URL> manifests = Protocol.class.getClassLoader().getResources("META-INF/MANIFEST.MF");
            while (manifests.hasMoreElements()) {
                try (InputStream in = manifests.nextElement().openStream()) {
                    Attributes main = new Manifest(in).getMainAttributes();
                    String version = main.getValue(Attributes.Name.IMPLEMENTATION_VERSION);
                    if (version != null && artifactId.equals(main.getValue(Attributes.Name.IMPLEMENTATION_TITLE))) {
                        return version;
                    }
                }
            }
        } catch (IOException e) {
            throw new ProtocolException("cannot read the class path's manifests", e);
        }
        return "not installed"; // as a Python binding's report says it
    }

    /** The welcome's `dependencies`: each {@code "groupId:artifactId"} with its installed version. */
    public static Map<String, Object> installedVersions(String... coordinates) {
        Map<String, Object> versions = new LinkedHashMap<>();
        for (String coordinate : coordinates) {
            String[] parts = coordinate.split(":", 2);
            if (parts.length != 2) {
                throw new IllegalArgumentException("a Maven coordinate is groupId:artifactId, not " + coordinate);
            }
            versions.put(coordinate, installedVersion(parts[0], parts[1]));
        }
        return versions;
    }

    // --- serving ------------------------------------------------------------------------------

    /** Serves the suite until it says stop (or closes stdin), then exits the process. */
    public static void serve(Handlers handlers) {
        BufferedReader input = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8), 1 << 20);
        try {
            for (String line = input.readLine(); line != null; line = input.readLine()) {
                if (!line.isBlank()) {
                    dispatch(handlers, line);
                }
            }
        } catch (IOException e) {
            System.err.println("protocol: stdin failed: " + e);
        }
        Runtime.getRuntime().halt(0); // the library's threads end with the process
    }

    private static void dispatch(Handlers handlers, String line) {
        Map<String, Object> message;
        try {
            message = asObject(parse(line));
        } catch (IllegalArgumentException e) {
            System.err.println("protocol: a line that is not JSON: " + e.getMessage());
            System.err.flush();
            Runtime.getRuntime().halt(2);
            return;
        }
        String type = asString(message.get("type"));
        switch (type) {
            case "turn", "observation", "approval" -> {
                CompletableFuture<Map<String, Object>> waiter = WAITING.remove(asString(message.get("id")));
                if (waiter != null) {
                    waiter.complete(message);
                }
            }
            case "stop" -> {
                send(object("type", "done", "id", message.get("id")));
                System.err.flush();
                Runtime.getRuntime().halt(0);
            }
            default -> {
                Thread thread = new Thread(() -> reply(handlers, message), "react-conformance " + type);
                thread.setDaemon(true);
                thread.start();
            }
        }
    }

    private static void reply(Handlers handlers, Map<String, Object> command) {
        Map<String, Object> reply;
        try {
            Map<String, Object> payload = carryOut(handlers, command);
            reply = object("type", REPLIES.get(asString(command.get("type"))), "id", command.get("id"));
            if (payload != null) {
                payload.forEach(reply::putIfAbsent);
            }
        } catch (Throwable e) { // the harness's failure, whatever it is, is the command's `failed`
            reply = object("type", "failed", "id", command.get("id"), "message", stackOf(e));
        }
        send(reply);
    }

    private static Map<String, Object> carryOut(Handlers handlers, Map<String, Object> command) throws Exception {
        String type = asString(command.get("type"));
        String run = command.get("run") instanceof String ? (String) command.get("run") : null;
        RUN.set(run);
        switch (type) {
            case "hello": {
                Map<String, Object> payload = new LinkedHashMap<>(handlers.hello(command));
                payload.put("protocol", PROTOCOL);
                return payload;
            }
            case "build":
                return handlers.build(command);
            case "run":
                return handlers.run(command);
            case "resume":
                return handlers.resume(command);
            case "run_concurrently":
                return runConcurrently(handlers, command);
            case "mutate_last_result":
                return handlers.mutateLastResult(command);
            case "configure":
                return handlers.configure(command);
            case "global_adapter":
                return handlers.globalAdapter(command);
            case "step_tool_names":
                return handlers.stepToolNames(command);
            default:
                throw new UnsupportedOperationException("this harness has no " + type + " command");
        }
    }

    // Each run on a thread of its own, all at once; a run that throws fails the whole command.
    private static Map<String, Object> runConcurrently(Handlers handlers, Map<String, Object> command)
            throws InterruptedException {
        List<Object> runs = asList(command.get("runs"));
        Object[] outcomes = new Object[runs.size()];
        Throwable[] errors = new Throwable[runs.size()];
        List<Thread> threads = new ArrayList<>();
        for (int i = 0; i < runs.size(); i++) {
            int index = i;
            Map<String, Object> entry = asObject(runs.get(i));
            Thread thread = new Thread(() -> {
                RUN.set(asString(entry.get("run")));
                try {
                    outcomes[index] = handlers.run(entry).get("outcome");
                } catch (Throwable e) {
                    errors[index] = e;
                }
            }, "react-conformance run " + entry.get("run"));
            thread.setDaemon(true);
            thread.start();
            threads.add(thread);
        }
        for (Thread thread : threads) {
            thread.join();
        }
        StringBuilder failures = new StringBuilder();
        for (Throwable error : errors) {
            if (error != null) {
                failures.append(stackOf(error));
            }
        }
        if (failures.length() > 0) {
            throw new IllegalStateException(failures.toString());
        }
        return object("outcomes", new ArrayList<>(Arrays.asList(outcomes)));
    }

    private static String runOrFail(String what) {
        String run = RUN.get();
        if (run == null) {
            throw new ProtocolException("a " + what + " outside of any run (a thread the library started? "
                    + "give it callbacks made with Protocol.withRun(Protocol.currentRun(), ...))", null);
        }
        return run;
    }

    private static Map<String, Object> ask(String type, Map<String, Object> fields) {
        String run = runOrFail(type + " request");
        String id = type + "-" + NEXT_ID.incrementAndGet();
        CompletableFuture<Map<String, Object>> answer = new CompletableFuture<>();
        WAITING.put(id, answer);
        Map<String, Object> message = object("type", type, "id", id, "run", run);
        message.putAll(fields);
        try {
            send(message);
            return answer.get();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new ProtocolException("interrupted waiting for the suite's answer to " + id, e);
        } catch (ExecutionException e) {
            throw new ProtocolException("no answer to " + id, e);
        } finally {
            WAITING.remove(id);
        }
    }

    private static void send(Map<String, Object> message) {
        byte[] line = (stringify(message) + "\n").getBytes(StandardCharsets.UTF_8);
        synchronized (WRITE_LOCK) {
            try {
                OUT.write(line);
                OUT.flush();
            } catch (IOException e) {
                throw new ProtocolException("the protocol stream is closed", e);
            }
        }
    }

    private static String stackOf(Throwable error) {
        StringWriter text = new StringWriter();
        error.printStackTrace(new PrintWriter(text));
        return text.toString();
    }

    // --- JSON ---------------------------------------------------------------------------------

    private static final Map<String, String> JSON_TYPES = Map.of("str", "string", "int", "integer",
            "float", "number", "bool", "boolean", "list", "array", "dict", "object");

    /** A value as the text a message shows: a string as it is, anything else as JSON. */
    public static String text(Object value) {
        return value instanceof String ? (String) value : stringify(value);
    }

    /** render.user_message: the one input's text, or {@code name: value} lines in the order sent. */
    public static String userMessage(Map<String, Object> inputs) {
        if (inputs.size() == 1) {
            return text(inputs.values().iterator().next());
        }
        List<String> lines = new ArrayList<>();
        inputs.forEach((name, value) -> lines.add(name + ": " + text(value)));
        return String.join("\n", lines);
    }

    /** FinalTurn.reply_text: the one output's text, or a JSON object of them all. */
    public static String replyText(Map<String, Object> outputs) {
        return outputs.size() == 1 ? text(outputs.values().iterator().next()) : stringify(outputs);
    }

    /** render.reply_outputs: the reply under the signature's one output name ("answer" when it
     *  names none), or the JSON object of several. */
    public static Map<String, Object> replyOutputs(Map<String, Object> signature, Object reply) {
        List<String> names = new ArrayList<>();
        for (Object f : asList(signature.get("outputs"))) {
            names.add(asString(asObject(f).get("name")));
        }
        if (names.isEmpty()) {
            names.add("answer");
        }
        if (names.size() > 1 && reply instanceof String) {
            try {
                Object values = parse((String) reply);
                if (values instanceof Map) {
                    return asObject(values);
                }
            } catch (IllegalArgumentException e) {
                // not JSON: the reply is the first output's, as with one output
            }
        }
        return object(names.get(0), reply);
    }

    /** ToolSpec.json_schema: a suite tool's parameters as a JSON schema, every one required. */
    public static Map<String, Object> jsonSchema(Map<String, Object> tool) {
        Map<String, Object> properties = new LinkedHashMap<>();
        List<Object> required = new ArrayList<>();
        for (Object p : asList(tool.get("parameters"))) {
            Map<String, Object> param = asObject(p);
            String name = asString(param.get("name"));
            properties.put(name, object("type", JSON_TYPES.get(asString(param.get("type"))),
                    "description", param.get("description")));
            required.add(name);
        }
        return object("type", "object", "properties", properties, "required", required,
                "additionalProperties", false);
    }

    /** A JSON object of the keys and values given in turn ({@code object("a", 1, "b", 2)}). */
    public static Map<String, Object> object(Object... keysAndValues) {
        Map<String, Object> map = new LinkedHashMap<>();
        for (int i = 0; i + 1 < keysAndValues.length; i += 2) {
            map.put(String.valueOf(keysAndValues[i]), keysAndValues[i + 1]);
        }
        return map;
    }

    /** {@code value} as a JSON object (an empty one if it is not). */
    @SuppressWarnings("unchecked")
    public static Map<String, Object> asObject(Object value) {
        return value instanceof Map ? (Map<String, Object>) value : new LinkedHashMap<>();
    }

    /** {@code value} as a JSON array (an empty one if it is not). */
    @SuppressWarnings("unchecked")
    public static List<Object> asList(Object value) {
        return value instanceof List ? (List<Object>) value : new ArrayList<>();
    }

    /** {@code value} as a string ("" if it is not one). */
    public static String asString(Object value) {
        return value instanceof String ? (String) value : "";
    }

    private static Object orElse(Object value, Object otherwise) {
        return value == null ? otherwise : value;
    }

    /** How deep {@code value} nests, counted no further than {@code limit} levels (then limit + 1). */
    public static int depth(Object value, int limit) {
        Iterable<?> children;
        if (value instanceof Map) {
            children = ((Map<?, ?>) value).values();
        } else if (value instanceof Iterable) {
            children = (Iterable<?>) value;
        } else {
            return 0;
        }
        if (limit <= 0) {
            return 1;
        }
        int deepest = 0;
        for (Object child : children) {
            deepest = Math.max(deepest, depth(child, limit - 1));
        }
        return 1 + deepest;
    }

    /** {@code value} as JSON text, at any depth (no recursion). Maps, iterables and arrays of
     *  objects are JSON's; numbers, strings, booleans and null are themselves; anything else is
     *  its {@code toString()}. A NaN or an infinity is null, as JSON has none. */
    public static String stringify(Object value) {
        StringBuilder out = new StringBuilder();
        Deque<Object> stack = new ArrayDeque<>();
        stack.push(new Value(value));
        while (!stack.isEmpty()) {
            Object top = stack.pop();
            if (top instanceof String) {
                out.append((String) top); // punctuation queued beside the values
                continue;
            }
            Object item = ((Value) top).value;
            if (item instanceof Object[]) {
                item = Arrays.asList((Object[]) item);
            }
            if (item instanceof Map) {
                out.append('{');
                stack.push("}");
                List<Map.Entry<?, ?>> entries = new ArrayList<>(((Map<?, ?>) item).entrySet());
                for (int i = entries.size() - 1; i >= 0; i--) {
                    stack.push(new Value(entries.get(i).getValue()));
                    stack.push(quote(String.valueOf(entries.get(i).getKey())) + ":");
                    if (i > 0) {
                        stack.push(",");
                    }
                }
            } else if (item instanceof Iterable) {
                out.append('[');
                stack.push("]");
                List<Object> items = new ArrayList<>();
                ((Iterable<?>) item).forEach(items::add);
                for (int i = items.size() - 1; i >= 0; i--) {
                    stack.push(new Value(items.get(i)));
                    if (i > 0) {
                        stack.push(",");
                    }
                }
            } else {
                out.append(scalar(item));
            }
        }
        return out.toString();
    }

    private record Value(Object value) {}

    private static String scalar(Object item) {
        if (item == null) {
            return "null";
        }
        if (item instanceof Boolean) {
            return item.toString();
        }
        if (item instanceof Double || item instanceof Float) {
            double d = ((Number) item).doubleValue();
            if (Double.isNaN(d) || Double.isInfinite(d)) {
                return "null";
            }
            return d == Math.rint(d) && Math.abs(d) < 1e15 ? Long.toString((long) d) : Double.toString(d);
        }
        if (item instanceof Number) {
            return item.toString(); // Long, Integer, BigInteger, BigDecimal: valid JSON numbers
        }
        return quote(item.toString());
    }

    private static String quote(String text) {
        StringBuilder out = new StringBuilder(text.length() + 2).append('"');
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            switch (c) {
                case '"' -> out.append("\\\"");
                case '\\' -> out.append("\\\\");
                case '\n' -> out.append("\\n");
                case '\r' -> out.append("\\r");
                case '\t' -> out.append("\\t");
                default -> {
                    if (c < 0x20 || Character.isSurrogate(c) && !wellPaired(text, i)) {
                        out.append(String.format("\\u%04x", (int) c));
                    } else {
                        out.append(c);
                    }
                }
            }
        }
        return out.append('"').toString();
    }

    // A lone surrogate is escaped (it cannot be written as UTF-8); a pair is written as it is.
    private static boolean wellPaired(String text, int i) {
        char c = text.charAt(i);
        if (Character.isHighSurrogate(c)) {
            return i + 1 < text.length() && Character.isLowSurrogate(text.charAt(i + 1));
        }
        return i > 0 && Character.isHighSurrogate(text.charAt(i - 1));
    }

    /** JSON text as its value, at any depth (no recursion); IllegalArgumentException, saying where,
     *  if it is not JSON. Integers are Long (BigInteger past it), other numbers BigDecimal. */
    public static Object parse(String text) {
        return new Parser(text).document();
    }

    private static final class Parser {
        private final String text;
        private int at;

        Parser(String text) {
            this.text = text;
        }

        Object document() {
            // Each open container, with the key its next value goes under (objects only).
            Deque<Object> containers = new ArrayDeque<>();
            Deque<String> keys = new ArrayDeque<>();
            Object done = null;
            boolean finished = false;
            while (!finished) {
                space();
                Object value;
                char c = peek();
                if (c == '{' || c == '[') {
                    at++;
                    space();
                    boolean object = c == '{';
                    Object container = object ? new LinkedHashMap<String, Object>() : new ArrayList<Object>();
                    if (peek() == (object ? '}' : ']')) {
                        at++;
                        value = container;
                    } else {
                        containers.push(container);
                        if (object) {
                            keys.push(key());
                        }
                        continue;
                    }
                } else {
                    value = scalar();
                }
                // Place the value, then close every container it completes.
                while (true) {
                    if (containers.isEmpty()) {
                        done = value;
                        finished = true;
                        break;
                    }
                    Object parent = containers.peek();
                    if (parent instanceof Map) {
                        asObject(parent).put(keys.pop(), value);
                    } else {
                        asList(parent).add(value);
                    }
                    space();
                    char next = next();
                    if (next == ',') {
                        if (parent instanceof Map) {
                            space();
                            keys.push(key());
                        }
                        break;
                    }
                    if (next != (parent instanceof Map ? '}' : ']')) {
                        throw error("a ',' or the container's end");
                    }
                    value = containers.pop();
                }
            }
            space();
            if (at < text.length()) {
                throw error("the end of the text");
            }
            return done;
        }

        private String key() {
            if (peek() != '"') {
                throw error("a key in quotes");
            }
            String key = string();
            space();
            if (next() != ':') {
                throw error("a ':'");
            }
            return key;
        }

        private Object scalar() {
            char c = peek();
            if (c == '"') {
                return string();
            }
            for (String word : new String[] {"true", "false", "null"}) {
                if (text.startsWith(word, at)) {
                    at += word.length();
                    return word.equals("null") ? null : Boolean.valueOf(word);
                }
            }
            int start = at;
            while (at < text.length() && "+-0123456789.eE".indexOf(text.charAt(at)) >= 0) {
                at++;
            }
            String number = text.substring(start, at);
            if (!number.matches("-?(0|[1-9][0-9]*)(\\.[0-9]+)?([eE][+-]?[0-9]+)?")) {
                at = start;
                throw error("a value");
            }
            if (number.matches("-?[0-9]+")) {
                BigInteger integer = new BigInteger(number);
                return integer.bitLength() < 64 ? (Object) integer.longValue() : integer;
            }
            return new BigDecimal(number);
        }

        private String string() {
            at++; // the opening quote
            StringBuilder out = new StringBuilder();
            while (true) {
                if (at >= text.length()) {
                    throw error("a closing quote");
                }
                char c = text.charAt(at++);
                if (c == '"') {
                    return out.toString();
                }
                if (c < 0x20) {
                    throw error("no control character in a string");
                }
                if (c != '\\') {
                    out.append(c);
                    continue;
                }
                char escaped = next();
                switch (escaped) {
                    case '"', '\\', '/' -> out.append(escaped);
                    case 'b' -> out.append('\b');
                    case 'f' -> out.append('\f');
                    case 'n' -> out.append('\n');
                    case 'r' -> out.append('\r');
                    case 't' -> out.append('\t');
                    case 'u' -> {
                        if (at + 4 > text.length() || !text.substring(at, at + 4).matches("[0-9a-fA-F]{4}")) {
                            throw error("four hex digits");
                        }
                        out.append((char) Integer.parseInt(text.substring(at, at + 4), 16));
                        at += 4;
                    }
                    default -> throw error("an escape");
                }
            }
        }

        private void space() {
            while (at < text.length() && " \t\r\n".indexOf(text.charAt(at)) >= 0) {
                at++;
            }
        }

        private char peek() {
            if (at >= text.length()) {
                throw error("more JSON");
            }
            return text.charAt(at);
        }

        private char next() {
            char c = peek();
            at++;
            return c;
        }

        private IllegalArgumentException error(String expected) {
            String found = at < text.length() ? text.substring(at, Math.min(text.length(), at + 20)) : "the end";
            return new IllegalArgumentException("not JSON at character " + at + ": expected " + expected
                    + ", found " + found);
        }
    }
}
