package adkharness;

import com.anthropic.client.AnthropicClientImpl;
import com.anthropic.client.okhttp.AnthropicOkHttpClient;
import com.anthropic.core.ClientOptions;
import com.google.adk.models.BaseLlm;
import com.google.adk.models.Claude;

/**
 * The model of a call over HTTP, or of one whose script holds a transport fault: ADK's {@code Claude}
 * (models/Claude.java, its model class over Anthropic's Java client, which ADK depends on), given the
 * client as ADK's docs build it, with the client's defaults (maxRetries 2 with exponential backoff,
 * RetryingHttpClient; a 10-minute timeout, Timeout.kt). ADK's default model, Gemini over google-genai,
 * speaks only Gemini's API, which the suite's endpoint does not serve.
 */
final class Transport {
    /** The model name the client sends; the endpoint answers any. */
    static final String MODEL = "claude-sonnet-4-5";
    /** The API key the suite's endpoint takes (conformance/server.py API_KEY). */
    static final String API_KEY = "placeholder-key";

    private Transport() {}

    /** Claude over the client pointed at {@code baseUrl} (the suite's endpoint: its {@code /v1}, which
     *  the client adds, removed), or, with none, over the client whose HttpClient is the in-process
     *  Messages endpoint (MessagesEndpoint), its retry waits on the run's model clock. */
    static BaseLlm claude(String baseUrl) {
        if (baseUrl != null) {
            return new Claude(MODEL, AnthropicOkHttpClient.builder()
                    .baseUrl(baseUrl.replaceFirst("/v1/?$", "")).apiKey(API_KEY).build());
        }
        return new Claude(MODEL, new AnthropicClientImpl(ClientOptions.builder().httpClient(new MessagesEndpoint())
                .sleeper(new MessagesEndpoint.ModelClock()).putHeader("x-api-key", API_KEY).build()));
    }
}
