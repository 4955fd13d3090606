package springaiharness;

import java.io.IOException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;

import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationHandler;
import io.micrometer.observation.ObservationRegistry;
import okhttp3.Headers;
import okhttp3.Interceptor;
import okhttp3.MediaType;
import okhttp3.Response;
import okhttp3.ResponseBody;
import okio.Buffer;
import org.springframework.ai.chat.client.ChatClient;
import org.springframework.ai.chat.client.ChatClientResponse;
import org.springframework.ai.chat.client.advisor.ToolCallingAdvisor;
import org.springframework.ai.chat.messages.AssistantMessage;
import org.springframework.ai.chat.model.ChatResponse;
import org.springframework.ai.chat.model.Generation;
import org.springframework.ai.chat.observation.ChatModelObservationContext;
import org.springframework.ai.model.tool.ToolCallLimitExceededException;
import org.springframework.ai.model.tool.ToolCallingManager;
import org.springframework.ai.openai.OpenAiChatModel;
import org.springframework.ai.openai.OpenAiChatOptions;
import org.springframework.ai.tool.observation.ToolCallingObservationContext;

import reactconformance.Protocol;
import reactconformance.shared.ChatCompletions;
import reactconformance.shared.Snapshots;
import reactconformance.shared.ToolClasses;

/**
 * Spring AI's ChatClient with the suite's tools as {@code @Tool} methods passed through
 * {@code .tools(...)}, run by its default ToolCallingAdvisor and DefaultToolCallingManager, over
 * Spring AI's OpenAiChatModel (the official OpenAI Java client beneath it, on OkHttp). The model
 * seam is an OkHttp interceptor registered through OpenAiChatModel's documented
 * httpClientBuilderCustomizer, answering each chat-completions request from the script, so Spring
 * AI's request building, reply parsing and the client's retries run as in a user's run; in `http`
 * scenarios the model is pointed at the suite's endpoint (CallRequest.base_url) instead.
 */
public final class Harness implements Protocol.Handlers {
    private static final List<String> CLAIMED = List.of("max-steps-return", "per-call-cap", "parallel-tool-calls",
            "lm-retry", "http", "streaming");

    private static final Map<String, Object> NOT_CLAIMED = Protocol.object(
            "signature", "ChatClient is a native tool-calling loop: no signature, adapters or extraction call",
            "adapters", "ChatClient is a native tool-calling loop: the replies are tool calls, in no adapter format",
            "max-steps-error", "past maxTotalToolCalls DefaultToolCallingManager throws ToolCallLimitExceededException, "
                    + "which ToolCallingAdvisor.adviseCall catches and returns as the run's last generation: the "
                    + "call returns, it does not raise",
            "max-steps-extract", "past maxTotalToolCalls ToolCallingAdvisor.adviseCall returns the breach as the "
                    + "last generation (ToolCallLimitExceededException.buildGeneration); no extra call writes the "
                    + "outputs",
            "cap-summary", "the breach generation says only that the limit was exceeded "
                    + "(ToolCallLimitExceededException.buildMessage): no summary of what was tried",
            "repeated-error-stop", "DefaultToolExecutionExceptionProcessor hands each failure's message back to the "
                    + "model; nothing counts repeated failures",
            "tool-approval", "no approval hook: ToolCallback.call runs the tool when DefaultToolCallingManager "
                    + "reaches it, and ToolCallingAdvisor pauses for nothing",
            "approval-edit", "no approval hook",
            "durable-approvals", "no approval hook",
            "ask-user", "no built-in tool to ask the user",
            "async", "ChatClient's call() blocks until the run is over, and stream() is a Flux of the reply's "
                    + "chunks, its streaming form: no awaitable form of the whole run");

    private static final Map<String, Object> PARITY = Protocol.object(
            "stop_reason", "library: the last generation's finish reason, toolCallLimitExceeded "
                    + "(ToolCallLimitExceededException.FINISH_REASON) on the cap, finish otherwise",
            "iterations", "derived: counted from the run's own record, the chat model observations Spring AI "
                    + "reports to the ObservationRegistry given to ChatClient and OpenAiChatModel (one per model "
                    + "call)",
            "max_iterations", "none: the cap does not raise",
            "partial_run", "none: the cap does not raise",
            "concurrency", "per-run: not exercised (async is not claimed); a ChatClient and its OpenAiChatModel are "
                    + "built per call, as the model of an `http` call is pointed at its own endpoint");

    /** Each failing requirement, with what Spring AI 2.0.1 does and where: each checked by a direct
     *  run of ChatClient over OpenAiChatModel and @Tool methods, outside the suite. */
    private static final Map<String, Object> KNOWN_FAILURES = Protocol.object(
            "LOOP-3", "Spring AI's only cap counts tool calls, not model replies: DefaultToolCallingManager."
                    + "executeToolCall refuses a call past maxTotalToolCalls (ToolCallLimits.check) only once the "
                    + "model has asked for it, so after N tool-calling replies it makes the (N+1)-th model call "
                    + "(a direct run with maxTotalToolCalls(1) and two tool-calling replies: two model calls, then "
                    + "finish reason toolCallLimitExceeded)",
            "LOOP-5", "an unknown tool name ends the run: DefaultToolCallingManager.executeToolCall finds no "
                    + "ToolCallback for it (resolution fallback off by default) and throws IllegalStateException "
                    + "('No ToolCallback found for tool name: ...') instead of telling the model",
            "LOOP-6", "maxTotalToolCalls counts each call of a reply: DefaultToolCallingManager.executeToolCall "
                    + "refuses the 11th call of one reply under a cap of 10 (ToolCallLimits.check, "
                    + "ToolCallLimitBehavior.THROW) and ToolCallingAdvisor.adviseCall returns the breach, so the "
                    + "calls past the cap never run (a direct run: 10 of 11 ran, one model call)",
            "ARGS-2", "args that are the JSON null end the run: MethodToolCallback.extractToolArguments reads them as "
                    + "a null Map, and MethodToolCallback.call's Assert.state throws IllegalStateException "
                    + "('toolArguments must not be null'), which no ToolExecutionExceptionProcessor sees",
            "ARGS-4", "MethodToolCallback.buildTypedArgument converts what Jackson can: a missing String parameter "
                    + "reaches the tool as null, 50.5 reaches a long parameter as 50 (a direct run: the tool ran "
                    + "with 50 and null); a null for a primitive parameter ends the run with Method.invoke's "
                    + "IllegalArgumentException, which MethodToolCallback.callMethod does not catch; and a value "
                    + "Jackson refuses comes back as its message alone ('Cannot deserialize value of type `long` "
                    + "from String \"fifty\"...', DefaultToolExecutionExceptionProcessor.process), which names no "
                    + "field",
            "ARGS-6", "an argument the tool does not declare is dropped without a word: MethodToolCallback."
                    + "buildMethodArguments reads only the method's own parameters from the args map",
            "ERR-1", "a raising tool's observation is its exception's message alone ('the disk is on fire'): "
                    + "DefaultToolExecutionExceptionProcessor.process returns exception.getMessage() and nothing "
                    + "else, and the tool message (ToolResponseMessage, a chat-completions `tool` message) carries "
                    + "no error flag, so nothing tells the model the call failed",
            "STREAM-1", "stream() runs the whole tool loop but emits no step: ToolCallingAdvisor."
                    + "streamWithToolCallResponses filters out every chunk that carries tool calls "
                    + "(toolExecutionEligibilityChecker.isToolCallResponse) and handleToolCallRecursion runs the tools "
                    + "between the replies without emitting their results, so the Flux holds only the replies' text "
                    + "(a direct run with a tool call, then an answer: the tool ran, and the stream emitted the text "
                    + "beside the call and the answer's chunks, no tool call and no result)");

    /** Spring AI's primary tool form: {@code @Tool(name, description)} methods with {@code @ToolParam}. */
    private static final ToolClasses.Annotations TOOL_ANNOTATIONS = new ToolClasses.Annotations() {
        @Override
        public String library() {
            return "Spring AI";
        }

        @Override
        public String imports() {
            return "import org.springframework.ai.tool.annotation.Tool;\n"
                    + "import org.springframework.ai.tool.annotation.ToolParam;\n";
        }

        @Override
        public String tool(String name, String description) {
            return "@Tool(name = " + name + ", description = " + description + ")";
        }

        @Override
        public String parameter(String description) {
            return "@ToolParam(description = " + description + ")";
        }
    };

    private record Agent(Map<String, Object> spec) {}

    private final Map<String, Agent> agents = new ConcurrentHashMap<>();
    /** Each agent's last ChatResponse, the very object ChatClient handed the caller (none after an error). */
    private final Map<String, Optional<ChatResponse>> lastResults = new ConcurrentHashMap<>();

    @Override
    public Map<String, Object> hello(Map<String, Object> command) {
        return Protocol.object("name", "spring-ai", "version",
                Protocol.installedVersion("org.springframework.ai", "spring-ai-client-chat"), "capabilities", CLAIMED,
                "not_claimed", NOT_CLAIMED, "known_failures", KNOWN_FAILURES, "parity", PARITY,
                "dependencies", Protocol.installedVersions("org.springframework.ai:spring-ai-client-chat",
                        "org.springframework.ai:spring-ai-model", "org.springframework.ai:spring-ai-openai",
                        "com.fasterxml.jackson.core:jackson-annotations"));
    }

    @Override
    public Map<String, Object> build(Map<String, Object> command) {
        agents.put(Protocol.asString(command.get("agent")), new Agent(Protocol.asObject(command.get("spec"))));
        return Protocol.object("error", null);
    }

    /** The model seam: each request OkHttp is given, answered from the script as part of run {@code run}
     *  (a streamed request is sent from OkHttp's own threads). */
    static final class Scripted implements Interceptor {
        private final String run;

        Scripted(String run) {
            this.run = run;
        }

        @Override
        public Response intercept(Chain chain) throws IOException {
            Buffer body = new Buffer();
            if (chain.request().body() != null) {
                chain.request().body().writeTo(body);
            }
            double timeout = chain.readTimeoutMillis() / 1000.0;
            IOException[] failed = new IOException[1];
            ChatCompletions.Answer answer = Protocol.withRun(run, () -> {
                try {
                    return ChatCompletions.answer(body.readUtf8(), timeout > 0 ? timeout : null);
                } catch (IOException e) {
                    failed[0] = e;
                    return null;
                }
            });
            if (failed[0] != null) {
                throw failed[0];
            }
            String type = answer.headers().getOrDefault("Content-Type", "application/json");
            return new Response.Builder().request(chain.request()).protocol(okhttp3.Protocol.HTTP_1_1)
                    .code(answer.status()).message(answer.status() == 200 ? "OK" : "scripted")
                    .headers(Headers.of(answer.headers()))
                    .body(ResponseBody.create(answer.body(), MediaType.get(type))).build();
        }
    }

    /** The run's own record, as Spring AI reports it to an ObservationRegistry: each chat model
     *  call's response and each tool call (its name, args and result). */
    static final class Record implements ObservationHandler<Observation.Context> {
        final List<ChatResponse> responses = Collections.synchronizedList(new ArrayList<>());
        final List<ToolCallingObservationContext> toolCalls = Collections.synchronizedList(new ArrayList<>());

        @Override
        public boolean supportsContext(Observation.Context context) {
            return context instanceof ChatModelObservationContext || context instanceof ToolCallingObservationContext;
        }

        @Override
        public void onStop(Observation.Context context) {
            if (context instanceof ChatModelObservationContext model && model.getResponse() != null) {
                responses.add(model.getResponse());
            } else if (context instanceof ToolCallingObservationContext tool) {
                toolCalls.add(tool);
            }
        }

        @Override
        public void onError(Observation.Context context) {
            onStop(context);
        }
    }

    /** Spring AI's default tool loop with a cap of {@code cap} tool calls in a turn (its only cap). */
    private static ToolCallingAdvisor.Builder<?> toolLoop(int cap, ObservationRegistry registry) {
        return ToolCallingAdvisor.builder().toolCallingManager(ToolCallingManager.builder()
                .observationRegistry(registry).maxTotalToolCalls(cap).build());
    }

    @Override
    public Map<String, Object> run(Map<String, Object> command) throws Exception {
        String name = Protocol.asString(command.get("agent"));
        Agent agent = agents.get(name);
        if (agent == null) {
            throw new IllegalStateException("no agent " + command.get("agent") + " was built");
        }
        Map<String, Object> spec = agent.spec();
        Map<String, Object> call = Protocol.asObject(command.get("call"));
        String run = Protocol.currentRun();
        Record record = new Record();
        ObservationRegistry registry = ObservationRegistry.create();
        registry.observationConfig().observationHandler(record);
        Object baseUrl = call.get("base_url");
        OpenAiChatModel.Builder model = OpenAiChatModel.builder().observationRegistry(registry)
                .options(OpenAiChatOptions.builder().model("gpt-4o-mini")
                        .baseUrl(baseUrl == null ? "http://scripted.invalid/v1" : (String) baseUrl)
                        .apiKey(baseUrl == null ? "scripted" : "placeholder-key").build());
        if (baseUrl == null) {
            model.httpClientBuilderCustomizer(http -> http.interceptor(new Scripted(run)));
        }
        ChatResponse response;
        try {
            ChatClient client = ChatClient.builder(model.build(), registry, null, null,
                    toolLoop(((Number) spec.get("max_steps")).intValue(), registry)).build();
            ChatClient.ChatClientRequestSpec request = client.prompt().user(Protocol.userMessage(
                    Protocol.asObject(call.get("inputs"))));
            String instructions = Protocol.asString(Protocol.asObject(spec.get("signature")).get("instructions"));
            if (!instructions.isEmpty()) {
                request.system(instructions);
            }
            List<Object> declared = Protocol.asList(spec.get("tools"));
            if (!declared.isEmpty()) {
                request.tools(ToolClasses.instance(declared,
                        (tool, args) -> Protocol.withRun(run, () -> Protocol.callTool(tool, args)), TOOL_ANNOTATIONS));
            }
            if (call.get("max_steps") != null) { // a cap for this call only: its own tool loop
                request.advisors(toolLoop(((Number) call.get("max_steps")).intValue(), registry).build());
            }
            if ("stream".equals(call.get("mode"))) {
                return streamed(name, spec, request, record);
            }
            ChatClientResponse answered = request.call().chatClientResponse();
            response = answered.chatResponse();
        } catch (RuntimeException e) {
            lastResults.put(name, Optional.empty());
            return Protocol.object("outcome", Protocol.object("error", Protocol.errorInfo(e),
                    "trajectory", trajectory(record)));
        }
        lastResults.put(name, Optional.ofNullable(response));
        Generation last = response == null ? null : response.getResult();
        String text = last == null ? null : last.getOutput().getText();
        boolean capped = last != null
                && ToolCallLimitExceededException.FINISH_REASON.equals(last.getMetadata().getFinishReason());
        return Protocol.object("outcome", Protocol.object("outputs",
                Protocol.replyOutputs(Protocol.asObject(spec.get("signature")), text),
                "trajectory", trajectory(record), "stop_reason", capped ? "max_steps" : "finish",
                "iterations", record.responses.size()));
    }

    /** A run through stream(): the Flux of the replies' chunks, which ToolCallingAdvisor.streamWithToolCallResponses
     *  runs the whole tool loop within but emits no tool call or result of (it filters out every chunk that
     *  carries tool calls), so the stream gives no step event, only `done` once it completes. Its outputs are the
     *  text of the last reply's chunks (those with the last chunk's response id: the chunks of earlier replies,
     *  text written beside their tool calls, come first in the same stream). */
    private Map<String, Object> streamed(String name, Map<String, Object> spec,
            ChatClient.ChatClientRequestSpec request, Record record) {
        List<Object> events = new ArrayList<>();
        List<ChatResponse> chunks;
        try {
            chunks = request.stream().chatResponse().collectList().block();
        } catch (RuntimeException e) {
            lastResults.put(name, Optional.empty());
            return Protocol.object("outcome", Protocol.object("error", Protocol.errorInfo(e),
                    "trajectory", trajectory(record), "events", events));
        }
        List<ChatResponse> all = chunks == null ? List.of() : chunks;
        ChatResponse lastChunk = all.isEmpty() ? null : all.get(all.size() - 1);
        lastResults.put(name, Optional.ofNullable(lastChunk));
        String lastId = lastChunk == null ? null : lastChunk.getMetadata().getId();
        StringBuilder text = new StringBuilder();
        boolean capped = false;
        for (ChatResponse chunk : all) {
            Generation generation = chunk.getResult();
            if (generation == null) {
                continue;
            }
            capped |= ToolCallLimitExceededException.FINISH_REASON.equals(generation.getMetadata().getFinishReason());
            if (Objects.equals(chunk.getMetadata().getId(), lastId) && generation.getOutput().getText() != null) {
                text.append(generation.getOutput().getText());
            }
        }
        Map<String, Object> outputs = Protocol.replyOutputs(Protocol.asObject(spec.get("signature")), text.toString());
        String stop = capped ? "max_steps" : "finish";
        events.add(Protocol.object("kind", "done", "model_calls", ChatCompletions.modelCalls(), "stop_reason", stop,
                "outputs", outputs));
        return Protocol.object("outcome", Protocol.object("outputs", outputs, "trajectory", trajectory(record),
                "stop_reason", stop, "iterations", record.responses.size(), "events", events));
    }

    /** The run's steps: each tool call Spring AI observed, with the text of the reply that made it.
     *  Spring AI has no error flag: a failed call's result is the text DefaultToolExecutionExceptionProcessor
     *  made of it, as a chat-completions tool message, which has none either. */
    private static List<Object> trajectory(Record record) {
        Map<String, String> thoughts = new ConcurrentHashMap<>();
        synchronized (record.responses) {
            for (ChatResponse response : record.responses) {
                for (Generation generation : response.getResults()) {
                    AssistantMessage message = generation.getOutput();
                    for (AssistantMessage.ToolCall toolCall : message.getToolCalls()) {
                        String text = message.getText();
                        thoughts.put(toolCall.id(), text == null ? "" : text);
                    }
                }
            }
        }
        List<Object> steps = new ArrayList<>();
        synchronized (record.toolCalls) {
            for (ToolCallingObservationContext tool : record.toolCalls) {
                Object args;
                try {
                    args = Protocol.wire(Protocol.parse(tool.getToolCallArguments()));
                } catch (IllegalArgumentException e) {
                    args = tool.getToolCallArguments();
                }
                String thought = thoughts.get(tool.getToolCallId());
                steps.add(Protocol.object("thought", thought == null || thought.isEmpty() ? null : thought,
                        "tool_name", tool.getToolDefinition().name(), "tool_args", args,
                        "observation", tool.getToolCallResult(), "is_error", null, "call_id", tool.getToolCallId()));
            }
        }
        return steps;
    }

    @Override
    public Map<String, Object> mutateLastResult(Map<String, Object> command) {
        // The caller's containers are the ChatResponse's: its generations, and the last reply's
        // tool calls. A run that raised handed the caller only the exception, which holds none.
        Optional<ChatResponse> last = lastResults.getOrDefault(Protocol.asString(command.get("agent")),
                Optional.empty());
        if (last.isEmpty()) {
            return Protocol.object("changed", List.of());
        }
        ChatResponse response = last.get();
        String marker = Protocol.asString(command.get("marker"));
        List<Object> changed = new ArrayList<>();
        changed.add(Snapshots.mutated("ChatResponse.getResults() (" + response.getResults().size() + " generations)",
                response.getResults(), new Generation(AssistantMessage.builder().content(marker).build())));
        if (response.getResult() != null) {
            List<AssistantMessage.ToolCall> calls = response.getResult().getOutput().getToolCalls();
            changed.add(Snapshots.mutated("the last reply's getToolCalls() (" + calls.size() + " calls)", calls,
                    new AssistantMessage.ToolCall(marker, "function", marker, "{}")));
        }
        return Protocol.object("changed", changed);
    }

    public static void main(String[] args) {
        Protocol.serve(new Harness());
    }
}
