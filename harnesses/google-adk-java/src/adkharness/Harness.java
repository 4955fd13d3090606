package adkharness;

import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

import com.google.adk.JsonBaseModel;
import com.google.adk.agents.LlmAgent;
import com.google.adk.agents.RunConfig;
import com.google.adk.events.Event;
import com.google.adk.models.BaseLlm;
import com.google.adk.models.BaseLlmConnection;
import com.google.adk.models.LlmCallsLimitExceededException;
import com.google.adk.models.LlmRequest;
import com.google.adk.models.LlmResponse;
import com.google.adk.apps.App;
import com.google.adk.apps.ResumabilityConfig;
import com.google.adk.artifacts.InMemoryArtifactService;
import com.google.adk.memory.InMemoryMemoryService;
import com.google.adk.runner.InMemoryRunner;
import com.google.adk.runner.Runner;
import com.google.adk.sessions.BaseSessionService;
import com.google.adk.sessions.InMemorySessionService;
import com.google.adk.sessions.Session;
import com.google.adk.tools.BaseTool;
import com.google.adk.tools.FunctionTool;
import com.google.genai.types.Content;
import com.google.genai.types.FinishReason;
import com.google.genai.types.FunctionCall;
import com.google.genai.types.FunctionDeclaration;
import com.google.genai.types.FunctionResponse;
import com.google.genai.types.Part;
import com.google.genai.types.Tool;
import io.reactivex.rxjava3.core.Flowable;

import reactconformance.Protocol;
import reactconformance.shared.ToolClasses;

/**
 * Google ADK for Java: an {@code LlmAgent} run by its {@code InMemoryRunner} ({@code runAsync}, its one
 * way to run an agent, whose Flowable of events the sync, async and streaming calls all read), the
 * suite's tools as {@code @Schema}-annotated static methods each wrapped by
 * {@code FunctionTool.create(Class, methodName)}. The model seam is ADK's model interface, a
 * {@code BaseLlm} subclass (the interface its Gemini, Claude and ApigeeLlm classes implement),
 * answering each LlmRequest from the script as Gemini's API answers: a content with a text part (the thought) and a function-call
 * part per call, args an object; args that are not a JSON object come back as Gemini answers a call
 * it cannot parse (no content, finish reason MALFORMED_FUNCTION_CALL), as the Python binding's model
 * does (conformance/bindings/google_adk.py).
 *
 * <p>Transport ({@code lm-retry}, {@code http}): the scripted BaseLlm sits above every client, so a call
 * whose script holds a transport fault, and every call over HTTP, runs on ADK's {@code Claude} over
 * Anthropic's Java client on its defaults (Transport): at the call's base URL, or over a client whose
 * HttpClient answers the Messages API from the script (MessagesEndpoint), beneath its retries. ADK's
 * default model, Gemini, speaks only Gemini's API, which the suite does not serve.
 *
 * <p>Approval: an interruptible tool is {@code FunctionTool.create(Class, methodName, true)}
 * (requireConfirmation). On the defaults its call does not pause the run (BaseLlmFlow.run pauses on a
 * pending long-running call only in a resumable invocation). {@code --resumable} is
 * {@code google-adk-java+resumable}: each agent's Runner is built from an App whose ResumabilityConfig is
 * resumable, and the call pauses; the person answers as ADK documents, with a FunctionResponse to the
 * adk_request_confirmation call holding a ToolConfirmation ({@code confirmed}; free text declines, as
 * its {@code payload}), sent by a new runAsync of the paused session with the run's own RunConfig. A pause
 * is its session, kept as JSON text (Session.toJson) in the application's store, keyed by app, user and
 * session, and restored into the answering agent's runner from that text, as a persistent session
 * service (VertexAiSessionService) gives it back; an answer through another agent finds no session of
 * its app, and whether it is refused is ADK's part.
 */
public final class Harness implements Protocol.Handlers {
    private static final List<String> CLAIMED = List.of("max-steps-error", "per-call-cap", "parallel-tool-calls",
            "streaming", "async", "tool-approval", "durable-approvals", "lm-retry", "http");

    /** Why a pending call cannot be edited, on the defaults and with resumability alike. */
    private static final String NO_EDIT = "a ToolConfirmation carries hint, confirmed and payload "
            + "(events/ToolConfirmation.java); FunctionTool.runAsync runs a confirmed call with the model's args, and "
            + "RequestConfirmationLlmRequestProcessor.isResumableFunctionCall refuses a confirmation whose "
            + "originalFunctionCall's args differ from the call the agent made: a pending call cannot be edited";

    private static final Map<String, Object> NOT_CLAIMED = Protocol.object(
            "signature", "a native tool-calling loop: LlmAgent takes an instruction and tools, no signature",
            "adapters", "no pluggable prompt format: each model class writes its provider's request",
            "max-steps-extract", "maxLlmCalls raises LlmCallsLimitExceededException (InvocationContext."
                    + "incrementLlmCallsCount): no tool-less final call",
            "max-steps-return", "maxLlmCalls raises LlmCallsLimitExceededException; the run never returns flagged "
                    + "as capped",
            "cap-summary", "the cap raises; there is no message for the user of what was tried",
            "repeated-error-stop", "no count of repeated tool failures",
            "ask-user", "no built-in tool that asks the person",
            "approval-edit", NO_EDIT);

    private static final Map<String, Object> PARITY = Protocol.object(
            "stop_reason", "library: LlmCallsLimitExceededException, raised before the call after maxLlmCalls "
                    + "(InvocationContext.incrementLlmCallsCount), is the cap stop; a run that ends has its final "
                    + "response event",
            "iterations", "derived: counted from the run's events, one per model response",
            "max_iterations", "derived: the maxLlmCalls the harness gave RunConfig; the exception carries its "
                    + "message only",
            "partial_run", "library: the events Runner.runAsync emitted before the error",
            "concurrency", "shared");

    /** Each failing requirement, with what ADK for Java 1.8.0 does and where: each checked by a direct run
     *  of an LlmAgent over a scripted BaseLlm and FunctionTools, outside the suite. */
    private static final String MALFORMED = "Gemini answers a call it cannot parse with finish reason "
            + "MALFORMED_FUNCTION_CALL and no content; ADK's Gemini yields that as an LlmResponse with its errorCode "
            + "(LlmResponse.Builder from the candidate, Gemini.java) and, with no function call in it, the event is a "
            + "final response (Event.finalResponse), so BaseLlmFlow.run ends the loop: the model is never told or "
            + "asked again (a direct run: one model call, then the run ended)";
    private static final String CAP_ZERO = "a maxLlmCalls of 0 or less means no limit at all (InvocationContext."
            + "InvocationCostManager.incrementAndEnforceLlmCallsLimit enforces only a positive one), whether "
            + "configured or given to one call: the run goes on (a direct run with maxLlmCalls(0): four model calls, "
            + "the tool run three times)";

    private static final Map<String, Object> KNOWN_FAILURES = Protocol.object(
            "LOOP-5", "a call of a tool the agent does not have is dropped: Functions.handleFunctionCalls logs 'Tool not "
                    + "found' and runs only the calls it has tools for, so the model is asked again, shown its call "
                    + "with no function response and no error (a direct run: the second model call's last content "
                    + "is the call itself)",
            "ARGS-2", MALFORMED,
            "ARGS-3", MALFORMED,
            "ARGS-4", "FunctionTool.runAsync catches whatever the call raises and answers the model with a fixed "
                    + "{'status': 'error', 'message': 'An internal error occurred.'}, which names no field: a missing "
                    + "parameter (FunctionTool's 'The parameter ... was not found' IllegalArgumentException), 'fifty' "
                    + "for an int or a list for a String (Jackson's conversion errors); and what Jackson converts "
                    + "reaches the tool changed: 50.5 as 50, null for an int as 0 (a direct run: the tool ran with "
                    + "amount=50, then amount=0)",
            "ARGS-5", "args nested thousands of levels deep end the run with a StackOverflowError: ADK converts them "
                    + "with Jackson (ObjectMapper.convertValue, FunctionTool's argument resolution), which recurses "
                    + "once per level, and RxJava rethrows the fatal error (Exceptions.throwIfFatal) instead of "
                    + "delivering it to the run's subscriber (a direct run with a 5000-deep object: one model call, "
                    + "then StackOverflowError, the tool never ran). Which 5000-deep rows fail depends on the "
                    + "JVM's state: how deep the default 1 MB thread stack lets Jackson recurse depends on how "
                    + "much of it the JIT has compiled, so a row that failed in every run on a quiet machine "
                    + "passed once on a loaded one (with a 3 MB stack every 5000-deep row passed; the "
                    + "100000-deep object failed in every run)",
            "ARGS-6", "an argument the tool does not declare is dropped without a word: FunctionTool builds the "
                    + "method's arguments from its own parameters only (a direct run: transfer ran with amount and "
                    + "recipient, 'memo' gone)",
            "ERR-4", "a raising tool's exception never reaches the model: FunctionTool.runAsync catches it and answers "
                    + "{'status': 'error', 'message': 'An internal error occurred.'} (a direct run: the model was "
                    + "shown that, not 'the disk is on fire')",
            "A step cap of zero is refused at configuration, or raises before any model call", CAP_ZERO,
            "A step cap of zero given to one call is refused, or raises before any model call", CAP_ZERO);

    /** The known failures of the defaults alone: no pause. */
    private static final Map<String, Object> DEFAULT_FAILURES = Protocol.object(
            "An interruptible tool does not run before approval", "on its defaults a call that needs confirmation "
                    + "does not pause the run: FunctionTool.runAsync answers a requireConfirmation tool's call with a "
                    + "placeholder ('This tool call requires confirmation, please approve or reject.') and Functions "
                    + "emits an adk_request_confirmation call before it, so the step's last event is the placeholder, "
                    + "not a final response, and BaseLlmFlow.run asks the model again (it pauses on a pending "
                    + "long-running call only in a resumable invocation, ResumabilityConfig, off in InMemoryRunner); "
                    + "a direct run: two model calls, the tool never ran, the run finished");

    /** A resume is a new Runner.runAsync, whose InvocationContext counts maxLlmCalls from zero. */
    private static final String BUDGET = "a resume is a new Runner.runAsync, whose InvocationContext counts "
            + "maxLlmCalls from zero (InvocationContext.InvocationCostManager): the steps before the pause are not "
            + "counted (a direct run with maxLlmCalls 2: two model calls before the pause, two more after the answer)";
    /** The same confirmation sent again runs the confirmed call again. */
    private static final String TWICE = "an answer given again runs the confirmed call again: "
            + "RequestConfirmationLlmRequestProcessor.processRequest reads the most recent user event holding "
            + "adk_request_confirmation responses (findMostRecentConfirmations) and counts a call as run only when "
            + "its function response comes after that event (alreadyResumedIds), so a second user event with the "
            + "same confirmation re-runs the tool (a direct run: the same answer sent again ran delete_file a second time)";

    /** The known failures of the resumable opt-in alone. */
    private static final Map<String, Object> RESUMABLE_FAILURES = Protocol.object(
            "Free text is fed back to the agent as the user's answer", "a ToolConfirmation takes no message for the "
                    + "model: FunctionTool.runAsync answers a call that was not confirmed with its fixed {'error': "
                    + "'This tool call is rejected.'}, and the confirmation's payload (the person's text) never "
                    + "reaches the model (a direct run: the next request shows only that error)",
            "Resuming keeps the budget the steps before the pause used", BUDGET,
            "Resuming keeps the step cap given to the call and the steps used before the pause", BUDGET,
            "Resuming the same interrupt twice never runs the tool twice", TWICE,
            "Answering a pause again after its resumed run paused again never runs a call twice", TWICE,
            "Replaying the answer to a serialised pause whose call already ran never runs it again", TWICE);

    /** ADK's tool form: a method and its parameters annotated with {@code @Annotations.Schema}. */
    private static final ToolClasses.Annotations TOOL_ANNOTATIONS = new ToolClasses.Annotations() {
        @Override
        public String library() {
            return "Google ADK";
        }

        @Override
        public String imports() {
            return "import com.google.adk.tools.Annotations.Schema;\n";
        }

        @Override
        public String tool(String name, String description) {
            return "@Schema(name = " + name + ", description = " + description + ")";
        }

        @Override
        public String parameter(String description) {
            return "@Schema(description = " + description + ")";
        }

        /** ADK declares only int and Integer as INTEGER (FunctionCallingUtils.buildSchemaRecursive; a long is
         *  a NUMBER), so an integer parameter is an int, as ADK's examples write it. */
        @Override
        public String parameterType(String suiteType, String usual) {
            return "int".equals(suiteType) ? "int" : usual;
        }

        /** ADK builds a response schema from the return type and refuses Object
         *  (FunctionCallingUtils.buildSchemaRecursive), so the method returns a Map: the result itself when it is
         *  one, else {"result": value}, the wrapping ADK gives any other return value
         *  (FunctionTool.convertToMapOrResult). */
        /** ADK's documented form: FunctionTool.create(Class, methodName) over a class's static methods. */
        @Override
        public boolean staticMethods() {
            return true;
        }

        @Override
        public String returnType() {
            return "java.util.Map<String, Object>";
        }

        @Override
        public String returned(String result) {
            return "Object result = " + result + ";\n        if (result instanceof java.util.Map) {\n"
                    + "            @SuppressWarnings(\"unchecked\") java.util.Map<String, Object> map = "
                    + "(java.util.Map<String, Object>) result;\n            return map;\n        }\n"
                    + "        return java.util.Collections.singletonMap(\"result\", result);";
        }
    };

    private static final String USER = "user";

    /** What an agent is built of: rebuilt around another model for a call over HTTP. */
    private record Recipe(String name, String instruction, List<BaseTool> tools) {
        LlmAgent agent(BaseLlm model) {
            return LlmAgent.builder().name(name).model(model).instruction(instruction).tools(tools).build();
        }
    }

    /** A built agent: its recipe, its runner, its spec, and the events its last call handed out. */
    private record Agent(Recipe recipe, Runner runner, Map<String, Object> spec, List<Event> last) {}

    /** A run's session and cap: a pause is answered in it, with the run's own RunConfig. */
    private record Paused(String session, int cap) {}

    /** The function call ADK adds to ask the person to confirm a call (Functions.
     *  REQUEST_CONFIRMATION_FUNCTION_CALL_NAME). */
    private static final String CONFIRM = "adk_request_confirmation";

    /** Every pause a run reported, by its adk_request_confirmation call's id, whichever agent paused: a
     *  person's answer may reach another agent than the paused one (HITL-6), and refusing it is ADK's part. */
    private static final Map<String, Paused> PAUSES = new ConcurrentHashMap<>();

    /** The application's persistent session store: each paused session as JSON text, by app, user and
     *  session id. */
    private static final Map<String, String> STORE = new ConcurrentHashMap<>();

    private final boolean resumable;

    private Harness(boolean resumable) {
        this.resumable = resumable;
    }

    private final Map<String, Agent> agents = new ConcurrentHashMap<>();

    @Override
    public Map<String, Object> hello(Map<String, Object> command) {
        Map<String, Object> known = new LinkedHashMap<>(KNOWN_FAILURES);
        known.putAll(resumable ? RESUMABLE_FAILURES : DEFAULT_FAILURES);
        return Protocol.object("name", resumable ? "google-adk-java+resumable" : "google-adk-java", "version",
                Protocol.installedVersion("com.google.adk", "google-adk"), "capabilities", CLAIMED,
                "not_claimed", NOT_CLAIMED, "known_failures", known, "parity", PARITY, "approval_form", "pause",
                "dependencies", Protocol.installedVersions("com.google.adk:google-adk",
                        "com.google.genai:google-genai", "com.anthropic:anthropic-java"));
    }

    @Override
    public Map<String, Object> build(Map<String, Object> command) throws Exception {
        Map<String, Object> spec = Protocol.asObject(command.get("spec"));
        List<Object> declared = Protocol.asList(spec.get("tools"));
        List<String> interruptible = new ArrayList<>();
        for (Object t : declared) {
            if (Boolean.TRUE.equals(Protocol.asObject(t).get("interruptible"))) {
                interruptible.add(Protocol.asString(Protocol.asObject(t).get("name")));
            }
        }
        List<BaseTool> tools = new ArrayList<>();
        if (!declared.isEmpty()) {
            // A class of static tool methods written for this agent (its bridge is the class's own); each
            // tool runs on the thread of the run that called it, as ADK runs a tool where its run is.
            Class<?> written = ToolClasses.instance(declared, Protocol::callTool, TOOL_ANNOTATIONS).getClass();
            for (Method method : written.getDeclaredMethods()) {
                if (method.getName().startsWith("tool")) {
                    FunctionTool tool = FunctionTool.create(written, method.getName());
                    // A tool that needs the person's approval: FunctionTool's documented requireConfirmation.
                    tools.add(interruptible.contains(tool.name())
                            ? FunctionTool.create(written, method.getName(), true) : tool);
                }
            }
            tools.sort((a, b) -> names(declared).indexOf(a.name()) - names(declared).indexOf(b.name()));
        }
        String name = Protocol.asString(spec.get("name"));
        Recipe recipe = new Recipe(name.isEmpty() ? "agent" : name,
                Protocol.asString(Protocol.asObject(spec.get("signature")).get("instructions")), tools);
        agents.put(Protocol.asString(command.get("agent")), new Agent(recipe,
                runner(recipe.agent(new Scripted(!declared.isEmpty()))), spec,
                Collections.synchronizedList(new ArrayList<>())));
        return Protocol.object("error", null);
    }

    /** The agent's runner: InMemoryRunner, ADK's quick-start runner; with --resumable, a Runner of an App
     *  whose ResumabilityConfig is resumable, over the same in-memory services. Each agent is an app of
     *  its own, named as the agent is. */
    @SuppressWarnings("deprecation") // ResumabilityConfig: "partial feature", the documented opt-in of 1.8.0
    private Runner runner(LlmAgent agent) {
        if (!resumable) {
            return new InMemoryRunner(agent, agent.name());
        }
        return Runner.builder().app(App.builder().name(agent.name()).rootAgent(agent)
                        .resumabilityConfig(ResumabilityConfig.builder().resumable(true).build()).build())
                .artifactService(new InMemoryArtifactService()).sessionService(new InMemorySessionService())
                .memoryService(new InMemoryMemoryService()).build();
    }

    private static List<String> names(List<Object> declared) {
        List<String> names = new ArrayList<>();
        for (Object t : declared) {
            names.add(Protocol.asString(Protocol.asObject(t).get("name")));
        }
        return names;
    }

    /** The model seam: each LlmRequest as the suite's LMCall, each turn as Gemini's API answers it. */
    static final class Scripted extends BaseLlm {
        private static final AtomicInteger REPLIES = new AtomicInteger();
        private final boolean hasTools;

        Scripted(boolean hasTools) {
            super("scripted");
            this.hasTools = hasTools;
        }

        @Override
        public Flowable<LlmResponse> generateContent(LlmRequest request, boolean stream) {
            return Flowable.fromCallable(() -> answer(request));
        }

        private LlmResponse answer(LlmRequest request) {
            List<Object> tools = new ArrayList<>();
            for (Tool tool : request.config().flatMap(c -> c.tools()).orElse(List.of())) {
                for (FunctionDeclaration declaration : tool.functionDeclarations().orElse(List.of())) {
                    Object parameters = declaration.parametersJsonSchema().orElse(null);
                    if (parameters == null && declaration.parameters().isPresent()) {
                        parameters = jsonSchema(Protocol.parse(declaration.parameters().get().toJson()));
                    }
                    tools.add(Protocol.object("type", "function", "function", Protocol.object("name",
                            declaration.name().orElse(""), "description", declaration.description().orElse(""),
                            "parameters", parameters)));
                }
            }
            List<Object> messages = new ArrayList<>();
            for (Content content : request.contents()) {
                messages.add(shown(content));
            }
            Map<String, Object> turn = Protocol.askModel(Protocol.object("kind",
                    !tools.isEmpty() || !hasTools ? "step" : "extract", "adapter", "native", "messages", messages,
                    "tools", tools.isEmpty() ? null : tools));
            int number = REPLIES.incrementAndGet();
            String kind = Protocol.asString(turn.get("kind"));
            if (!"step".equals(kind)) {
                if (!"final".equals(kind) && !"extract".equals(kind)) {
                    throw new IllegalStateException("the model's transport failed: " + turn.get("fault"));
                }
                String text = Protocol.replyText(Protocol.asObject(turn.get("outputs")));
                return LlmResponse.builder().content(Content.builder().role("model")
                        .parts(List.of(Part.fromText(text))).build()).build();
            }
            List<Part> parts = new ArrayList<>();
            String thought = Protocol.asString(turn.get("thought"));
            if (!thought.isEmpty()) {
                parts.add(Part.fromText(thought));
            }
            List<Object> calls = new ArrayList<>();
            calls.add(turn);
            calls.addAll(Protocol.asList(turn.get("parallel")));
            for (int i = 0; i < calls.size(); i++) {
                Map<String, Object> call = Protocol.asObject(calls.get(i));
                Object raw = call.get("raw_tool_args");
                String text = raw instanceof String ? (String) raw : Protocol.stringify(call.get("tool_args"));
                Object args;
                try {
                    args = Protocol.parse(text);
                } catch (IllegalArgumentException e) {
                    args = null;
                }
                if (!(args instanceof Map)) { // as Gemini's API answers a call it cannot parse
                    return LlmResponse.builder().errorCode(new FinishReason(FinishReason.Known.MALFORMED_FUNCTION_CALL))
                            .finishReason(new FinishReason(FinishReason.Known.MALFORMED_FUNCTION_CALL))
                            .errorMessage("Malformed function call: " + text).build();
                }
                parts.add(Part.builder().functionCall(FunctionCall.builder()
                        .id("call_" + number + (i == 0 ? "" : "_" + i)).name(Protocol.asString(call.get("tool_name")))
                        .args(Protocol.asObject(args)).build()).build());
            }
            return LlmResponse.builder().content(Content.builder().role("model").parts(parts).build()).build();
        }

        /** Gemini's Schema as the JSON Schema of the OpenAI-format tools the suite is shown: the same
         *  fields, its Type names (STRING, INTEGER, OBJECT...) as JSON Schema's lower-case type names. */
        private static Object jsonSchema(Object schema) {
            if (schema instanceof Map<?, ?> map) {
                Map<String, Object> converted = new LinkedHashMap<>();
                map.forEach((key, value) -> converted.put(String.valueOf(key), "type".equals(key) && value instanceof String
                        ? ((String) value).toLowerCase(java.util.Locale.ROOT) : jsonSchema(value)));
                return converted;
            }
            if (schema instanceof List<?> list) {
                List<Object> converted = new ArrayList<>();
                list.forEach(item -> converted.add(jsonSchema(item)));
                return converted;
            }
            return schema;
        }

        private static Map<String, Object> shown(Content content) {
            StringBuilder text = new StringBuilder();
            List<String> calls = new ArrayList<>();
            for (Part part : content.parts().orElse(List.of())) {
                part.text().ifPresent(text::append);
                part.functionResponse().flatMap(FunctionResponse::response)
                        .ifPresent(response -> text.append(Protocol.stringify(response)));
                part.functionCall().ifPresent(call -> calls.add("\ncall " + call.name().orElse("") + "("
                        + Protocol.stringify(call.args().orElse(Map.of())) + ")"));
            }
            return Protocol.object("role", content.role().orElse("user"), "content", text + String.join("", calls));
        }

        @Override
        public BaseLlmConnection connect(LlmRequest request) {
            throw new UnsupportedOperationException("the scripted model has no live connection");
        }
    }

    @Override
    public Map<String, Object> run(Map<String, Object> command) throws Exception {
        Agent agent = agent(command);
        Map<String, Object> call = Protocol.asObject(command.get("call"));
        int cap = ((Number) (call.get("max_steps") != null ? call.get("max_steps")
                : agent.spec().get("max_steps"))).intValue();
        // A call over HTTP, or whose script holds a transport fault, runs on ADK's Claude over Anthropic's
        // client (whose retries are the library's), the same agent rebuilt around it.
        Object baseUrl = call.get("base_url");
        Runner runner = baseUrl != null || Boolean.TRUE.equals(command.get("scripted_fault"))
                ? runner(agent.recipe().agent(Transport.claude(baseUrl == null ? null : (String) baseUrl)))
                : agent.runner();
        String session = runner.sessionService().createSession(runner.appName(), USER).blockingGet().id();
        Content message = Content.builder().role("user").parts(List.of(Part.fromText(
                Protocol.userMessage(Protocol.asObject(call.get("inputs")))))).build();
        return Protocol.object("outcome", play(agent, runner, new Paused(session, cap), message,
                "stream".equals(call.get("mode"))));
    }

    @Override
    public Map<String, Object> resume(Map<String, Object> command) throws Exception {
        Agent agent = agent(command);
        Map<String, Object> request = Protocol.asObject(command.get("request"));
        String id = Protocol.asString(request.get("interrupt_id"));
        Paused pause = PAUSES.get(id);
        if (pause == null) {
            return Protocol.object("outcome", Protocol.object("error", Protocol.object("type", "UnknownInterrupt",
                    "message", "no pause " + id + " was made through this harness", "kind", "other", "fields",
                    Protocol.object())));
        }
        Protocol.Approval approval = Protocol.readApproval(Protocol.asString(request.get("response")));
        if ("edit".equals(approval.decision())) {
            return Protocol.object("outcome", Protocol.object("error", Protocol.object("type", "NotSupported",
                    "message", NO_EDIT, "kind", "other", "fields", Protocol.object())));
        }
        Runner runner = agent.runner();
        // The paused session, read back from its serialised form into the answering agent's runner.
        String saved = STORE.get(key(runner.appName(), pause.session()));
        if (saved != null) {
            restore(runner, Session.fromJson(saved));
        }
        // Free text declines the call, the text as the confirmation's payload: ADK takes no message.
        Map<String, Object> confirmation = Protocol.object("confirmed", "approve".equals(approval.decision()));
        if ("message".equals(approval.decision())) {
            confirmation.put("payload", approval.text());
        }
        Content message = Content.builder().role("user").parts(List.of(Part.builder().functionResponse(
                FunctionResponse.builder().id(id).name(CONFIRM).response(confirmation).build()).build())).build();
        return Protocol.object("outcome", play(agent, runner, pause, message, "stream".equals(request.get("mode"))));
    }

    private Agent agent(Map<String, Object> command) {
        Agent agent = agents.get(Protocol.asString(command.get("agent")));
        if (agent == null) {
            throw new IllegalStateException("no agent " + command.get("agent") + " was built");
        }
        return agent;
    }

    /** {@code message} sent to {@code runner} in the run's session, read to the run's end. */
    private Map<String, Object> play(Agent agent, Runner runner, Paused run, Content message, boolean streaming) {
        String session = run.session();
        int cap = run.cap();
        List<Event> seen = new ArrayList<>();
        List<Object> events = new ArrayList<>();
        agent.last().clear();
        // blockingSubscribe, not blockingIterable: the iterator throws a run's error as soon as it arrives,
        // before the events queued ahead of it, which would drop the partial run.
        Throwable[] failed = new Throwable[1];
        try {
            runner.runAsync(USER, session, message, RunConfig.builder().maxLlmCalls(cap).build()).blockingSubscribe(
                    event -> {
                        seen.add(event);
                        if (streaming && !event.functionResponses().isEmpty()) {
                            stepEvents(seen, events);
                        }
                    }, error -> failed[0] = error);
        } catch (StackOverflowError e) { // fatal, so RxJava rethrows it (Exceptions.throwIfFatal): ADK's own
            failed[0] = e;                // Jackson conversions of deeply nested args overflow (ARGS-5)
        }
        agent.last().addAll(seen);
        // The run's events as the session keeps them (getSession, the documented API): Runner.runAsync
        // can end with its error before it emits the events of the step the error ended, and a resumed
        // run's steps are the session's.
        List<Event> kept = history(runner, session);
        if (failed[0] != null) {
            List<Event> partial = kept.size() > seen.size() ? kept : seen;
            List<Object> trajectory = trajectory(partial);
            Throwable cause = failed[0] instanceof RuntimeException && failed[0].getCause() != null
                    && failed[0].getCause() instanceof LlmCallsLimitExceededException ? failed[0].getCause() : failed[0];
            Map<String, Object> outcome = Protocol.object("trajectory", trajectory, "iterations",
                    modelCalls(partial));
            if (cause instanceof LlmCallsLimitExceededException) {
                outcome.put("error", Protocol.errorInfo(cause, "max-iterations", capFields(agent, trajectory,
                        modelCalls(partial), cap)));
                outcome.put("stop_reason", "max_steps");
            } else {
                outcome.put("error", Protocol.errorInfo(cause));
            }
            if (streaming) {
                outcome.put("events", events);
            }
            return outcome;
        }
        List<Event> all = kept.isEmpty() ? seen : kept;
        FunctionCall request = pending(seen);
        if (request != null) {
            return paused(runner, run, all, request);
        }
        if (STORE.containsKey(key(runner.appName(), session))) {
            save(runner, session); // the store holds the session as it is now
        }
        String text = null;
        for (Event event : seen) {
            if (event.finalResponse() && event.content().isPresent()) {
                text = event.stringifyContent();
            }
        }
        Map<String, Object> outputs = text == null ? null
                : Protocol.replyOutputs(Protocol.asObject(agent.spec().get("signature")), text);
        Map<String, Object> outcome = Protocol.object("outputs", outputs, "trajectory", trajectory(all),
                "stop_reason", "finish", "iterations", modelCalls(all));
        if (streaming) {
            events.add(Protocol.object("kind", "done", "model_calls", modelCalls(seen), "stop_reason", "finish",
                    "outputs", outputs));
            outcome.put("events", events);
        }
        return outcome;
    }

    private static List<Event> history(Runner runner, String session) {
        return runner.sessionService().getSession(runner.appName(), USER, session, Optional.empty())
                .map(found -> (List<Event>) new ArrayList<>(found.events())).blockingGet(List.of());
    }

    /** The confirmation a run ended waiting for: the last event's long-running adk_request_confirmation
     *  call (ADK pauses on one only in a resumable invocation; otherwise the model is asked again, and
     *  the run's last event is the model's). */
    private static FunctionCall pending(List<Event> seen) {
        for (int i = seen.size() - 1; i >= 0; i--) {
            Event event = seen.get(i);
            if (isModelResponse(event)) {
                return null;
            }
            for (FunctionCall call : requests(event)) {
                return call;
            }
        }
        return null;
    }

    /** The confirmations an event asks the person for: its long-running adk_request_confirmation calls. */
    private static List<FunctionCall> requests(Event event) {
        List<FunctionCall> found = new ArrayList<>();
        for (FunctionCall call : event.functionCalls()) {
            if (CONFIRM.equals(call.name().orElse("")) && event.longRunningToolIds().map(ids -> ids.contains(
                    call.id().orElse(""))).orElse(false)) {
                found.add(call);
            }
        }
        return found;
    }

    /** The pause's outcome: the call awaiting confirmation, the run so far; the session kept serialised. */
    private Map<String, Object> paused(Runner runner, Paused run, List<Event> all, FunctionCall request) {
        save(runner, run.session());
        String id = request.id().orElse("");
        PAUSES.put(id, run);
        Map<String, Object> args = request.args().orElse(Map.of());
        // The call awaiting confirmation, as RequestConfirmationLlmRequestProcessor reads it back.
        FunctionCall call = JsonBaseModel.getMapper().convertValue(args.get("originalFunctionCall"), FunctionCall.class);
        Map<String, Object> original = Protocol.object("name", call == null ? "" : call.name().orElse(""), "args",
                call == null ? null : Protocol.parse(JsonBaseModel.toJsonString(call.args().orElse(Map.of()))),
                "id", call == null ? null : call.id().orElse(null));
        Object confirmation = args.get("toolConfirmation");
        String hint = confirmation instanceof Map<?, ?> map && map.get("hint") != null ? String.valueOf(map.get("hint")) : "";
        String input = null;
        for (Event event : all) {
            if (USER.equals(event.author()) && event.content().isPresent() && event.functionResponses().isEmpty()) {
                input = event.stringifyContent();
                break;
            }
        }
        List<Object> trajectory = trajectory(all);
        int iterations = modelCalls(all);
        return Protocol.object("trajectory", trajectory, "iterations", iterations, "error", Protocol.object(
                "type", "ToolConfirmation", "message", hint, "kind", "human-in-the-loop", "fields", Protocol.object(
                        "question", null, "interrupt_id", id, "tool_call", Protocol.object("name",
                                Protocol.asString(original.get("name")), "args", Protocol.wire(original.get("args")),
                                "call_id", original.get("id")),
                        "context", Protocol.object("trajectory", trajectory, "iteration", iterations, "input", input))));
    }

    private static String key(String app, String session) {
        return app + "/" + USER + "/" + session;
    }

    /** The session as JSON text into the application's store (Session.toJson), as a persistent session
     *  service keeps it. */
    private static void save(Runner runner, String session) {
        runner.sessionService().getSession(runner.appName(), USER, session, Optional.empty())
                .blockingSubscribe(found -> STORE.put(key(runner.appName(), session), found.toJson()));
    }

    /** A session read back from its JSON into the runner's session service: created under its id, its
     *  events appended in order (the documented BaseSessionService API). */
    private static void restore(Runner runner, Session session) {
        BaseSessionService service = runner.sessionService();
        service.deleteSession(session.appName(), session.userId(), session.id()).blockingAwait();
        Map<String, Object> state = new LinkedHashMap<>(session.state());
        Session fresh = service.createSession(session.appName(), session.userId(), state, session.id()).blockingGet();
        for (Event event : session.events()) {
            service.appendEvent(fresh, event).blockingGet();
        }
    }

    /** A step event for each step of the run so far that has its observation and no event yet. */
    private static void stepEvents(List<Event> seen, List<Object> events) {
        List<Object> done = new ArrayList<>();
        for (Object step : trajectory(seen)) {
            if (Protocol.asObject(step).get("observation") != null) {
                done.add(step);
            }
        }
        for (Object step : done.subList(Math.min(events.size(), done.size()), done.size())) {
            events.add(Protocol.object("kind", "step", "model_calls", modelCalls(seen), "step", step));
        }
    }

    /** The step-cap error's fields, filled from the events Runner.runAsync emitted before it (the exception
     *  carries its message only), as the Python binding fills them (translate.capped). */
    private static Map<String, Object> capFields(Agent agent, List<Object> trajectory, int iterations, int cap) {
        List<String> own = names(Protocol.asList(agent.spec().get("tools")));
        List<Object> used = new ArrayList<>();
        Object last = null;
        for (Object s : trajectory) {
            Map<String, Object> step = Protocol.asObject(s);
            if (step.get("observation") != null && own.contains(Protocol.asString(step.get("tool_name")))) {
                used.add(step.get("tool_name"));
                last = step.get("observation");
            }
        }
        return Protocol.object("iterations", iterations, "tools_used", used, "history", trajectory,
                "last_observation", last, "max_iterations", cap);
    }

    /** The model responses among the events: those the model authored (not the tools' responses). */
    private static int modelCalls(List<Event> events) {
        int calls = 0;
        for (Event event : events) {
            if (isModelResponse(event)) {
                calls++;
            }
        }
        return calls;
    }

    /** A model response: an event with the model's content or finish reason (a malformed call's has no
     *  content), not a tool's response nor the confirmation request ADK adds. */
    private static boolean isModelResponse(Event event) {
        return !event.partial().orElse(false) && event.functionResponses().isEmpty() && requests(event).isEmpty()
                && (event.finishReason().isPresent() || event.errorCode().isPresent()
                    || event.content().flatMap(Content::role).map("model"::equals).orElse(false));
    }

    /** One step per function call the model made, its thought the text beside it, its observation the
     *  response to its call id. */
    private static List<Object> trajectory(List<Event> events) {
        Map<String, Object> results = new LinkedHashMap<>();
        List<Object[]> calls = new ArrayList<>();
        for (Event event : events) {
            StringBuilder thought = new StringBuilder();
            event.content().flatMap(Content::parts).orElse(List.of())
                    .forEach(part -> part.text().ifPresent(thought::append));
            for (FunctionCall call : event.functionCalls()) {
                if (CONFIRM.equals(call.name().orElse(""))) {
                    continue; // ADK's request for the person's confirmation: the pause, not the model's step
                }
                calls.add(new Object[] {call.id().orElse(""), thought.toString(), call.name().orElse(""),
                        call.args().orElse(Map.of())});
            }
            for (FunctionResponse response : event.functionResponses()) {
                results.put(response.id().orElse(""), response.response().orElse(null));
            }
        }
        List<Object> steps = new ArrayList<>();
        for (Object[] call : calls) {
            String id = (String) call[0];
            steps.add(Protocol.object("thought", ((String) call[1]).isEmpty() ? null : call[1], "tool_name", call[2],
                    "tool_args", Protocol.wire(Protocol.parse(Protocol.stringify(call[3]))),
                    "observation", results.get(id), "is_error", null, "call_id", id.isEmpty() ? null : id));
        }
        return steps;
    }

    @Override
    public Map<String, Object> mutateLastResult(Map<String, Object> command) {
        // The caller's containers are the run's events, as Runner.runAsync emitted them (mutable: Event
        // has setters): each function response is rewritten, and the list the caller collected grows.
        Agent agent = agents.get(Protocol.asString(command.get("agent")));
        List<Event> events = agent == null ? List.of() : agent.last();
        if (events.isEmpty()) {
            return Protocol.object("changed", List.of());
        }
        String marker = Protocol.asString(command.get("marker"));
        int held = events.size();
        for (Event event : events) {
            if (event.functionResponses().isEmpty()) {
                continue;
            }
            List<Part> parts = new ArrayList<>();
            for (FunctionResponse response : event.functionResponses()) {
                parts.add(Part.builder().functionResponse(response.toBuilder()
                        .response(Map.of("result", marker)).build()).build());
            }
            event.setContent(Content.builder().role("user").parts(parts).build());
        }
        events.add(Event.builder().author("user").content(Content.builder().role("user")
                .parts(List.of(Part.fromText(marker))).build()).build());
        return Protocol.object("changed", List.of("the run's events (" + held + " events)"));
    }

    public static void main(String[] args) {
        Protocol.serve(new Harness(List.of(args).contains("--resumable")));
    }
}
