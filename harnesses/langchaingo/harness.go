// The react-conformance harness for langchaingo (github.com/tmc/langchaingo), its agent loop: an
// agents.Executor running an agents.OpenAIFunctionsAgent over the library's OpenAI model.
//
//	pytest --impl langchaingo      (or --impl cmd:"harnesses/langchaingo/langchaingo-harness")
//
// Seam: the library's own OpenAI model (llms/openai, openai.New) with its documented
// openai.WithHTTPClient option: protocol.Endpoint (harnesses/lib/go/openai.go), a Doer whose every chat-completions request is sent to the suite as
// an LMCall and answered with the chat.completion JSON (or the HTTP status) an endpoint would
// give. So the library's request building, reply parsing and tool execution all run as in a user's
// run. In the `http` profile the same model points at CallRequest.base_url with openai.WithBaseURL
// and the default HTTP client.
//
// The agent is the OpenAI functions agent (agents/openai_functions_agent.go), the library's native
// tool-calling agent, run by its Executor with the defaults (agents.NewExecutor: 5 iterations, no
// parser error handler) but for the two options a caller sets to use it: WithMaxIterations (the
// suite's step cap) and WithReturnIntermediateSteps, the documented way to read the steps (it only
// adds them to the returned values: Executor.getReturn, agents/executor.go).
//
// Tools are the library's tools.Tool interface (tools/tool.go): Name, Description and
// Call(ctx, input string) (string, error). A tool has no schema of its own: the functions agent
// declares every tool with one string argument `__arg1` (functions(), openai_functions_agent.go), and
// as the library's own tools do (tools/calculator.go), the description says what the input is: here
// the suite's description and the argument schema. The tool receives the model's arguments as the
// text ParseOutput hands it (the raw arguments, or `__arg1` when they hold one) and sends them to
// the suite as the JSON value they spell, or as that text when it is not JSON.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/tmc/langchaingo/agents"
	"github.com/tmc/langchaingo/callbacks"
	"github.com/tmc/langchaingo/chains"
	"github.com/tmc/langchaingo/llms"
	"github.com/tmc/langchaingo/llms/openai"
	"github.com/tmc/langchaingo/schema"
	"github.com/tmc/langchaingo/tools"

	"react-conformance/protocol"
)

type object = protocol.Object

const library = "github.com/tmc/langchaingo"

var claimed = []any{"max-steps-error", "parallel-tool-calls", "http"}

var notClaimed = object{
	"signature":           "a native tool-calling loop: a system message and the user's input, no signature",
	"adapters":            "no pluggable format-and-parse layer: the model (llms/openai) formats and parses every call",
	"max-steps-extract":   "on MaxIterations Executor.Call returns ErrNotFinished (agents/executor.go); it makes no tool-less final call",
	"max-steps-return":    "on MaxIterations Executor.Call returns the error ErrNotFinished (agents/executor.go), never a normal result",
	"cap-summary":         "the cap is the error ErrNotFinished, 'agent not finished before max iterations' (agents/errors.go): no run returns on a cap to summarise",
	"per-call-cap":        "the cap is the Executor's MaxIterations field (agents/executor.go); no call option sets it for one call",
	"repeated-error-stop": "the Executor has no repeated-failure stop: a tool's error ends the run at once (doAction, agents/executor.go)",
	"ask-user":            "the library has no built-in tool for asking the person a question",
	"tool-approval":       "the Executor runs every tool call it parses (doAction, agents/executor.go): no approval step",
	"approval-edit":       "the Executor has no approval step, so no pending call to edit",
	"durable-approvals":   "the Executor has no approval step, so no pause to serialise",
	"async":               "no async form: Executor.Call blocks, as Go calls do",
	"streaming":           "no event stream of steps: llms.WithStreamingFunc streams the model's text chunks only",
	"lm-retry":            "the OpenAI client sends each request once (llms/openai/internal/openaiclient): no retries",
}

var parity = object{
	"stop_reason":    "library: a normal return of Executor.Call is the final answer (an AgentFinish); the error ErrNotFinished (agents/errors.go) is the cap stop",
	"iterations":     "derived: counted from the library's own callback, HandleLLMGenerateContentStart, which the OpenAI model calls once per GenerateContent (llms/openai/openaillm.go), one per Executor iteration",
	"max_iterations": "derived: the MaxIterations the harness gave the Executor; ErrNotFinished names no number",
	"partial_run":    "library: the values Executor.Call returns beside ErrNotFinished hold the intermediate steps (getReturn, agents/executor.go)",
	"concurrency":    "shared",
}

// Each failure is the library's, checked by driving it directly (library_test.go, go test).
const (
	toolErrorEnds = "a tool's error ends the run: Executor.doAction returns it out of Executor.Call (agents/executor.go), so the model is never told and the loop stops"
	rawArgs       = "the functions agent hands Tool.Call the model's arguments text as it is, object or not, JSON or not (ParseOutput, agents/openai_functions_agent.go); the tool then fails on it and its error ends the run (Executor.doAction, agents/executor.go)"
	noSchema      = "a tools.Tool takes one string (tools/tool.go) and the agent declares every tool as one string __arg1 (functions(), agents/openai_functions_agent.go): nothing checks the arguments, which reach Tool.Call as the model wrote them"
	thoughtLost   = "the model's text beside a tool call never reaches a later request: constructScratchPad keeps it only in the Log of an AIChatMessage with tool calls, and Plan sends only that message's tool-call parts (agents/openai_functions_agent.go)"
	notFinished   = "the cap's error is ErrNotFinished, 'agent not finished before max iterations' (agents/errors.go): it says the agent did not finish, not that a limit was reached"
)

var knownFailures = object{
	"Exhausting the steps raises MaxIterationsError saying the limit was reached":         notFinished,
	"Each step prompt shows the trajectory so far":                                        thoughtLost,
	"The last step call of a long run shows the whole trajectory":                         thoughtLost,
	"Tool args that are JSON but not an object never reach the tool":                      rawArgs,
	"Malformed JSON tool args never crash the run":                                        rawArgs,
	"Python literals in tool args are malformed JSON, never guessed at":                   rawArgs,
	"Malformed JSON tool args never reach a tool that takes no arguments":                 rawArgs,
	"Tool args that break the tool's schema never reach it with a wrong or missing value": noSchema,
	"An argument the schema does not declare is refused, naming it, not dropped":          noSchema,
	"A raising tool becomes an error observation bound to its call, and the loop goes on": toolErrorEnds,
	"A tool that raises on its second call still has each error bound to its own call":    toolErrorEnds,
}

func list(value any) []any  { l, _ := value.([]any); return l }
func obj(value any) object  { o, _ := value.(object); return o }
func str(value any) string  { s, _ := value.(string); return s }
func integer(value any) int { n, _ := value.(json.Number).Int64(); return int(n) }

// -- the tools -------------------------------------------------------------------------------------

// suiteTool is one of the suite's tools as a langchaingo tools.Tool.
type suiteTool struct {
	name, description string
}

var _ tools.Tool = suiteTool{}

func (t suiteTool) Name() string        { return t.name }
func (t suiteTool) Description() string { return t.description }

// Call sends the input the library handed the tool to the suite: the JSON value it spells, or the
// text itself when it is not JSON. The run's context is the one the library passes through.
func (t suiteTool) Call(ctx context.Context, input string) (string, error) {
	var args any = input
	var parsed any
	decoder := json.NewDecoder(strings.NewReader(input))
	decoder.UseNumber()
	err := decoder.Decode(&parsed)
	if err == nil && !decoder.More() {
		args = parsed
	}
	var result any
	if err != nil && strings.Contains(err.Error(), "exceeded max depth") {
		// JSON nested deeper than encoding/json decodes (10,000 levels) goes to the suite as its text.
		result, err = protocol.CallToolJSON(ctx, t.name, input)
	} else {
		result, err = protocol.CallTool(ctx, t.name, args)
	}
	if err != nil {
		return "", err
	}
	return protocol.Text(result), nil
}

// describe is a tool's description with the input it takes, in words, as the library's own tools
// say theirs (tools/calculator.go): each key with its JSON type and description.
func describe(tool object) string {
	schema := protocol.JSONSchema(tool)
	keys := []string{}
	for _, p := range list(tool["parameters"]) {
		name := str(obj(p)["name"])
		property := obj(obj(schema["properties"])[name])
		key := name + ": " + str(property["type"])
		if description := str(property["description"]); description != "" {
			key += " (" + description + ")"
		}
		keys = append(keys, key)
	}
	if len(keys) == 0 {
		return str(tool["description"]) + " The input is an empty JSON object, {}."
	}
	return str(tool["description"]) + " The input is a JSON object with exactly these keys, each required: " +
		strings.Join(keys, "; ") + "."
}

func toolsOf(spec object) []tools.Tool {
	out := []tools.Tool{}
	for _, t := range list(spec["tools"]) {
		tool := obj(t)
		out = append(out, suiteTool{name: str(tool["name"]), description: describe(tool)})
	}
	return out
}

// -- the model ----------------------------------------------------------------------------------------

// counter counts the OpenAI model's GenerateContent calls through the library's own callback.
type counter struct {
	callbacks.SimpleHandler
	calls atomic.Int64
}

func (c *counter) HandleLLMGenerateContentStart(context.Context, []llms.MessageContent) {
	c.calls.Add(1)
}

func model(baseURL string, count *counter) (*openai.LLM, error) {
	options := []openai.Option{openai.WithToken("placeholder-key"), openai.WithModel("scripted"), openai.WithCallback(count)}
	if baseURL == "" {
		options = append(options, openai.WithBaseURL("http://scripted.invalid/v1"), openai.WithHTTPClient(&protocol.Endpoint{}))
	} else {
		options = append(options, openai.WithBaseURL(baseURL))
	}
	return openai.New(options...)
}

// -- the agents ------------------------------------------------------------------------------------

// trajectory is the Executor's intermediate steps as the suite's steps. The thought is the step's
// Log, the library's record of the model's reply ("Invoking: add with {...} responded: <text>").
func trajectory(steps []schema.AgentStep) []any {
	out := []any{}
	for _, step := range steps {
		var callID any
		if step.Action.ToolID != "" {
			callID = step.Action.ToolID
		}
		out = append(out, object{"thought": step.Action.Log, "tool_name": step.Action.Tool,
			"tool_args": protocol.ToolArgs(step.Action.ToolInput), "observation": step.Observation, "is_error": nil, "call_id": callID})
	}
	return out
}

type agent struct {
	spec object
	last []schema.AgentStep
}

type harness struct {
	lock   sync.Mutex
	agents map[string]*agent
}

func (h *harness) Hello(object) (object, error) {
	return object{"name": "langchaingo", "version": protocol.ModuleVersion(library), "capabilities": claimed,
		"not_claimed": notClaimed, "known_failures": knownFailures, "parity": parity,
		"dependencies": object{library: protocol.ModuleVersion(library)}}, nil
}

func (h *harness) Configure(object) (object, error) { return object{}, nil }

func (h *harness) Build(cmd object) (object, error) {
	h.lock.Lock()
	defer h.lock.Unlock()
	h.agents[str(cmd["agent"])] = &agent{spec: obj(cmd["spec"])}
	return object{"error": nil}, nil
}

func (h *harness) Run(ctx context.Context, cmd object) (object, error) {
	h.lock.Lock()
	entry, ok := h.agents[str(cmd["agent"])]
	h.lock.Unlock()
	if !ok {
		return nil, fmt.Errorf("no agent %v was built", cmd["agent"])
	}
	spec, call := entry.spec, obj(cmd["call"])
	count := &counter{}
	llm, err := model(str(call["base_url"]), count)
	if err != nil {
		return object{"outcome": object{"error": protocol.ErrorInfo(err, "", nil)}}, nil
	}
	options := []agents.Option{}
	if instructions := str(obj(spec["signature"])["instructions"]); instructions != "" {
		options = append(options, agents.NewOpenAIOption().WithSystemMessage(instructions))
	}
	cap := integer(spec["max_steps"])
	executor := agents.NewExecutor(agents.NewOpenAIFunctionsAgent(llm, toolsOf(spec), options...),
		agents.WithMaxIterations(cap), agents.WithReturnIntermediateSteps())
	values, err := chains.Call(ctx, executor, map[string]any{"input": protocol.UserMessage(obj(call["inputs"]))})
	steps, _ := values["intermediateSteps"].([]schema.AgentStep)
	h.lock.Lock()
	entry.last = steps
	h.lock.Unlock()
	iterations := int(count.calls.Load())
	done := trajectory(steps)
	if errors.Is(err, agents.ErrNotFinished) {
		info := protocol.ErrorInfo(err, "max-iterations", capFields(spec, steps, done, iterations, cap))
		info["type"] = "ErrNotFinished" // a sentinel error: Go tells it by its value (errors.Is), not its type
		return object{"outcome": object{"trajectory": done, "iterations": iterations, "stop_reason": "max_steps",
			"error": info}}, nil
	}
	if err != nil {
		return object{"outcome": object{"trajectory": done, "iterations": iterations, "error": protocol.ErrorInfo(err, "", nil)}}, nil
	}
	output, _ := values["output"].(string)
	return object{"outcome": object{"outputs": protocol.ReplyOutputs(obj(spec["signature"]), output),
		"trajectory": done, "iterations": iterations, "stop_reason": "finish"}}, nil
}

// capFields are the partial run ErrNotFinished comes with: the returned intermediate steps.
func capFields(spec object, steps []schema.AgentStep, done []any, iterations, cap int) object {
	own := map[string]bool{}
	for _, t := range list(spec["tools"]) {
		own[strings.ToUpper(str(obj(t)["name"]))] = true // the Executor matches names so (getNameToTool)
	}
	used := []any{}
	var last any
	for _, step := range steps {
		if own[strings.ToUpper(step.Action.Tool)] {
			used = append(used, step.Action.Tool)
			last = step.Observation
		}
	}
	return object{"iterations": iterations, "max_iterations": cap, "tools_used": used, "history": done,
		"last_observation": last}
}

func (h *harness) MutateLastResult(cmd object) (object, error) {
	h.lock.Lock()
	defer h.lock.Unlock()
	entry := h.agents[str(cmd["agent"])]
	if entry == nil || entry.last == nil {
		return object{"changed": []any{}}, nil
	}
	marker, held := str(cmd["marker"]), len(entry.last)
	for i := range entry.last {
		entry.last[i].Observation = marker
	}
	return object{"changed": []any{fmt.Sprintf("values[\"intermediateSteps\"] (%d steps)", held)}}, nil
}

func main() {
	protocol.Serve(&harness{agents: map[string]*agent{}})
}
