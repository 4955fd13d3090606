package lc4jharness;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.atomic.AtomicInteger;

import dev.langchain4j.agent.tool.ToolExecutionRequest;
import dev.langchain4j.data.message.AiMessage;
import dev.langchain4j.exception.HttpException;
import dev.langchain4j.model.chat.ChatModel;
import dev.langchain4j.model.chat.StreamingChatModel;
import dev.langchain4j.model.chat.response.ChatResponse;
import dev.langchain4j.model.openai.OpenAiChatModel;
import dev.langchain4j.model.openai.OpenAiStreamingChatModel;
import dev.langchain4j.service.AiServices;
import dev.langchain4j.service.Result;
import dev.langchain4j.service.TokenStream;
import dev.langchain4j.service.tool.ToolExecution;
import dev.langchain4j.service.tool.ToolExecutionResult;
import dev.langchain4j.invocation.InvocationContext;

import reactconformance.Protocol;
import reactconformance.shared.ChatCompletions;
import reactconformance.shared.ToolClasses;
import reactconformance.shared.Snapshots;

/**
 * LangChain4j's AiServices with the suite's tools as @Tool methods, over LangChain4j's
 * OpenAiChatModel (OpenAiStreamingChatModel when streaming). The model seam is a LangChain4j
 * HttpClient given through the models' documented httpClientBuilder ({@link ScriptedHttpClient}),
 * answering each chat-completions request from the script, so LangChain4j's request building, reply
 * parsing and retries run as in a user's run; in `http` scenarios the model is pointed at the suite's
 * endpoint (CallRequest.base_url) over its default client instead.
 */
public final class Harness implements Protocol.Handlers {
    /** The AI service: a user message in, LangChain4j's Result out (its tool executions included). */
    public interface Assistant {
        Result<String> chat(String userMessage);
    }

    /** The streaming AI service: LangChain4j's TokenStream, its documented streaming form. */
    public interface StreamingAssistant {
        TokenStream chat(String userMessage);
    }

    private static final List<String> CLAIMED = List.of("max-steps-error", "parallel-tool-calls", "streaming",
            "lm-retry", "http");

    private static final Map<String, Object> NOT_CLAIMED = Protocol.object(
            "signature", "AiServices is a native tool-calling loop: no signature, adapters or extraction call",
            "adapters", "AiServices is a native tool-calling loop: the replies are tool calls, in no adapter format",
            "max-steps-extract", "past maxToolCallingRoundTrips the service throws a RuntimeException "
                    + "(ToolService.executeInferenceAndToolsLoop); no extra call writes the outputs",
            "max-steps-return", "past maxToolCallingRoundTrips the service throws a RuntimeException "
                    + "(ToolService.executeInferenceAndToolsLoop); it never returns capped",
            "cap-summary", "past maxToolCallingRoundTrips the service throws: it returns no summary",
            "per-call-cap", "maxToolCallingRoundTrips is set once on the AiServices builder; an AI service method "
                    + "takes no cap",
            "repeated-error-stop", "the default ToolExecutionErrorHandler hands each failure's message back to the "
                    + "model (ToolService); nothing counts repeated failures",
            "tool-approval", "no approval hook: beforeToolExecution (AiServices) is a Consumer that observes a "
                    + "call and returns nothing that could refuse it",
            "approval-edit", "no approval hook",
            "durable-approvals", "no approval hook",
            "ask-user", "no built-in tool to ask the user",
            "async", "an AI service method returns its value or a Result when the run is over, or a TokenStream "
                    + "(or what a TokenStreamAdapter makes of one, such as langchain4j-reactor's Flux), its "
                    + "streaming form (DefaultAiServices): no awaitable form of the whole run");

    private static final Map<String, Object> PARITY = Protocol.object(
            "stop_reason", "derived: finish on every returned Result, as ToolService.executeInferenceAndToolsLoop "
                    + "returns only after a reply without tool calls (past the cap it throws)",
            "iterations", "derived: counted from the run's own record, Result.intermediateResponses() (one per "
                    + "tool-calling reply; TokenStream's onIntermediateResponse when streaming) and the final reply",
            "max_iterations", "derived: the maxToolCallingRoundTrips the harness gave AiServices (the "
                    + "RuntimeException's message states the same number)",
            "partial_run", "none: the RuntimeException past the cap carries nothing, and with AiServices' defaults "
                    + "(no ChatMemory) the run's messages live only in ToolService.executeInferenceAndToolsLoop",
            "concurrency", "per-run: not exercised (async is not claimed); an AiServices is built per call so that "
                    + "each call's @Tool methods report to that call's run");

    /** Each failing requirement, with what LangChain4j 1.19.0 does and where: each checked by a direct
     *  run of AiServices and @Tool methods over a scripted ChatModel, or (NET-1) of OpenAiChatModel over
     *  its default HTTP client, outside the suite. */
    private static final Map<String, Object> KNOWN_FAILURES = Protocol.object(
            "LOOP-3", "maxToolCallingRoundTrips(N) counts down before it looks at each reply "
                    + "(ToolService.executeInferenceAndToolsLoop: `if (roundTripsLeft-- == 0) throw`): after N "
                    + "tool-calling replies it makes the (N+1)-th model call, then throws whatever that reply is, a "
                    + "final answer included (a direct run with a cap of 1, a tool call then an answer: two model "
                    + "calls, then RuntimeException 'exceeded 1 tool calling round trips')",
            "EXH-2", "past the cap the service throws a bare RuntimeException (ToolService."
                    + "executeInferenceAndToolsLoop, Exceptions.runtime): the tool executions so far stay in the "
                    + "loop's local list, and the exception carries no history",
            "EXH-3", "maxToolCallingRoundTrips(0) is accepted (AiServices and ToolService check nothing), and "
                    + "the first model call is made before the count throws (a direct run with a cap of 0: one "
                    + "model call, then RuntimeException 'exceeded 0 tool calling round trips', whatever it replied)",
            "LOOP-5", "an unknown tool name meets the default HallucinatedToolNameStrategy.THROW_EXCEPTION "
                    + "(ToolService.applyToolHallucinationStrategy): the run ends with a RuntimeException ('The LLM "
                    + "is trying to execute the ... tool, but no such tool exists') instead of telling the model",
            "ARGS-2", "args that are JSON but not an object end the run: ToolExecutionRequestUtil.argumentsAsMap "
                    + "reads them as a Map with Jackson, which raises (an array, a number, a string) or gives null "
                    + "('null', then a NullPointerException in DefaultToolExecutor), and the default "
                    + "ToolArgumentsErrorHandler rethrows (ToolService.DEFAULT_TOOL_ARGUMENTS_ERROR_HANDLER)",
            "ARGS-3", "malformed args end the run: the default ToolArgumentsErrorHandler rethrows Jackson's parse "
                    + "error (ToolService.DEFAULT_TOOL_ARGUMENTS_ERROR_HANDLER) instead of telling the model; and "
                    + "args that parse after ToolExecutionRequestUtil.argumentsAsMap's retry (it strips a leading "
                    + "and a trailing quote, unescapes \\\" and removes trailing commas) reach the tool repaired, "
                    + "as blank args reach it as {} (argumentsAsMap: isNullOrBlank gives Map.of())",
            "ARGS-4", "DefaultToolExecutor.prepareArguments and coerceArgument convert what they can: a list "
                    + "reaches a String parameter as its toString ('[Ann, Bob]'), a missing String parameter "
                    + "reaches the tool as null (only a missing primitive is refused), and a value that does not "
                    + "convert ('fifty', 50.5 for a long) raises IllegalArgumentException, which the default "
                    + "ToolArgumentsErrorHandler rethrows, ending the run instead of telling the model",
            "ARGS-5", "args nested past 1000 levels end the run: Jackson's default StreamReadConstraints refuse "
                    + "them (maxNestingDepth 1000, in LangChain4j's JacksonJsonCodec), ToolExecutionRequestUtil."
                    + "argumentsAsMap's retry unescapes \\\" and fails on what it changed, and the default "
                    + "ToolArgumentsErrorHandler rethrows",
            "ARGS-6", "an argument the tool does not declare is dropped without a word: DefaultToolExecutor."
                    + "prepareArguments reads only the method's own parameters from the args map",
            "NET-1", "a 429 or 503 is retried after LangChain4j's own backoff, never the wait the endpoint asks for: "
                    + "OpenAiChatModel.doChat retries through RetryUtils.withRetryMappingExceptions, whose "
                    + "DEFAULT_RETRY_POLICY sleeps 500 ms * 1.5^retry with 20% jitter, and the HttpException that "
                    + "JdkHttpClient.execute raises keeps only the status and body, not the Retry-After header (a "
                    + "direct run of OpenAiChatModel over its default client against a loopback endpoint answering "
                    + "429, then 503, with Retry-After: 3: the retry came after 0.9 s, then 0.7 s)");

    /** LangChain4j's primary tool form: {@code @Tool(name, value)} methods with {@code @P} parameters. */
    private static final ToolClasses.Annotations TOOL_ANNOTATIONS = new ToolClasses.Annotations() {
        @Override
        public String library() {
            return "LangChain4j";
        }

        @Override
        public String imports() {
            return "import dev.langchain4j.agent.tool.P;\nimport dev.langchain4j.agent.tool.Tool;\n";
        }

        @Override
        public String tool(String name, String description) {
            return "@Tool(name = " + name + ", value = " + description + ")";
        }

        @Override
        public String parameter(String description) {
            return "@P(" + description + ")";
        }
    };

    /** Where the scripted models' requests are addressed: the scripted client answers them all. */
    private static final String SCRIPTED_URL = "http://scripted.invalid/v1";

    private record Agent(Map<String, Object> spec) {}

    private final Map<String, Agent> agents = new ConcurrentHashMap<>();
    /** Each agent's last Result, the very object LangChain4j handed the caller (none after an error). */
    private final Map<String, Optional<Result<String>>> lastResults = new ConcurrentHashMap<>();

    @Override
    public Map<String, Object> hello(Map<String, Object> command) {
        return Protocol.object("name", "langchain4j", "version",
                Protocol.installedVersion("dev.langchain4j", "langchain4j"), "capabilities", CLAIMED,
                "not_claimed", NOT_CLAIMED, "known_failures", KNOWN_FAILURES, "parity", PARITY,
                "dependencies", Protocol.installedVersions("dev.langchain4j:langchain4j",
                        "dev.langchain4j:langchain4j-core", "dev.langchain4j:langchain4j-open-ai"));
    }

    @Override
    public Map<String, Object> build(Map<String, Object> command) {
        agents.put(Protocol.asString(command.get("agent")), new Agent(Protocol.asObject(command.get("spec"))));
        return Protocol.object("error", null);
    }

    /** LangChain4j's OpenAI chat model over the scripted HTTP client, or, in `http` scenarios, over
     *  its default client pointed at the call's endpoint. */
    private static ChatModel chatModel(Object baseUrl) {
        OpenAiChatModel.OpenAiChatModelBuilder model = OpenAiChatModel.builder().modelName("gpt-4o-mini");
        if (baseUrl == null) {
            return model.httpClientBuilder(new ScriptedHttpClient.Builder()).baseUrl(SCRIPTED_URL).apiKey("scripted")
                    .build();
        }
        return model.baseUrl((String) baseUrl).apiKey("placeholder-key").build();
    }

    /** The streaming form of {@link #chatModel}. */
    private static StreamingChatModel streamingChatModel(Object baseUrl) {
        OpenAiStreamingChatModel.OpenAiStreamingChatModelBuilder model = OpenAiStreamingChatModel.builder()
                .modelName("gpt-4o-mini");
        if (baseUrl == null) {
            return model.httpClientBuilder(new ScriptedHttpClient.Builder()).baseUrl(SCRIPTED_URL).apiKey("scripted")
                    .build();
        }
        return model.baseUrl((String) baseUrl).apiKey("placeholder-key").build();
    }

    private static String userMessage(Map<String, Object> call) {
        Map<String, Object> inputs = Protocol.asObject(call.get("inputs"));
        if (inputs.size() == 1) {
            Object only = inputs.values().iterator().next();
            return only instanceof String ? (String) only : Protocol.stringify(only);
        }
        List<String> lines = new ArrayList<>();
        inputs.forEach((name, value) -> lines.add(name + ": " + (value instanceof String ? value : Protocol.stringify(value))));
        return String.join("\n", lines);
    }

    @Override
    public Map<String, Object> run(Map<String, Object> command) throws Exception {
        Agent agent = agents.get(Protocol.asString(command.get("agent")));
        if (agent == null) {
            throw new IllegalStateException("no agent " + command.get("agent") + " was built");
        }
        Map<String, Object> spec = agent.spec();
        Map<String, Object> call = Protocol.asObject(command.get("call"));
        String run = Protocol.currentRun();
        if ("stream".equals(call.get("mode"))) {
            return stream(spec, call, run);
        }
        AiServices<Assistant> builder = configured(AiServices.builder(Assistant.class)
                .chatModel(chatModel(call.get("base_url"))), spec, run);
        Result<String> result;
        try {
            result = builder.build().chat(userMessage(call));
            lastResults.put(Protocol.asString(command.get("agent")), Optional.of(result));
        } catch (RuntimeException e) {
            lastResults.put(Protocol.asString(command.get("agent")), Optional.empty());
            return Protocol.object("outcome", Protocol.object("error", failure(e, spec)));
        }
        return Protocol.object("outcome", outcome(spec, result.toolExecutions(), result.content(),
                result.intermediateResponses().size() + 1));
    }

    /** The service's builder with the suite's cap, tools (as @Tool methods) and instructions. */
    private static <T> AiServices<T> configured(AiServices<T> builder, Map<String, Object> spec, String run)
            throws Exception {
        builder.maxToolCallingRoundTrips(((Number) spec.get("max_steps")).intValue());
        List<Object> declared = Protocol.asList(spec.get("tools"));
        if (!declared.isEmpty()) { // AiServices refuses an object without @Tool methods
            builder.tools(ToolClasses.instance(declared,
                    (name, args) -> Protocol.withRun(run, () -> Protocol.callTool(name, args)), TOOL_ANNOTATIONS));
        }
        String instructions = Protocol.asString(Protocol.asObject(spec.get("signature")).get("instructions"));
        if (!instructions.isEmpty()) {
            builder.systemMessageProvider(memoryId -> instructions);
        }
        return builder;
    }

    /** A run through TokenStream: a step event per tool execution as LangChain4j reports it
     *  (onToolExecuted), then `done` on the complete response, or the error it reported. */
    private Map<String, Object> stream(Map<String, Object> spec, Map<String, Object> call, String run) throws Exception {
        StreamingAssistant assistant = configured(AiServices.builder(StreamingAssistant.class)
                .streamingChatModel(streamingChatModel(call.get("base_url"))), spec, run).build();
        List<Object> events = java.util.Collections.synchronizedList(new ArrayList<>());
        List<ToolExecution> executions = java.util.Collections.synchronizedList(new ArrayList<>());
        CompletableFuture<ChatResponse> finished = new CompletableFuture<>();
        AtomicInteger intermediate = new AtomicInteger();
        assistant.chat(userMessage(call))
                .onToolExecuted(execution -> {
                    executions.add(execution);
                    events.add(Protocol.object("kind", "step", "model_calls", ChatCompletions.modelCalls(), "step", step(execution)));
                })
                .onIntermediateResponse(response -> intermediate.incrementAndGet())
                .onPartialResponse(text -> { })
                .onCompleteResponse(finished::complete)
                .onError(finished::completeExceptionally)
                .start();
        ChatResponse response;
        try {
            response = finished.get();
        } catch (ExecutionException e) {
            return Protocol.object("outcome", Protocol.object("error", failure(e.getCause(), spec), "events", events));
        }
        Map<String, Object> outcome = outcome(spec, executions, response.aiMessage().text(), intermediate.get() + 1);
        events.add(Protocol.object("kind", "done", "model_calls", ChatCompletions.modelCalls(), "stop_reason", "finish",
                "outputs", outcome.get("outputs")));
        outcome.put("events", events);
        return Protocol.object("outcome", outcome);
    }

    /** What the service raised: past the cap, ToolService's RuntimeException naming maxToolCallingRoundTrips.
     *  A failed model call is ExceptionMapper's exception (InvalidRequestException, InternalServerException...)
     *  whose message is the endpoint's body: the HTTP status stays in its cause, the HttpException's
     *  statusCode(), and is reported as the error's structured `status` field, as it is given. */
    private static Map<String, Object> failure(Throwable error, Map<String, Object> spec) {
        if (String.valueOf(error.getMessage()).contains("(maxToolCallingRoundTrips)")) {
            return Protocol.errorInfo(error, "max-iterations", Protocol.object("max_iterations", spec.get("max_steps")));
        }
        for (Throwable cause = error; cause != null; cause = cause.getCause() == cause ? null : cause.getCause()) {
            if (cause instanceof HttpException http) {
                return Protocol.errorInfo(error, null, Protocol.object("status", http.statusCode()));
            }
        }
        return Protocol.errorInfo(error);
    }

    private static Map<String, Object> step(ToolExecution execution) {
        ToolExecutionRequest request = execution.request();
        Object args;
        try {
            args = Protocol.wire(Protocol.parse(request.arguments()));
        } catch (IllegalArgumentException e) {
            args = request.arguments();
        }
        return Protocol.object("thought", null, "tool_name", request.name(), "tool_args", args,
                "observation", execution.result(), "is_error", execution.hasFailed(), "call_id", request.id());
    }

    /** The suite's outcome of a finished run: its tool executions as steps, its reply as the outputs. */
    private static Map<String, Object> outcome(Map<String, Object> spec, List<ToolExecution> executions, String text,
            int iterations) {
        List<Object> trajectory = new ArrayList<>();
        for (ToolExecution execution : executions) {
            trajectory.add(step(execution));
        }
        Map<String, Object> outputs = Protocol.replyOutputs(Protocol.asObject(spec.get("signature")), text);
        return Protocol.object("outputs", outputs, "trajectory", trajectory, "stop_reason", "finish",
                "iterations", iterations);
    }

    @Override
    public Map<String, Object> mutateLastResult(Map<String, Object> command) {
        // The caller's containers are the Result's lists: LangChain4j hands them out unmodifiable
        // (Result's constructor copies them with Utils.copy, List.copyOf), so the mutation raises.
        // A run that raised handed the caller only the exception, which holds no container.
        Optional<Result<String>> last = lastResults.getOrDefault(Protocol.asString(command.get("agent")), Optional.empty());
        if (last.isEmpty()) {
            return Protocol.object("changed", List.of());
        }
        Result<String> result = last.get();
        List<Object> changed = new ArrayList<>();
        changed.add(Snapshots.mutated("Result.toolExecutions() (" + result.toolExecutions().size() + " executions)",
                result.toolExecutions(), ToolExecution.builder()
                        .request(ToolExecutionRequest.builder().name(Protocol.asString(command.get("marker"))).build())
                        .result(ToolExecutionResult.builder().resultText(Protocol.asString(command.get("marker"))).build())
                        .invocationContext(InvocationContext.builder().build()).build()));
        changed.add(Snapshots.mutated("Result.intermediateResponses() (" + result.intermediateResponses().size() + " responses)",
                result.intermediateResponses(), ChatResponse.builder()
                        .aiMessage(AiMessage.from(Protocol.asString(command.get("marker")))).build()));
        return Protocol.object("changed", changed);
    }

    public static void main(String[] args) {
        Protocol.serve(new Harness());
    }
}
