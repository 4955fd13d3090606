package lc4jharness;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.net.SocketTimeoutException;
import java.net.http.HttpTimeoutException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;

import dev.langchain4j.exception.HttpException;
import dev.langchain4j.exception.TimeoutException;
import dev.langchain4j.http.client.HttpClient;
import dev.langchain4j.http.client.HttpClientBuilder;
import dev.langchain4j.http.client.HttpRequest;
import dev.langchain4j.http.client.SuccessfulHttpResponse;
import dev.langchain4j.http.client.sse.ServerSentEventListener;
import dev.langchain4j.http.client.sse.ServerSentEventListenerUtils;
import dev.langchain4j.http.client.sse.ServerSentEventParser;

import reactconformance.Protocol;
import reactconformance.shared.ChatCompletions;

/**
 * The model seam: a LangChain4j {@code HttpClient} (given to OpenAiChatModel and
 * OpenAiStreamingChatModel through their documented {@code httpClientBuilder}) that answers each
 * chat-completions request from the script, and fails as LangChain4j's own JdkHttpClient does: a
 * non-2xx status as HttpException, a timeout as LangChain4j's TimeoutException, another transport
 * fault as a RuntimeException wrapping the IOException; so LangChain4j's request building, reply
 * parsing and retries (OpenAiChatModel's maxRetries) run as in a user's run.
 */
final class ScriptedHttpClient implements HttpClient {
    /** The builder LangChain4j's OpenAI models are given: it keeps the timeouts they set. */
    static final class Builder implements HttpClientBuilder {
        private Duration connectTimeout;
        private Duration readTimeout;

        @Override
        public Duration connectTimeout() {
            return connectTimeout;
        }

        @Override
        public HttpClientBuilder connectTimeout(Duration timeout) {
            connectTimeout = timeout;
            return this;
        }

        @Override
        public Duration readTimeout() {
            return readTimeout;
        }

        @Override
        public HttpClientBuilder readTimeout(Duration timeout) {
            readTimeout = timeout;
            return this;
        }

        @Override
        public HttpClient build() {
            return new ScriptedHttpClient(readTimeout);
        }
    }

    private final Double readTimeout;

    private ScriptedHttpClient(Duration readTimeout) {
        this.readTimeout = readTimeout == null ? null : readTimeout.toMillis() / 1000.0;
    }

    /** The answer, or the exception JdkHttpClient.execute would throw in its place. */
    private SuccessfulHttpResponse answered(HttpRequest request) {
        ChatCompletions.Answer answer;
        try {
            answer = ChatCompletions.answer(request.body(), readTimeout);
        } catch (SocketTimeoutException e) {
            throw new TimeoutException(new HttpTimeoutException(e.getMessage()));
        } catch (IOException e) {
            throw new RuntimeException(e);
        }
        if (answer.status() < 200 || answer.status() >= 300) {
            throw new HttpException(answer.status(), answer.body());
        }
        Map<String, List<String>> headers = new LinkedHashMap<>();
        answer.headers().forEach((name, value) -> headers.put(name, List.of(value)));
        return SuccessfulHttpResponse.builder().statusCode(answer.status()).headers(headers)
                .body(answer.body().getBytes(StandardCharsets.UTF_8)).build();
    }

    @Override
    public SuccessfulHttpResponse execute(HttpRequest request) {
        return answered(request);
    }

    /** As JdkHttpClient's: answered on another thread (this run's), the events parsed by {@code parser}. */
    @Override
    public void execute(HttpRequest request, ServerSentEventParser parser, ServerSentEventListener listener) {
        String run = Protocol.currentRun();
        CompletableFuture.runAsync(() -> Protocol.withRun(run, () -> {
            SuccessfulHttpResponse response;
            try {
                response = answered(request);
            } catch (HttpException | TimeoutException e) {
                ServerSentEventListenerUtils.ignoringExceptions(() -> listener.onError(e));
                return;
            } catch (RuntimeException e) {
                Throwable error = e.getCause() instanceof IOException io ? new CompletionException(io) : e;
                ServerSentEventListenerUtils.ignoringExceptions(() -> listener.onError(error));
                return;
            }
            ServerSentEventListenerUtils.ignoringExceptions(() -> listener.onOpen(response));
            parser.parse(new ByteArrayInputStream(response.bodyBytes()), listener);
            ServerSentEventListenerUtils.ignoringExceptions(listener::onClose);
        }));
    }
}
