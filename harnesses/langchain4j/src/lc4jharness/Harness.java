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
import dev.langchain4j.agent.tool.ToolSpecification;
import dev.langchain4j.data.message.AiMessage;
import dev.langchain4j.data.message.ChatMessage;
import dev.langchain4j.data.message.SystemMessage;
import dev.langchain4j.data.message.ToolExecutionResultMessage;
import dev.langchain4j.data.message.UserMessage;
import dev.langchain4j.internal.JsonSchemaElementUtils;
import dev.langchain4j.model.chat.ChatModel;
import dev.langchain4j.model.chat.StreamingChatModel;
import dev.langchain4j.model.chat.request.ChatRequest;
import dev.langchain4j.model.chat.response.ChatResponse;
import dev.langchain4j.model.chat.response.StreamingChatResponseHandler;
import dev.langchain4j.service.AiServices;
import dev.langchain4j.service.Result;
import dev.langchain4j.service.TokenStream;
import dev.langchain4j.service.tool.ToolExecution;
import dev.langchain4j.service.tool.ToolExecutionResult;
import dev.langchain4j.invocation.InvocationContext;

import reactconformance.Protocol;
import reactconformance.shared.ToolClasses;
import reactconformance.shared.Snapshots;

/** LangChain4j's AiServices, bound at its ChatModel interface, with the suite's tools as @Tool methods. */
public final class Harness implements Protocol.Handlers {
    /** The AI service: a user message in, LangChain4j's Result out (its tool executions included). */
    public interface Assistant {
        Result<String> chat(String userMessage);
    }

    /** The streaming AI service: LangChain4j's TokenStream, its documented streaming form. */
    public interface StreamingAssistant {
        TokenStream chat(String userMessage);
    }

    private static final List<String> CLAIMED = List.of("max-steps-error", "parallel-tool-calls", "streaming");

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
                    + "streaming form (DefaultAiServices): no awaitable form of the whole run",
            "lm-retry", "the retries are the provider model's (OpenAiChatModel's maxRetries), which this harness "
                    + "does not run: it is bound at the ChatModel interface",
            "http", "bound at the ChatModel interface, not through OpenAiChatModel's HTTP client");

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
     *  run of AiServices over a scripted ChatModel and @Tool methods, outside the suite. */
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
                    + "prepareArguments reads only the method's own parameters from the args map");

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

    /** The model seam: each ChatRequest as the suite's LMCall, each turn as LangChain4j's AiMessage. */
    static final class Seam implements ChatModel {
        private final AtomicInteger calls = new AtomicInteger();

        /** The model calls made so far (a streaming run's events say how many). */
        int calls() {
            return calls.get();
        }

        @Override
        public ChatResponse doChat(ChatRequest request) {
            List<Object> messages = new ArrayList<>();
            for (ChatMessage message : request.messages()) {
                messages.add(shown(message));
            }
            List<Object> tools = new ArrayList<>();
            for (ToolSpecification spec : request.toolSpecifications()) {
                tools.add(Protocol.object("type", "function", "function", Protocol.object("name", spec.name(),
                        "description", spec.description(),
                        "parameters", spec.parameters() == null ? null : JsonSchemaElementUtils.toMap(spec.parameters()))));
            }
            Map<String, Object> turn = Protocol.askModel(Protocol.object("kind", "step", "adapter", "native",
                    "messages", messages, "tools", tools));
            int number = calls.incrementAndGet();
            switch (Protocol.asString(turn.get("kind"))) {
                case "step": {
                    List<ToolExecutionRequest> requests = new ArrayList<>();
                    List<Object> all = new ArrayList<>();
                    all.add(turn);
                    all.addAll(Protocol.asList(turn.get("parallel")));
                    for (int i = 0; i < all.size(); i++) {
                        Map<String, Object> call = Protocol.asObject(all.get(i));
                        Object raw = call.get("raw_tool_args");
                        requests.add(ToolExecutionRequest.builder().id("call_" + number + "_" + i)
                                .name(Protocol.asString(call.get("tool_name")))
                                .arguments(raw instanceof String ? (String) raw : Protocol.stringify(call.get("tool_args")))
                                .build());
                    }
                    String thought = Protocol.asString(turn.get("thought"));
                    AiMessage message = thought.isEmpty() ? AiMessage.from(requests) : AiMessage.from(thought, requests);
                    return ChatResponse.builder().aiMessage(message).build();
                }
                case "final":
                case "extract": {
                    Map<String, Object> outputs = Protocol.asObject(turn.get("outputs"));
                    Object only = outputs.size() == 1 ? outputs.values().iterator().next() : outputs;
                    String text = only instanceof String ? (String) only : Protocol.stringify(only);
                    return ChatResponse.builder().aiMessage(AiMessage.from(text)).build();
                }
                default:
                    throw new IllegalStateException("the model's transport failed: " + turn.get("fault"));
            }
        }

        private static Map<String, Object> shown(ChatMessage message) {
            if (message instanceof SystemMessage system) {
                return Protocol.object("role", "system", "content", system.text());
            }
            if (message instanceof UserMessage user) {
                return Protocol.object("role", "user", "content", user.hasSingleText() ? user.singleText() : user.toString());
            }
            if (message instanceof AiMessage ai) {
                StringBuilder content = new StringBuilder(ai.text() == null ? "" : ai.text());
                if (ai.hasToolExecutionRequests()) {
                    for (ToolExecutionRequest call : ai.toolExecutionRequests()) {
                        content.append("\ncall ").append(call.name()).append('(').append(call.arguments()).append(')');
                    }
                }
                return Protocol.object("role", "assistant", "content", content.toString().strip());
            }
            if (message instanceof ToolExecutionResultMessage result) {
                return Protocol.object("role", "tool", "content", result.text());
            }
            return Protocol.object("role", "other", "content", String.valueOf(message));
        }
    }

    /** The streaming model seam: the same turns, each handed to LangChain4j's response handler whole. */
    static final class StreamingSeam implements StreamingChatModel {
        final Seam seam = new Seam();

        @Override
        public void doChat(ChatRequest request, StreamingChatResponseHandler handler) {
            ChatResponse response;
            try {
                response = seam.doChat(request);
            } catch (RuntimeException e) {
                handler.onError(e);
                return;
            }
            if (response.aiMessage().text() != null && !response.aiMessage().text().isEmpty()) {
                handler.onPartialResponse(response.aiMessage().text());
            }
            handler.onCompleteResponse(response);
        }
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
        AiServices<Assistant> builder = configured(AiServices.builder(Assistant.class).chatModel(new Seam()), spec, run);
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
        StreamingSeam model = new StreamingSeam();
        StreamingAssistant assistant = configured(AiServices.builder(StreamingAssistant.class)
                .streamingChatModel(model), spec, run).build();
        List<Object> events = java.util.Collections.synchronizedList(new ArrayList<>());
        List<ToolExecution> executions = java.util.Collections.synchronizedList(new ArrayList<>());
        CompletableFuture<ChatResponse> finished = new CompletableFuture<>();
        AtomicInteger intermediate = new AtomicInteger();
        assistant.chat(userMessage(call))
                .onToolExecuted(execution -> {
                    executions.add(execution);
                    events.add(Protocol.object("kind", "step", "model_calls", model.seam.calls(), "step", step(execution)));
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
        events.add(Protocol.object("kind", "done", "model_calls", model.seam.calls(), "stop_reason", "finish",
                "outputs", outcome.get("outputs")));
        outcome.put("events", events);
        return Protocol.object("outcome", outcome);
    }

    /** What the service raised: past the cap, ToolService's RuntimeException naming maxToolCallingRoundTrips. */
    private static Map<String, Object> failure(Throwable error, Map<String, Object> spec) {
        if (String.valueOf(error.getMessage()).contains("(maxToolCallingRoundTrips)")) {
            return Protocol.errorInfo(error, "max-iterations", Protocol.object("max_iterations", spec.get("max_steps")));
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
        List<String> names = new ArrayList<>();
        for (Object f : Protocol.asList(Protocol.asObject(spec.get("signature")).get("outputs"))) {
            names.add(Protocol.asString(Protocol.asObject(f).get("name")));
        }
        Map<String, Object> outputs = Protocol.object(names.isEmpty() ? "answer" : names.get(0), text);
        if (names.size() > 1) {
            try {
                outputs = Protocol.asObject(Protocol.parse(text));
            } catch (IllegalArgumentException e) {
                // not JSON: the reply is the first output's
            }
        }
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
