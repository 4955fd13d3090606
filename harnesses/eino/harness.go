// The react-conformance harness for Eino (github.com/cloudwego/eino), its ReAct agent
// (flow/agent/react) over eino-ext's OpenAI chat model (components/model/openai).
//
//	pytest --impl eino      (or --impl cmd:"harnesses/eino/.bin/eino-harness")
//
// Seam: eino-ext's OpenAI ChatModel (openai.NewChatModel) with its documented HTTPClient option: an
// http.Client whose Transport is protocol.Endpoint (harnesses/lib/go/openai.go), so every
// chat-completions request the model builds goes to the suite as an LMCall and is answered with
// the chat.completion JSON (or the HTTP status) an endpoint would give. In the `http` profile the
// same model points at CallRequest.base_url with BaseURL and the default client.
//
// The agent is react.NewAgent with its defaults but for the cap: AgentConfig.MaxStep counts the
// steps of the agent's graph (react.go: "default 12 of steps in pregel"), where one ReAct round is
// two, the ChatModel node and the Tools node; so the suite's cap of N model calls is MaxStep = 2N,
// and a cap for one call is compose.WithRuntimeMaxSteps(2N) (compose/graph_call_options.go). The
// steps are read through the documented react.WithMessageFuture option (react/option.go), which
// hands the caller every message the run produced: each model reply and each tool result.
//
// Tools: utils.NewTool (components/tool/utils/invokable_func.go) with a schema.ToolInfo whose
// parameters are the suite's JSON schema (schema.NewParamsOneOfByJSONSchema), and a function of
// map[string]any. InferTool, which infers the ToolInfo from a Go struct, needs the struct at compile
// time; the suite's tools are described at run time, so NewTool, Eino's documented form for a
// tool with a ToolInfo of its own, declares them. Both unmarshal the arguments with sonic before
// the function runs.
//
// go.mod pins sonic at v1.15.5, above the v1.14.1 Eino asks for: v1.14.1 does not compile on Go 1.26
// (internal/rt: undefined GoMapIterator). The welcome's dependencies name the version that runs.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sync"

	"github.com/cloudwego/eino-ext/components/model/openai"
	"github.com/cloudwego/eino/components/tool"
	"github.com/cloudwego/eino/components/tool/utils"
	"github.com/cloudwego/eino/compose"
	"github.com/cloudwego/eino/flow/agent"
	"github.com/cloudwego/eino/flow/agent/react"
	"github.com/cloudwego/eino/schema"
	"github.com/eino-contrib/jsonschema"

	"react-conformance/protocol"
)

type object = protocol.Object

const (
	library     = "github.com/cloudwego/eino"
	openaiModel = "github.com/cloudwego/eino-ext/components/model/openai"
	sonic       = "github.com/bytedance/sonic"
)

var claimed = []any{"max-steps-error", "per-call-cap", "parallel-tool-calls", "http"}

var notClaimed = object{
	"signature":           "a native tool-calling loop: messages in, a message out, no signature",
	"adapters":            "no pluggable format-and-parse layer: the ChatModel (eino-ext's openai) formats and parses every call",
	"max-steps-extract":   "on MaxStep the graph returns ErrExceedMaxSteps (compose/graph_run.go); no tool-less final call is made",
	"max-steps-return":    "on MaxStep the graph returns the error ErrExceedMaxSteps (compose/graph_run.go), never a normal result",
	"cap-summary":         "the cap is the error ErrExceedMaxSteps (compose/graph_run.go): no run returns on a cap to summarise",
	"repeated-error-stop": "the ReAct agent has no repeated-failure stop: a tool's error ends the run at once (the Tools node returns it, compose/tool_node.go)",
	"ask-user":            "the ReAct agent has no built-in tool for asking the person a question",
	"tool-approval":       "the ReAct agent runs every tool call the model makes (react.go, the Tools node): no approval step; interrupts are the graph's own (compose.WithInterruptBeforeNodes), not a per-tool approval",
	"approval-edit":       "the ReAct agent has no approval step, so no pending call to edit",
	"durable-approvals":   "the ReAct agent has no approval step, so no pause to serialise",
	"async":               "no async form: Agent.Generate blocks, as Go calls do",
	"streaming":           "Agent.Stream streams the final message's chunks (react.go), not one event per step",
	"lm-retry":            "eino-ext's OpenAI ChatModel sends each request once (components/model/openai, libs/acl/openai): no retries",
}

var parity = object{
	"stop_reason":    "library: a normal return of Agent.Generate is the final answer (the ChatModel's reply without tool calls ends the graph, react.go); the error ErrExceedMaxSteps (compose/graph_run.go) is the cap stop",
	"iterations":     "derived: counted from the messages react.WithMessageFuture hands the caller, one assistant message per ChatModel call (react/option.go)",
	"max_iterations": "derived: the step cap the harness gave, N for MaxStep = 2N; ErrExceedMaxSteps names no number",
	"partial_run":    "library: the messages react.WithMessageFuture hands the caller, also when the run fails (react/option.go)",
	"concurrency":    "shared",
}

// Each failure is the library's, checked by driving it directly (library_test.go, go test).
const (
	toolErrorEnds = "a tool's error ends the run: the Tools node returns it out of Agent.Generate ([NodeRunError] failed to invoke tool, compose/tool_node.go), so the model is never told and the loop stops"
	refusedEnds   = "NewTool's sonic unmarshal refuses the arguments before the tool function runs (invokable_func.go, InvokableRun), but its error then ends the run (the Tools node returns it, compose/tool_node.go): the agent is never shown it"
	unchecked     = "the ToolInfo's schema is only declared to the model: NewTool unmarshals the arguments into the function's type with sonic and checks no schema (components/tool/utils/invokable_func.go), so missing, extra and wrong-typed values reach the function"
	unknownTool   = "a call of a tool the agent lacks ends the run with '[NodeRunError] tool <name> not found in toolsNode indexes' (compose/tool_node.go) unless the ToolsNodeConfig.UnknownToolsHandler option is set"
	tooDeep       = "sonic refuses arguments nested past its depth limit ('recursion exceeded max depth') in NewTool's unmarshal (invokable_func.go), and that error then ends the run (compose/tool_node.go)"
	zeroCap       = "a step cap of zero is taken as unset: MaxStep 0 becomes the default, the node count + 10 (compose/graph.go), and WithRuntimeMaxSteps(0) is ignored (resolveMaxSteps, compose/graph_run.go)"
)

var knownFailures = object{
	"A raising tool becomes an error observation bound to its call, and the loop goes on": toolErrorEnds,
	"A tool that raises on its second call still has each error bound to its own call":    toolErrorEnds,
	"Tool args that are JSON but not an object never reach the tool":                      refusedEnds,
	"Malformed JSON tool args never crash the run":                                        refusedEnds,
	"Python literals in tool args are malformed JSON, never guessed at":                   refusedEnds,
	"Malformed JSON tool args never reach a tool that takes no arguments":                 refusedEnds,
	"Tool args that break the tool's schema never reach it with a wrong or missing value": unchecked,
	"An argument the schema does not declare is refused, naming it, not dropped":          unchecked,
	"An unknown tool name is never run, and the loop goes on":                             unknownTool,
	"An unknown tool name never crashes the run, also when it is the last step":           unknownTool,
	"The agent is told that the tool it chose does not exist":                             unknownTool,
	"A step cap of zero is refused at configuration, or raises before any model call":     zeroCap,
	"A step cap of zero given to one call is refused, or raises before any model call":    zeroCap,
}

func init() {
	for _, args := range []string{"an object nested 100000 levels deep", "an object nested 5000 levels deep",
		"an object nested 5000 levels deep after an escaped quote", "arrays nested 5000 levels deep inside its object",
		"arrays nested 5000 levels deep, each beside an empty one"} {
		knownFailures["test_tool_args_of_any_size_or_nesting_reach_the_tool_intact_or_are_refused_saying_why[store-"+args+"]"] = tooDeep
	}
}

func list(value any) []any  { l, _ := value.([]any); return l }
func obj(value any) object  { o, _ := value.(object); return o }
func str(value any) string  { s, _ := value.(string); return s }
func integer(value any) int { n, _ := value.(json.Number).Int64(); return int(n) }

// -- the tools -------------------------------------------------------------------------------------

func toolsOf(ctx context.Context, spec object) ([]tool.BaseTool, error) {
	out := []tool.BaseTool{}
	for _, t := range list(spec["tools"]) {
		spec := obj(t)
		name := str(spec["name"])
		text, err := json.Marshal(protocol.JSONSchema(spec))
		if err != nil {
			return nil, err
		}
		parameters := &jsonschema.Schema{}
		if err := json.Unmarshal(text, parameters); err != nil {
			return nil, err
		}
		info := &schema.ToolInfo{Name: name, Desc: str(spec["description"]),
			ParamsOneOf: schema.NewParamsOneOfByJSONSchema(parameters)}
		out = append(out, utils.NewTool(info, func(ctx context.Context, args map[string]any) (any, error) {
			return protocol.CallTool(ctx, name, args)
		}))
	}
	return out, nil
}

// -- the model -------------------------------------------------------------------------------------

func chatModel(ctx context.Context, baseURL string) (*openai.ChatModel, error) {
	config := &openai.ChatModelConfig{APIKey: "placeholder-key", Model: "scripted"}
	if baseURL == "" {
		config.BaseURL = "http://scripted.invalid/v1"
		config.HTTPClient = &http.Client{Transport: &protocol.Endpoint{}}
	} else {
		config.BaseURL = baseURL
	}
	return openai.NewChatModel(ctx, config)
}

// -- the agents ------------------------------------------------------------------------------------

// trajectory is the run's messages as the suite's steps: each tool call of an assistant message with
// the tool message of its call id (null where none came), and the number of model replies.
func trajectory(messages []*schema.Message) ([]any, int) {
	results := map[string]*schema.Message{}
	replies := 0
	for _, m := range messages {
		if m.Role == schema.Tool {
			results[m.ToolCallID] = m
		}
	}
	out := []any{}
	for _, m := range messages {
		if m.Role != schema.Assistant {
			continue
		}
		replies++
		var thought any
		if m.Content != "" {
			thought = m.Content
		}
		for _, call := range m.ToolCalls {
			var observation any
			if result, ok := results[call.ID]; ok {
				observation = result.Content
			}
			out = append(out, object{"thought": thought, "tool_name": call.Function.Name,
				"tool_args": protocol.ToolArgs(call.Function.Arguments), "observation": observation, "is_error": nil, "call_id": call.ID})
		}
	}
	return out, replies
}

type built struct {
	spec object
	last []*schema.Message
}

type harness struct {
	lock   sync.Mutex
	agents map[string]*built
}

func (h *harness) Hello(object) (object, error) {
	return object{"name": "eino", "version": protocol.ModuleVersion(library), "capabilities": claimed,
		"not_claimed": notClaimed, "known_failures": knownFailures, "parity": parity,
		"dependencies": object{library: protocol.ModuleVersion(library), openaiModel: protocol.ModuleVersion(openaiModel), sonic: protocol.ModuleVersion(sonic)}}, nil
}

func (h *harness) Configure(object) (object, error) { return object{}, nil }

func (h *harness) Build(cmd object) (object, error) {
	h.lock.Lock()
	defer h.lock.Unlock()
	h.agents[str(cmd["agent"])] = &built{spec: obj(cmd["spec"])}
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
	failed := func(err error) (object, error) {
		return object{"outcome": object{"error": protocol.ErrorInfo(err, "", nil)}}, nil
	}
	llm, err := chatModel(ctx, str(call["base_url"]))
	if err != nil {
		return failed(err)
	}
	tools, err := toolsOf(ctx, spec)
	if err != nil {
		return failed(err)
	}
	steps := integer(spec["max_steps"])
	config := &react.AgentConfig{ToolCallingModel: llm, ToolsConfig: compose.ToolsNodeConfig{Tools: tools}, MaxStep: 2 * steps}
	if instructions := str(obj(spec["signature"])["instructions"]); instructions != "" {
		config.MessageModifier = react.NewPersonaModifier(instructions)
	}
	built, err := react.NewAgent(ctx, config)
	if err != nil {
		return failed(err)
	}
	future, messages := react.WithMessageFuture()
	options := []agent.AgentOption{future}
	if n, ok := call["max_steps"].(json.Number); ok {
		perCall, _ := n.Int64()
		steps = int(perCall)
		options = append(options, agent.WithComposeOptions(compose.WithRuntimeMaxSteps(2*steps)))
	}
	input := []*schema.Message{schema.UserMessage(protocol.UserMessage(obj(call["inputs"])))}
	reply, err := built.Generate(ctx, input, options...)
	produced := []*schema.Message{}
	iterator := messages.GetMessages()
	for {
		// The run's error is the last item: onGraphError sends it and leaves the channel open
		// (react/option.go), so reading past it would wait for ever.
		message, more, iterationErr := iterator.Next()
		if !more || iterationErr != nil {
			break
		}
		if message != nil {
			produced = append(produced, message)
		}
	}
	h.lock.Lock()
	entry.last = produced
	h.lock.Unlock()
	done, iterations := trajectory(produced)
	if errors.Is(err, compose.ErrExceedMaxSteps) {
		info := protocol.ErrorInfo(err, "max-iterations", capFields(spec, done, iterations, steps))
		info["type"] = "ErrExceedMaxSteps" // a sentinel error: Go tells it by its value (errors.Is), not its type
		return object{"outcome": object{"trajectory": done, "iterations": iterations, "stop_reason": "max_steps",
			"error": info}}, nil
	}
	if err != nil {
		return object{"outcome": object{"trajectory": done, "iterations": iterations, "error": protocol.ErrorInfo(err, "", nil)}}, nil
	}
	return object{"outcome": object{"outputs": protocol.ReplyOutputs(obj(spec["signature"]), reply.Content),
		"trajectory": done, "iterations": iterations, "stop_reason": "finish"}}, nil
}

// capFields are the partial run beside ErrExceedMaxSteps: the messages the future handed over.
func capFields(spec object, done []any, iterations, steps int) object {
	own := map[string]bool{}
	for _, t := range list(spec["tools"]) {
		own[str(obj(t)["name"])] = true
	}
	used := []any{}
	var last any
	for _, s := range done {
		step := obj(s)
		if own[str(step["tool_name"])] && step["observation"] != nil {
			used = append(used, step["tool_name"])
			last = step["observation"]
		}
	}
	return object{"iterations": iterations, "max_iterations": steps, "tools_used": used, "history": done,
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
	for _, message := range entry.last {
		message.Content = marker
	}
	return object{"changed": []any{fmt.Sprintf("the MessageFuture's messages (%d messages)", held)}}, nil
}

func main() {
	protocol.Serve(&harness{agents: map[string]*built{}})
}
