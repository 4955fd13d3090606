// The react-conformance harness for the Anthropic Go SDK's tool runner
// (github.com/anthropics/anthropic-sdk-go/v2, client.Beta.Messages.NewToolRunner with toolrunner tools).
//
//	pytest --impl anthropic-go      (or --impl cmd:"harnesses/anthropic-go/.bin/anthropic-go-harness")
//
// Seam: the SDK's own client (anthropic.NewClient, its defaults: 2 retries with backoff) with the
// documented option.WithHTTPClient: an http.Client whose Transport is protocol.MessagesEndpoint
// (harnesses/lib/go/messages.go), which answers the Messages API from the script as the suite's
// endpoint does (conformance/_messages_api.py), message threads included: the runner sends its
// requests on a thread by default, each after the first with only the new messages. In the `http`
// profile the client points at CallRequest.base_url (without its /v1, which the SDK adds).
//
// Tools: toolrunner.NewBetaToolFromBytes with the suite's JSON schema and a handler of
// map[string]any (tools.md: the input type is the handler's; a struct, as NewBetaToolFromJSONSchema
// infers the schema from, needs the struct at compile time, and the suite's tools are described at
// run time). The runner unmarshals the input into it before the handler runs (toolrunner/tool.go,
// parse). A result is returned as its text.
//
// Step cap: BetaToolRunnerParams.MaxIterations, "limits the number of API calls" (betatoolrunner.go);
// 0, the default, is no limit. A runner holds one conversation, so each call makes its own, with
// the call's cap. On the cap the runner ends (nextRequest) and RunToCompletion returns the last
// reply, a tool_use message whose tools were not run; nothing is raised.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"
	"github.com/anthropics/anthropic-sdk-go/v2/toolrunner"

	"react-conformance/protocol"
)

type object = protocol.Object

const (
	library = "github.com/anthropics/anthropic-sdk-go/v2"
	model   = "claude-haiku-5-5"
)

var claimed = []any{"max-steps-return", "per-call-cap", "parallel-tool-calls", "streaming", "lm-retry", "http"}

var notClaimed = object{
	"signature":           "a native tool-calling loop: a system prompt, messages and tools, no signature",
	"adapters":            "no pluggable format-and-parse layer: the runner speaks the Messages API only",
	"max-steps-error":     "on MaxIterations the runner ends (nextRequest, betatoolrunner.go) and RunToCompletion returns the last reply; nothing is raised",
	"max-steps-extract":   "on MaxIterations the runner ends (nextRequest, betatoolrunner.go): no tool-less final call",
	"cap-summary":         "on MaxIterations the last reply, a tool_use message, is all that is returned: no message for the user of what was tried",
	"repeated-error-stop": "a failing tool's error goes back as an is_error tool_result every time (executeToolUse, betatoolrunner.go): no count of repeated failures and no stop",
	"ask-user":            "the SDK ships no tool for asking the person a question",
	"tool-approval":       "no pause before a tool runs: executeTools (betatoolrunner.go) runs every tool_use block of a reply",
	"approval-edit":       "no pause before a tool runs, so no pending call to edit",
	"durable-approvals":   "no pause before a tool runs, so none to keep",
	"async":               "no async form: RunToCompletion blocks, as Go calls do",
}

var parity = object{
	"stop_reason":    "derived: the runner's own record, its replies: MaxIterations replies, the last a tool_use message, is the cap (nextRequest, betatoolrunner.go); a reply that ends the turn (stop_reason end_turn) is the finish",
	"iterations":     "library: BetaToolRunner.IterationCount(), one per API call (betatoolrunner.go)",
	"max_iterations": "none: no cap error: on MaxIterations the runner returns the last reply",
	"partial_run":    "none: no cap error to carry it: the runner's Messages() hold the run",
	"concurrency":    "per-run: 'A BetaToolRunner is NOT safe for concurrent use' (betatoolrunner.go) and holds one conversation, so each call makes its own",
}

// Each failure is the library's, checked by driving it directly (library_test.go, go test).
const (
	capDrops  = "MaxIterations N ends the run before the Nth reply's tools run: nextRequest (betatoolrunner.go) checks iterationCount >= MaxIterations before executeTools, so the last reply's tool calls never run and get no result"
	unchecked = "the runner checks no schema: a toolrunner tool's parse (toolrunner/tool.go) unmarshals the input into the handler's type, so missing, extra and wrong-typed values reach the handler"
	tooDeep   = "args nested 100,000 levels deep end the run: the client's encoding/json refuses the whole reply past 10,000 levels ('error parsing response json ... exceeded max depth', internal/requestconfig) before the runner sees it"
)

var knownFailures = object{
	"The step cap stops a loop that never chooses finish":                                                                              capDrops,
	"A step cap of one allows exactly one step":                                                                                        capDrops,
	"Tool args that break the tool's schema never reach it with a wrong or missing value":                                              unchecked,
	"An argument the schema does not declare is refused, naming it, not dropped":                                                       unchecked,
	"test_tool_args_of_any_size_or_nesting_reach_the_tool_intact_or_are_refused_saying_why[store-an object nested 100000 levels deep]": tooDeep,
}

func list(value any) []any { l, _ := value.([]any); return l }
func obj(value any) object { o, _ := value.(object); return o }
func str(value any) string { s, _ := value.(string); return s }

// -- the tools and the runner -------------------------------------------------------------------------

func toolsOf(spec object) ([]anthropic.BetaTool, error) {
	tools := []anthropic.BetaTool{}
	for _, t := range list(spec["tools"]) {
		tool := obj(t)
		name := str(tool["name"])
		schema, err := json.Marshal(protocol.JSONSchema(tool))
		if err != nil {
			return nil, err
		}
		defined, err := toolrunner.NewBetaToolFromBytes(name, str(tool["description"]), schema,
			func(ctx context.Context, input map[string]any) (anthropic.BetaToolResultBlockParamContentUnion, error) {
				result, err := protocol.CallTool(ctx, name, input)
				if err != nil {
					return anthropic.BetaToolResultBlockParamContentUnion{}, err
				}
				return anthropic.BetaToolResultBlockParamContentUnion{OfText: &anthropic.BetaTextBlockParam{Text: protocol.Text(result)}}, nil
			})
		if err != nil {
			return nil, err
		}
		tools = append(tools, defined)
	}
	return tools, nil
}

func client(baseURL string, endpoint *protocol.MessagesEndpoint) anthropic.Client {
	if baseURL != "" {
		return anthropic.NewClient(option.WithAPIKey("placeholder-key"), option.WithBaseURL(strings.TrimSuffix(baseURL, "/v1")))
	}
	return anthropic.NewClient(option.WithAPIKey("placeholder-key"), option.WithHTTPClient(&http.Client{Transport: endpoint}))
}

func params(spec object, call object, cap int) anthropic.BetaToolRunnerParams {
	message := anthropic.BetaMessageNewParams{Model: model, MaxTokens: 1024,
		Messages: []anthropic.BetaMessageParam{anthropic.NewBetaUserMessage(anthropic.NewBetaTextBlock(protocol.UserMessage(obj(call["inputs"]))))}}
	if instructions := str(obj(spec["signature"])["instructions"]); instructions != "" {
		message.System = []anthropic.BetaTextBlockParam{{Text: instructions}}
	}
	return anthropic.BetaToolRunnerParams{BetaMessageNewParams: message, MaxIterations: cap}
}

// -- reading the run ---------------------------------------------------------------------------------

// plain is the runner's messages as JSON data.
func plain(value any) []any {
	text, err := json.Marshal(value)
	if err != nil {
		return nil
	}
	var out []any
	decoder := json.NewDecoder(strings.NewReader(string(text)))
	decoder.UseNumber()
	_ = decoder.Decode(&out)
	return out
}

// steps are the tool_use blocks of the assistant messages, in order, each with its tool_result.
func steps(messages []any) []any {
	results := map[string]object{}
	for _, m := range messages {
		for _, b := range list(obj(m)["content"]) {
			if block := obj(b); block["type"] == "tool_result" {
				results[str(block["tool_use_id"])] = block
			}
		}
	}
	found := []any{}
	for _, m := range messages {
		message := obj(m)
		if message["role"] != "assistant" {
			continue
		}
		var texts []string
		for _, b := range list(message["content"]) {
			if block := obj(b); block["type"] == "text" {
				texts = append(texts, str(block["text"]))
			}
		}
		var thought any
		if text := strings.Join(texts, ""); text != "" {
			thought = text
		}
		for _, b := range list(message["content"]) {
			block := obj(b)
			if block["type"] != "tool_use" {
				continue
			}
			var observation, isError any
			if result, ok := results[str(block["id"])]; ok {
				observation = resultText(result["content"])
				isError = result["is_error"] == true
			}
			found = append(found, object{"thought": thought, "tool_name": block["name"], "tool_args": protocol.Wire(block["input"]),
				"observation": observation, "is_error": isError, "call_id": block["id"]})
		}
	}
	return found
}

func resultText(content any) string {
	if text, ok := content.(string); ok {
		return text
	}
	var out strings.Builder
	for _, b := range list(content) {
		out.WriteString(str(obj(b)["text"]))
	}
	return out.String()
}

// -- the harness -------------------------------------------------------------------------------------

type agent struct {
	spec object
	last []anthropic.BetaMessageParam
}

type harness struct {
	lock   sync.Mutex
	agents map[string]*agent
}

func (h *harness) Hello(object) (object, error) {
	return object{"name": "anthropic-go", "version": protocol.ModuleVersion(library), "capabilities": claimed,
		"not_claimed": notClaimed, "known_failures": knownFailures, "parity": parity,
		"dependencies": object{library: protocol.ModuleVersion(library)}}, nil
}

func (h *harness) Configure(object) (object, error) { return object{}, nil }

func (h *harness) Build(cmd object) (object, error) {
	spec := obj(cmd["spec"])
	if _, err := toolsOf(spec); err != nil { // a tool the SDK refuses fails here, at build
		return object{"error": protocol.ErrorInfo(err, "", nil)}, nil
	}
	h.lock.Lock()
	defer h.lock.Unlock()
	h.agents[str(cmd["agent"])] = &agent{spec: spec}
	return object{"error": nil}, nil
}

func (h *harness) Run(ctx context.Context, cmd object) (object, error) {
	h.lock.Lock()
	entry, ok := h.agents[str(cmd["agent"])]
	h.lock.Unlock()
	if !ok {
		return nil, fmt.Errorf("no agent %v was built", cmd["agent"])
	}
	call := obj(cmd["call"])
	capValue := entry.spec["max_steps"]
	if perCall, ok := call["max_steps"]; ok && perCall != nil {
		capValue = perCall
	}
	n, _ := capValue.(json.Number).Int64()
	cap := int(n)
	tools, err := toolsOf(entry.spec)
	if err != nil {
		return object{"outcome": object{"error": protocol.ErrorInfo(err, "", nil)}}, nil
	}
	endpoint := &protocol.MessagesEndpoint{}
	c := client(str(call["base_url"]), endpoint)
	if str(call["mode"]) == "stream" {
		return object{"outcome": h.streamed(ctx, entry, c, tools, call, cap, endpoint)}, nil
	}
	runner := c.Beta.Messages.NewToolRunner(tools, params(entry.spec, call, cap))
	last, err := runner.RunToCompletion(ctx)
	return object{"outcome": h.outcome(entry, runner.Messages(), last, runner.IterationCount(), cap, err)}, nil
}

// streamed runs the streaming runner: one event stream per turn. The runner runs a turn's tools
// when the next turn starts (nextRequest, betatoolrunner.go), so a step event for each of the
// previous reply's results is sent when the next turn's first event arrives, and the last ones
// after the stream ends.
func (h *harness) streamed(ctx context.Context, entry *agent, c anthropic.Client, tools []anthropic.BetaTool, call object, cap int,
	endpoint *protocol.MessagesEndpoint) object {
	runner := c.Beta.Messages.NewToolRunnerStreaming(tools, params(entry.spec, call, cap))
	events := []any{}
	sent := map[string]bool{}
	report := func() {
		for _, s := range steps(plain(runner.Messages())) {
			step := obj(s)
			if step["observation"] == nil || sent[str(step["call_id"])] {
				continue
			}
			sent[str(step["call_id"])] = true
			events = append(events, object{"kind": "step", "model_calls": endpoint.Replies(), "step": step})
		}
	}
	var failed error
	for turn, err := range runner.AllStreaming(ctx) {
		if err != nil {
			failed = err
			break
		}
		first := true
		for _, err := range turn {
			if first {
				report()
				first = false
			}
			if err != nil {
				failed = err
				break
			}
		}
		if failed != nil {
			break
		}
	}
	report()
	if failed == nil {
		failed = runner.Err()
	}
	out := h.outcome(entry, runner.Messages(), runner.LastMessage(), runner.IterationCount(), cap, failed)
	if failed == nil {
		events = append(events, object{"kind": "done", "model_calls": endpoint.Replies(), "stop_reason": out["stop_reason"], "outputs": out["outputs"]})
	}
	out["events"] = events
	return out
}

func (h *harness) outcome(entry *agent, messages []anthropic.BetaMessageParam, last *anthropic.BetaMessage, iterations, cap int, err error) object {
	run := plain(messages)
	if len(run) > 0 {
		run = run[1:] // the user's message
	}
	h.lock.Lock()
	entry.last = messages
	h.lock.Unlock()
	trajectory := steps(run)
	if err != nil {
		return object{"trajectory": trajectory, "iterations": iterations, "error": protocol.ErrorInfo(err, "", nil)}
	}
	out := object{"trajectory": trajectory, "iterations": iterations}
	if last == nil {
		out["stop_reason"] = nil
		return out
	}
	stop := string(last.StopReason)
	switch {
	case stop == "end_turn":
		stop = "finish"
	case stop == "tool_use" && cap > 0 && iterations >= cap:
		stop = "max_steps"
	}
	var text strings.Builder
	for _, block := range last.Content {
		if block.Type == "text" {
			text.WriteString(block.Text)
		}
	}
	out["stop_reason"] = stop
	out["outputs"] = protocol.ReplyOutputs(obj(entry.spec["signature"]), text.String())
	return out
}

func (h *harness) MutateLastResult(cmd object) (object, error) {
	h.lock.Lock()
	defer h.lock.Unlock()
	entry := h.agents[str(cmd["agent"])]
	if entry == nil || entry.last == nil {
		return object{"changed": []any{}}, nil
	}
	marker := str(cmd["marker"])
	for _, message := range entry.last {
		switch {
		case message.OfUser != nil:
			message.OfUser.Content = append(message.OfUser.Content, anthropic.NewBetaTextBlock(marker))
		case message.OfAssistant != nil:
			message.OfAssistant.Content = append(message.OfAssistant.Content, anthropic.NewBetaTextBlock(marker))
		}
	}
	return object{"changed": []any{fmt.Sprintf("the runner's Messages() (%d messages of the call)", len(entry.last))}}, nil
}

func main() {
	protocol.Serve(&harness{agents: map[string]*agent{}})
}
