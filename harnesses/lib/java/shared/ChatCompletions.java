package reactconformance.shared;

import java.io.IOException;
import java.net.SocketException;
import java.net.SocketTimeoutException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

import reactconformance.Protocol;

/**
 * The OpenAI chat-completions endpoint as the Java harnesses script it, beneath a library's own
 * HTTP client (an OkHttp interceptor, a LangChain4j {@code HttpClient}), so that the library's
 * request building, reply parsing and retries run as in a user's run. Each request is shown to the
 * suite as an LMCall, and the scripted turn comes back as the chat.completion JSON (or server-sent
 * chunks, or the HTTP status) an endpoint would answer: harnesses/lib/chat-completions.mjs in Java.
 */
public final class ChatCompletions {
    /** What the endpoint answers: an HTTP status, its headers and its body. */
    public record Answer(int status, Map<String, String> headers, String body) {}

    private static final AtomicInteger REPLIES = new AtomicInteger();
    private static final Map<String, AtomicInteger> SENT = new ConcurrentHashMap<>();

    private ChatCompletions() {}

    /** How many chat-completions requests the calling run has sent (Event.model_calls). */
    public static int modelCalls() {
        AtomicInteger sent = SENT.get(String.valueOf(Protocol.currentRun()));
        return sent == null ? 0 : sent.get();
    }

    /**
     * The answer to one chat-completions request {@code body} (its JSON text) of the calling run.
     * A transport fault is thrown as the IOException an HTTP client raises for it: a connection
     * reset as a SocketException, a timeout (or an endpoint that never answers, after the `hang`
     * notice with {@code readTimeout}, the request's own read timeout in seconds) as a
     * SocketTimeoutException.
     */
    public static Answer answer(String body, Double readTimeout) throws IOException {
        Map<String, Object> request = Protocol.asObject(Protocol.parse(body));
        SENT.computeIfAbsent(String.valueOf(Protocol.currentRun()), run -> new AtomicInteger()).incrementAndGet();
        List<Object> shown = new ArrayList<>();
        for (Object message : Protocol.asList(request.get("messages"))) {
            shown.add(shownMessage(Protocol.asObject(message)));
        }
        List<Object> tools = Protocol.asList(request.get("tools"));
        Map<String, Object> turn;
        try {
            turn = Protocol.askModel(Protocol.object("kind", "step", "adapter", "native", "messages", shown,
                    "tools", tools.isEmpty() ? null : tools));
        } catch (Protocol.UnexpectedModelCall e) {
            // Not scripted: answer as the suite's endpoint does, 400 (not transient, so not retried).
            return new Answer(400, Map.of("Content-Type", "application/json"),
                    Protocol.stringify(Protocol.object("error", Protocol.object("message", e.getMessage()))));
        }
        if ("fault".equals(turn.get("kind"))) {
            return fault(turn, readTimeout);
        }
        int number = REPLIES.incrementAndGet();
        return completion(request, openaiMessage(turn, number), number);
    }

    private static Answer fault(Map<String, Object> turn, Double readTimeout) throws IOException {
        switch (String.valueOf(turn.get("fault"))) {
            case "connection":
                throw new SocketException("Connection reset (scripted)");
            case "hang":
                Protocol.notifyHang(readTimeout);
                throw new SocketTimeoutException("timeout");
            case "timeout":
                throw new SocketTimeoutException("timeout (scripted)");
            default:
                Protocol.FaultResponse fault = Protocol.faultResponse(turn);
                return new Answer(fault.status(), fault.headers(), fault.body());
        }
    }

    /** render.openai_message: a turn as the assistant message answering a request (a step's calls as
     *  `tool_calls` with ids `call_<number>_<i>`, the arguments as the model wrote them). */
    static Map<String, Object> openaiMessage(Map<String, Object> turn, int number) {
        if (!"step".equals(turn.get("kind"))) {
            return Protocol.object("role", "assistant", "content",
                    Protocol.replyText(Protocol.asObject(turn.get("outputs"))));
        }
        List<Object> calls = new ArrayList<>();
        calls.add(turn);
        calls.addAll(Protocol.asList(turn.get("parallel")));
        List<Object> toolCalls = new ArrayList<>();
        for (int i = 0; i < calls.size(); i++) {
            Map<String, Object> call = Protocol.asObject(calls.get(i));
            Object raw = call.get("raw_tool_args");
            toolCalls.add(Protocol.object("id", "call_" + number + (i == 0 ? "" : "_" + i), "type", "function",
                    "function", Protocol.object("name", call.get("tool_name"), "arguments",
                            raw instanceof String ? raw : Protocol.stringify(call.get("tool_args")))));
        }
        String thought = Protocol.asString(turn.get("thought"));
        return Protocol.object("role", "assistant", "content", thought.isEmpty() ? null : thought,
                "tool_calls", toolCalls);
    }

    /** A chat-completions message as the suite is shown it: its text, then its tool calls as JSON. */
    static Map<String, Object> shownMessage(Map<String, Object> message) {
        List<String> parts = new ArrayList<>();
        Object content = message.get("content");
        if (content instanceof String) {
            parts.add((String) content);
        } else if (content instanceof List) {
            StringBuilder text = new StringBuilder();
            for (Object part : (List<?>) content) {
                text.append(Protocol.asString(Protocol.asObject(part).get("text")));
            }
            parts.add(text.toString());
        }
        if (!Protocol.asList(message.get("tool_calls")).isEmpty()) {
            parts.add(Protocol.stringify(message.get("tool_calls")));
        }
        return Protocol.object("role", message.get("role"), "content", String.join("\n", parts));
    }

    private static Answer completion(Map<String, Object> request, Map<String, Object> reply, int number) {
        String finish = reply.containsKey("tool_calls") ? "tool_calls" : "stop";
        Map<String, String> headers = new LinkedHashMap<>();
        if (!Boolean.TRUE.equals(request.get("stream"))) {
            headers.put("Content-Type", "application/json");
            return new Answer(200, headers, Protocol.stringify(Protocol.object("id", "chatcmpl-" + number,
                    "object", "chat.completion", "created", 0, "model", request.get("model"),
                    "choices", List.of(Protocol.object("index", 0, "message", reply, "finish_reason", finish)),
                    "usage", Protocol.object("prompt_tokens", 0, "completion_tokens", 0, "total_tokens", 0))));
        }
        // Server-sent chat.completion.chunk events: the content in pieces, then the tool calls.
        List<Map<String, Object>> deltas = new ArrayList<>();
        deltas.add(Protocol.object("role", "assistant", "content", ""));
        String content = Protocol.asString(reply.get("content"));
        for (int start = 0; start < content.length(); start += 16) {
            deltas.add(Protocol.object("content", content.substring(start, Math.min(content.length(), start + 16))));
        }
        List<Object> calls = Protocol.asList(reply.get("tool_calls"));
        for (int index = 0; index < calls.size(); index++) {
            Map<String, Object> call = new LinkedHashMap<>(Protocol.asObject(calls.get(index)));
            call.put("index", index);
            deltas.add(Protocol.object("tool_calls", List.of(call)));
        }
        StringBuilder events = new StringBuilder();
        for (Map<String, Object> delta : deltas) {
            events.append(chunk(request, number, delta, null));
        }
        events.append(chunk(request, number, Protocol.object(), finish)).append("data: [DONE]\n\n");
        headers.put("Content-Type", "text/event-stream");
        return new Answer(200, headers, events.toString());
    }

    private static String chunk(Map<String, Object> request, int number, Map<String, Object> delta, String finish) {
        return "data: " + Protocol.stringify(Protocol.object("id", "chatcmpl-" + number, "object",
                "chat.completion.chunk", "created", 0, "model", request.get("model"), "choices",
                List.of(Protocol.object("index", 0, "delta", delta, "finish_reason", finish)))) + "\n\n";
    }
}
