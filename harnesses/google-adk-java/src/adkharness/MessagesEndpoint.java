package adkharness;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

import com.anthropic.core.RequestOptions;
import com.anthropic.core.Sleeper;
import com.anthropic.core.http.Headers;
import com.anthropic.core.http.HttpClient;
import com.anthropic.core.http.HttpRequest;
import com.anthropic.core.http.HttpResponse;

import reactconformance.Protocol;
import reactconformance.shared.ChatCompletions;

/**
 * Anthropic's Messages API (POST .../v1/messages) in process, as an Anthropic Java client's
 * {@code HttpClient} (ClientOptions.httpClient: "use the one published in anthropic-java-client-okhttp
 * or implement your own"), beneath the client's RetryingHttpClient, so its retries run as in a user's
 * run: the request becomes the chat-completions body the scripted endpoint answers
 * (reactconformance.shared.ChatCompletions, as conformance/_messages_api.py translates it for the
 * suite's endpoint), and the answer becomes a Messages {@code message}, or the error body the API sends
 * with the status. A transport fault is thrown as the IOException OkHttp raises for it, which the
 * SDK's own OkHttpClient wraps in AnthropicIoException (client/okhttp/OkHttpClient.kt), as here.
 */
final class MessagesEndpoint implements HttpClient {
    /** The error `type` the real API sends with each status. */
    private static final Map<Integer, String> ERRORS = Map.of(400, "invalid_request_error", 401,
            "authentication_error", 404, "not_found_error", 429, "rate_limit_error", 500, "api_error", 503,
            "overloaded_error", 529, "overloaded_error");

    @Override
    public HttpResponse execute(HttpRequest request, RequestOptions options) {
        ByteArrayOutputStream body = new ByteArrayOutputStream();
        if (request.body() != null) {
            request.body().writeTo(body);
        }
        // The request's own read timeout, as OkHttp would apply it from the client's Timeout.
        Double readTimeout = options.getTimeout() == null ? null
                : options.getTimeout().read().toMillis() / 1000.0;
        ChatCompletions.Answer answer;
        try {
            answer = ChatCompletions.answer(Protocol.stringify(chatBody(Protocol.asObject(
                    Protocol.parse(body.toString(StandardCharsets.UTF_8))))), readTimeout);
        } catch (java.io.IOException e) {
            throw new com.anthropic.errors.AnthropicIoException("Request failed", e);
        }
        String text = answer.status() == 200 ? message(Protocol.asObject(Protocol.parse(answer.body())))
                : error(answer.status(), answer.body());
        Headers.Builder headers = Headers.builder();
        answer.headers().forEach(headers::put);
        headers.put("Content-Type", "application/json");
        return response(answer.status(), headers.build(), text);
    }

    @Override
    public CompletableFuture<HttpResponse> executeAsync(HttpRequest request, RequestOptions options) {
        String run = Protocol.currentRun();
        return CompletableFuture.supplyAsync(() -> Protocol.withRun(run, () -> execute(request, options)));
    }

    @Override
    public void close() {}

    /** _messages_api.chat_body: `system` and the messages (tool_use blocks as an assistant's tool
     *  calls, tool_result blocks as tool messages), and the tools, in chat-completions form. */
    static Map<String, Object> chatBody(Map<String, Object> body) {
        List<Object> messages = new ArrayList<>();
        String system = text(body.get("system"));
        if (!system.isEmpty()) {
            messages.add(Protocol.object("role", "system", "content", system));
        }
        for (Object m : Protocol.asList(body.get("messages"))) {
            Map<String, Object> message = Protocol.asObject(m);
            Object content = message.get("content");
            List<Object> blocks = content instanceof String ? List.of(Protocol.object("type", "text", "text", content))
                    : Protocol.asList(content);
            List<Object> texts = new ArrayList<>();
            List<Object> calls = new ArrayList<>();
            boolean results = false;
            for (Object b : blocks) {
                Map<String, Object> block = Protocol.asObject(b);
                switch (Protocol.asString(block.get("type"))) {
                    case "tool_result" -> {
                        results = true;
                        messages.add(Protocol.object("role", "tool", "tool_call_id", block.get("tool_use_id"),
                                "content", text(block.get("content"))));
                    }
                    case "text" -> texts.add(block);
                    case "tool_use" -> calls.add(Protocol.object("id", block.get("id"), "type", "function",
                            "function", Protocol.object("name", block.get("name"), "arguments",
                                    block.get("input") instanceof String s ? s : Protocol.stringify(block.get("input")))));
                    default -> { }
                }
            }
            String said = text(texts);
            if (!said.isEmpty() || !calls.isEmpty() || !results) {
                Map<String, Object> chat = Protocol.object("role", message.get("role"), "content", said);
                if (!calls.isEmpty()) {
                    chat.put("tool_calls", calls);
                }
                messages.add(chat);
            }
        }
        List<Object> tools = new ArrayList<>();
        for (Object t : Protocol.asList(body.get("tools"))) {
            Map<String, Object> tool = Protocol.asObject(t);
            if (tool.containsKey("input_schema")) {
                tools.add(Protocol.object("type", "function", "function", Protocol.object("name", tool.get("name"),
                        "description", Protocol.asString(tool.get("description")), "parameters", tool.get("input_schema"))));
            }
        }
        Map<String, Object> chat = Protocol.object("model", body.get("model"), "messages", messages, "stream",
                Boolean.TRUE.equals(body.get("stream")));
        if (!tools.isEmpty()) {
            chat.put("tools", tools);
        }
        return chat;
    }

    private static String text(Object content) {
        if (content instanceof List<?> blocks) {
            StringBuilder text = new StringBuilder();
            blocks.forEach(b -> text.append(Protocol.asString(Protocol.asObject(b).get("text"))));
            return text.toString();
        }
        return content == null ? "" : Protocol.asString(content);
    }

    /** _messages_api.reply: the chat.completion's message as a Messages `message` (its calls as
     *  tool_use blocks, input the arguments' object, or their raw text when they are not one). */
    private static String message(Map<String, Object> completion) {
        Map<String, Object> reply = Protocol.asObject(Protocol.asObject(
                Protocol.asList(completion.get("choices")).get(0)).get("message"));
        List<Object> content = new ArrayList<>();
        String said = Protocol.asString(reply.get("content"));
        if (!said.isEmpty()) {
            content.add(Protocol.object("type", "text", "text", said));
        }
        List<Object> calls = Protocol.asList(reply.get("tool_calls"));
        for (Object c : calls) {
            Map<String, Object> call = Protocol.asObject(c);
            Map<String, Object> function = Protocol.asObject(call.get("function"));
            String arguments = Protocol.asString(function.get("arguments"));
            Object input;
            try {
                input = Protocol.parse(arguments);
            } catch (IllegalArgumentException e) {
                input = arguments;
            }
            content.add(Protocol.object("type", "tool_use", "id", "toolu_"
                    + Protocol.asString(call.get("id")).replaceFirst("^call_", ""), "name", function.get("name"),
                    "input", input instanceof Map ? input : arguments));
        }
        String id = Protocol.asString(completion.get("id")).replaceFirst("^chatcmpl-", "msg_");
        return Protocol.stringify(Protocol.object("id", id, "type", "message", "role", "assistant", "model",
                completion.get("model"), "stop_sequence", null, "content", content, "stop_reason",
                calls.isEmpty() ? "end_turn" : "tool_use", "usage", Protocol.object("input_tokens", 0,
                        "output_tokens", 0)));
    }

    /** _messages_api.error: the API's error body for `status`, the endpoint's message kept. */
    private static String error(int status, String body) {
        String message;
        try {
            message = Protocol.asString(Protocol.asObject(Protocol.asObject(Protocol.parse(body)).get("error"))
                    .get("message"));
        } catch (RuntimeException e) {
            message = body;
        }
        return Protocol.stringify(Protocol.object("type", "error", "error", Protocol.object("type",
                ERRORS.getOrDefault(status, status >= 500 ? "api_error" : "invalid_request_error"),
                "message", message)));
    }

    private static HttpResponse response(int status, Headers headers, String text) {
        byte[] bytes = text.getBytes(StandardCharsets.UTF_8);
        return new HttpResponse() {
            @Override
            public int statusCode() {
                return status;
            }

            @Override
            public Headers headers() {
                return headers;
            }

            @Override
            public InputStream body() {
                return new ByteArrayInputStream(bytes);
            }

            @Override
            public void close() {}
        };
    }

    /** The client's retry waits, passed on the run's model clock (ClientOptions.sleeper, "useful for
     *  fake delays in tests") instead of slept: the waits are the client's own backoff. */
    static final class ModelClock implements Sleeper {
        @Override
        public void sleep(Duration duration) {
            Protocol.notifySleep(duration.toNanos() / 1e9);
        }

        @Override
        public CompletableFuture<Void> sleepAsync(Duration duration) {
            sleep(duration);
            return CompletableFuture.completedFuture(null);
        }

        @Override
        public void close() {}
    }
}
