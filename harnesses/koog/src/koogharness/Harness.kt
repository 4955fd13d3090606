package koogharness

import ai.koog.agents.core.agent.AIAgent
import ai.koog.agents.core.agent.GraphAIAgent
import ai.koog.agents.core.agent.exception.AIAgentMaxNumberOfIterationsReachedException
import ai.koog.agents.core.tools.ToolRegistry
import ai.koog.agents.core.tools.reflect.asTools
import ai.koog.agents.features.eventHandler.feature.handleEvents
import ai.koog.http.client.KoogHttpClientException
import ai.koog.http.client.ktor.KtorKoogHttpClient
import ai.koog.prompt.executor.clients.openai.OpenAIClientSettings
import ai.koog.prompt.executor.clients.openai.OpenAILLMClient
import ai.koog.prompt.executor.clients.openai.OpenAIModels
import ai.koog.prompt.executor.llms.MultiLLMPromptExecutor
import ai.koog.serialization.JSONElement
import ai.koog.serialization.JSONObject
import ai.koog.serialization.JSONPrimitive
import ai.koog.serialization.kotlinx.toKotlinxJsonElement
import io.ktor.client.HttpClient
import io.ktor.client.engine.mock.MockEngine
import io.ktor.client.engine.mock.respond
import io.ktor.client.engine.mock.toByteArray
import io.ktor.http.HttpStatusCode
import io.ktor.http.headersOf
import kotlinx.coroutines.runBlocking
import kotlinx.serialization.json.JsonElement
import java.util.Collections
import java.util.concurrent.ConcurrentHashMap
import java.util.concurrent.atomic.AtomicInteger
import java.util.jar.JarFile
import reactconformance.Protocol
import reactconformance.shared.ChatCompletions
import reactconformance.shared.ToolClasses

/**
 * Koog's AIAgent with its defaults (the graph strategy singleRunStrategy) and the suite's tools as
 * Koog's annotation-based tools (@Tool and @LLMDescription methods, read by ToolRegistry through
 * `asTools`), over Koog's own OpenAILLMClient (in a MultiLLMPromptExecutor). The model seam is the
 * Ktor engine beneath Koog's KtorKoogHttpClient, given through its documented
 * `KtorKoogHttpClient.Factory(baseClient)`: Ktor's MockEngine answers each chat-completions request
 * from the script, so Koog's request building, reply parsing and error handling run as in a user's
 * run; in `http` scenarios the client is pointed at the suite's endpoint (CallRequest.base_url) over
 * its default engine instead.
 *
 * The step cap: `maxIterations` counts the graph's node executions, the start and finish nodes
 * among them. singleRunStrategy runs one model-call node and one tool node per step, so N steps are
 * maxIterations = 2N + 1: the N-th model call still answers (a final answer reaches the finish
 * node), and the node that would send its tool results for the (N+1)-th call raises.
 */
class Harness : Protocol.Handlers {
    private data class Agent(val spec: Map<String, Any?>) {
        /** The tool args Koog's EventHandler handed the last run's handlers (ToolCallEventContext.toolArgs). */
        @Volatile var handedOut: List<JSONObject> = listOf()
    }

    private val agents = ConcurrentHashMap<String, Agent>()

    override fun hello(command: Map<String, Any?>): Map<String, Any?> = Protocol.`object`(
        "name", "koog", "version", jarVersion(AIAgent::class.java), "capabilities", CLAIMED,
        "not_claimed", NOT_CLAIMED, "known_failures", KNOWN_FAILURES, "parity", PARITY,
        "dependencies", mapOf(
            "ai.koog:koog-agents-jvm" to jarVersion(Class.forName("ai.koog.agents.Stub")),
            "ai.koog:agents-core-jvm" to jarVersion(AIAgent::class.java),
            "ai.koog:prompt-executor-openai-client-jvm" to jarVersion(OpenAILLMClient::class.java),
            "io.ktor:ktor-client-mock-jvm" to jarVersion(MockEngine::class.java),
        ),
    )

    override fun build(command: Map<String, Any?>): Map<String, Any?> {
        agents[Protocol.asString(command["agent"])] = Agent(Protocol.asObject(command["spec"]))
        return Protocol.`object`("error", null)
    }

    /** One run's record, from Koog's EventHandler feature: its tool calls as steps, its model calls. */
    private class Record {
        val steps: MutableList<Any?> = Collections.synchronizedList(ArrayList())
        val handedOut: MutableList<JSONObject> = Collections.synchronizedList(ArrayList())
        val modelCalls = AtomicInteger()

        fun step(tool: String, args: JSONObject, callId: String?, observation: String, isError: Boolean) {
            handedOut.add(args)
            steps.add(Protocol.`object`("thought", null, "tool_name", tool, "tool_args", Protocol.wire(json(args)),
                "observation", observation, "is_error", isError, "call_id", callId))
        }
    }

    override fun run(command: Map<String, Any?>): Map<String, Any?> {
        val agent = agents[Protocol.asString(command["agent"])]
            ?: throw IllegalStateException("no agent ${command["agent"]} was built")
        val call = Protocol.asObject(command["call"])
        val run = Protocol.currentRun()
        val record = Record()
        val input = Protocol.userMessage(Protocol.asObject(call["inputs"]))
        val reply: String = try {
            val koog = agent(agent.spec, call["base_url"] as String?, run, record)
            if ("async" == call["mode"]) runBlocking { koog.run(input, null) } else koog.runBlocking(input)
        } catch (e: Exception) {
            agent.handedOut = ArrayList(record.handedOut)
            return Protocol.`object`("outcome", Protocol.`object`("error", failure(e, agent.spec, record),
                "trajectory", ArrayList(record.steps)))
        } catch (e: StackOverflowError) { // Koog's own recursion over deep tool args (ARGS-5)
            agent.handedOut = ArrayList(record.handedOut)
            return Protocol.`object`("outcome", Protocol.`object`("error", Protocol.errorInfo(e),
                "trajectory", ArrayList(record.steps)))
        }
        agent.handedOut = ArrayList(record.handedOut)
        val outputs = Protocol.replyOutputs(Protocol.asObject(agent.spec["signature"]), reply)
        return Protocol.`object`("outcome", Protocol.`object`("outputs", outputs, "trajectory", ArrayList(record.steps),
            "stop_reason", "finish", "iterations", record.modelCalls.get()))
    }

    /** The AIAgent of one run: Koog's OpenAI client over the scripted engine (or the call's endpoint),
     *  the suite's tools, cap and instructions, and an EventHandler recording the run. */
    private fun agent(spec: Map<String, Any?>, baseUrl: String?, run: String, record: Record): GraphAIAgent<String, String> {
        val client = if (baseUrl == null) {
            val settings = OpenAIClientSettings(baseUrl = SCRIPTED_URL)
            val readTimeout = settings.timeoutConfig.socketTimeoutMillis / 1000.0
            val engine = MockEngine { request ->
                val body = request.body.toByteArray().toString(Charsets.UTF_8)
                val answer = Protocol.withRun(run, java.util.function.Supplier { ChatCompletions.answer(body, readTimeout) })
                respond(answer.body(), HttpStatusCode.fromValue(answer.status()),
                    headersOf(*answer.headers().map { (name, value) -> name to listOf(value) }.toTypedArray()))
            }
            OpenAILLMClient("scripted", settings, KtorKoogHttpClient.Factory(HttpClient(engine)))
        } else {
            // Koog's settings take the host; the path "v1/chat/completions" is its own.
            OpenAILLMClient("placeholder-key", OpenAIClientSettings(baseUrl = baseUrl.removeSuffix("/").removeSuffix("/v1")))
        }
        val declared = Protocol.asList(spec["tools"])
        val tools = ToolRegistry {
            if (declared.isNotEmpty()) {
                val instance = ToolClasses.instance(declared, { name, args ->
                    Protocol.withRun(run, java.util.function.Supplier { Protocol.callTool(name, plain(args)) })
                }, TOOL_ANNOTATIONS)
                tools(instance::class.asTools(instance))
            }
        }
        val instructions = Protocol.asString(Protocol.asObject(spec["signature"])["instructions"])
        return AIAgent(
            promptExecutor = MultiLLMPromptExecutor(client),
            llmModel = OpenAIModels.Chat.GPT4oMini,
            toolRegistry = tools,
            systemPrompt = instructions.ifEmpty { null },
            maxIterations = maxIterations((spec["max_steps"] as Number).toInt()),
        ) {
            handleEvents {
                onLLMCallCompleted { record.modelCalls.incrementAndGet() }
                onToolCallCompleted { e -> record.step(e.toolName, e.toolArgs, e.toolCallId, observation(e.toolResult), false) }
                onToolCallFailed { e -> record.step(e.toolName, e.toolArgs, e.toolCallId, e.message, true) }
                onToolValidationFailed { e -> record.step(e.toolName, e.toolArgs, e.toolCallId, e.message, true) }
            }
        }
    }

    /** AIAgent.run hands the caller the final reply alone, a String; the containers Koog handed out
     *  are the EventHandler contexts' toolArgs, JSONObjects whose entries the mutation adds to. */
    override fun mutateLastResult(command: Map<String, Any?>): Map<String, Any?> {
        val agent = agents[Protocol.asString(command["agent"])] ?: return Protocol.`object`("changed", listOf<Any?>())
        val marker = Protocol.asString(command["marker"])
        val changed = agent.handedOut.mapIndexed { index, args ->
            val container = "ToolCallEventContext.toolArgs.entries (tool call ${index + 1})"
            try {
                @Suppress("UNCHECKED_CAST")
                (args.entries as MutableMap<String, JSONElement>).put(marker, JSONPrimitive.of(marker))
                container
            } catch (e: UnsupportedOperationException) {
                "refused: $container: $e"
            }
        }
        return Protocol.`object`("changed", changed)
    }

    companion object {
        private val CLAIMED = listOf("max-steps-error", "parallel-tool-calls", "async", "http")

        private val NOT_CLAIMED = Protocol.`object`(
            "signature", "AIAgent is a native tool-calling loop: no signature, adapters or extraction call",
            "adapters", "AIAgent is a native tool-calling loop: the replies are tool calls, in no adapter format",
            "max-steps-extract", "past maxIterations the graph throws AIAgentMaxNumberOfIterationsReachedException "
                + "(AIAgentSubgraph.executeWithInnerContext); no extra call writes the outputs",
            "max-steps-return", "past maxIterations the graph throws AIAgentMaxNumberOfIterationsReachedException "
                + "(AIAgentSubgraph.executeWithInnerContext); it never returns capped",
            "cap-summary", "past maxIterations the graph throws: it returns no summary",
            "per-call-cap", "maxIterations is part of the AIAgentConfig the agent is built with; AIAgent.run takes "
                + "the input and a session id, no cap",
            "repeated-error-stop", "GenericAgentEnvironment.processToolCall turns each failure into a tool result for "
                + "the model; nothing counts repeated failures",
            "tool-approval", "singleRunStrategy runs every tool call it gets (nodeExecuteTools); no approval hook",
            "approval-edit", "no approval hook",
            "durable-approvals", "no approval hook",
            "ask-user", "no built-in tool to ask the user in AIAgent's defaults",
            "streaming", "singleRunStrategy asks the model with nodeLLMRequest (requestLLM), never streaming; "
                + "requestLLMStreaming is for strategies of one's own",
            "lm-retry", "OpenAILLMClient sends each request once (AbstractOpenAILLMClient.execute): a 429, a 5xx, a "
                + "timeout or a reset connection ends AIAgent.run as LLMClientException; retries are the opt-in "
                + "decorator RetryingLLMClient, which AIAgent's defaults do not use")

        private val PARITY = Protocol.`object`(
            "stop_reason", "derived: finish on every reply AIAgent.run returns, as singleRunStrategy reaches its finish "
                + "node only on a reply without tool calls (past the cap it throws)",
            "iterations", "derived: counted from the run's own events, EventHandler's onLLMCallCompleted",
            "max_iterations", "derived: the step cap the harness translated into maxIterations (2N + 1 nodes); the "
                + "exception's message states that node count",
            "partial_run", "none: AIAgentMaxNumberOfIterationsReachedException carries only the limit",
            "concurrency", "per-run: an AIAgent is built per run so that each run's tool methods and model seam "
                + "report to that run (Protocol.currentRun is per thread, and Koog runs tools on its own dispatcher)")

        /** LOOP-1's defect, behind most failures (the suite blocks the rest by LOOP-1): singleRunStrategy
         *  finishes on a reply that has text beside its tool calls, whenever that reply answers a tool result. */
        private const val TEXT_ENDS_THE_RUN = ("singleRunStrategy finishes on any reply to a tool result that has text "
            + "beside its tool calls: its edge nodeSendToolResult -> nodeFinish onTextMessage is tried before "
            + "nodeSendToolResult -> nodeExecuteTool onToolCalls (AIAgentSimpleStrategies.singleRunStrategy), so that "
            + "text is returned as the answer and the calls never run (a direct run, two tool steps each with text "
            + "beside its call: AIAgent.run returned step 2's text after two model calls, step 2's tool never ran)")

        /** Each failing requirement, with what Koog 1.1.1 does and where: each checked by a direct run of
         *  AIAgent over OpenAILLMClient on Ktor's MockEngine, outside the suite. */
        private val KNOWN_FAILURES = Protocol.`object`(
            "LOOP-1", TEXT_ENDS_THE_RUN,
            "EXH-2", "AIAgentMaxNumberOfIterationsReachedException carries only the limit it was given "
                + "(AIAgentException.kt): no steps, tools used or last observation",
            "ARGS-2", "args that are JSON but not an object end the run: AbstractOpenAILLMClient.toolCallPartsOrNull "
                + "reads them with Json.parseToJsonElement(...).jsonObject while it parses the reply, which raises "
                + "IllegalArgumentException ('... is not a JsonObject') out of AIAgent.run before any tool is considered",
            "ARGS-3", "malformed args end the run: AbstractOpenAILLMClient.toolCallPartsOrNull parses them with "
                + "kotlinx's Json.parseToJsonElement while it reads the reply, and its JsonDecodingException leaves "
                + "AIAgent.run; and Python's unquoted True parses as a JSON literal that ToolFromCallable.decodeArgs "
                + "decodes as the boolean true (a direct run: notify ran with urgent = true)",
            "ARGS-4", "a value of the wrong type is refused, but the error observation does not name the field: "
                + "ToolFromCallable.decodeArgs decodes each parameter's value alone, so kotlinx's message names the "
                + "element '\$.primitive' ('Failed to parse literal ... as a long value'), never the parameter",
            "ARGS-5", "args nested 5000 levels deep end the run with StackOverflowError: MessagePart.Tool.Call's "
                + "constructor (Message.kt) serialises the parsed args again, recursively, while "
                + "AbstractOpenAILLMClient.toolCallPartsOrNull reads the reply",
            "ARGS-6", "an argument the tool does not declare is dropped without a word: ToolFromCallable.decodeArgs "
                + "reads only the callable's own parameters from the args object")

        private const val SCRIPTED_URL = "http://scripted.invalid"

        /** Koog's annotation-based tools: {@code @Tool(customName)} methods with {@code @LLMDescription}
         *  on the method and each parameter, returning a String (the tool result the model reads). */
        private val TOOL_ANNOTATIONS = object : ToolClasses.Annotations {
            override fun library() = "Koog"
            override fun imports() = "import ai.koog.agents.core.tools.annotations.LLMDescription;\n" +
                "import ai.koog.agents.core.tools.annotations.Tool;\n"
            override fun tool(name: String, description: String) =
                "@Tool(customName = $name)\n    @LLMDescription($description)"
            override fun parameter(description: String) = "@LLMDescription($description)"
            override fun parameterType(suiteType: String, usual: String) = when (suiteType) {
                "list" -> "kotlinx.serialization.json.JsonArray"
                "dict" -> "kotlinx.serialization.json.JsonObject"
                else -> usual
            }
            override fun returnType() = "String"
            override fun returned(result: String) = "return reactconformance.Protocol.text($result);"
        }

        /** A generated tool method's args as the suite reads them: kotlinx JSON values as plain values. */
        private fun plain(args: Map<String, Any?>): Map<String, Any?> =
            args.mapValues { (_, value) -> if (value is JsonElement) Protocol.parse(value.toString()) else value }

        private fun json(value: JSONElement?): Any? =
            value?.let { Protocol.parse(it.toKotlinxJsonElement().toString()) }

        private fun observation(result: JSONElement?): String {
            val value = json(result)
            return if (value is String) value else Protocol.stringify(value)
        }

        /** The suite's step cap in Koog's units (see the class's comment); a cap of zero stays zero,
         *  which AIAgentConfig refuses. */
        private fun maxIterations(steps: Int) = if (steps <= 0) steps else 2 * steps + 1

        /** What AIAgent.run raised: past the cap, AIAgentMaxNumberOfIterationsReachedException. A failed
         *  model call is the client's exception, its HTTP status in KoogHttpClientException.statusCode. */
        private fun failure(error: Throwable, spec: Map<String, Any?>, record: Record): Map<String, Any?> {
            if (error is AIAgentMaxNumberOfIterationsReachedException) {
                return Protocol.errorInfo(error, "max-iterations", Protocol.`object`("max_iterations", spec["max_steps"],
                    "iterations", record.modelCalls.get()))
            }
            generateSequence(error) { if (it.cause === it) null else it.cause }.forEach { cause ->
                if (cause is KoogHttpClientException && cause.statusCode != null) {
                    return Protocol.errorInfo(error, null, Protocol.`object`("status", cause.statusCode))
                }
            }
            return Protocol.errorInfo(error)
        }

        /** The Implementation-Version of the jar that holds {@code type} (Koog's jars have no pom.properties). */
        private fun jarVersion(type: Class<*>): String {
            val location = type.protectionDomain.codeSource?.location ?: return "not installed"
            return JarFile(java.io.File(location.toURI())).use { it.manifest?.mainAttributes?.getValue("Implementation-Version") }
                ?: "not installed"
        }
    }
}

fun main() {
    Protocol.serve(Harness())
}
