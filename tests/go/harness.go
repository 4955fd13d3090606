// A Go harness for the suite's own tests: binds the tiny loop of tinyloop/ through the Go protocol
// module (harnesses/lib/go), as a Go library's maintainers would bind theirs:
//
//	pytest --impl "cmd:go run ./tests/go"   (or the built binary)
//
// Only the translation is written here; the protocol module does the wire.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"sync"

	"react-conformance/protocol"
	"react-conformance/tests/go/tinyloop"
)

type object = protocol.Object

var jsonType = map[string]string{"str": "string", "int": "integer", "float": "number", "bool": "boolean",
	"list": "array", "dict": "object"}

var claimed = []string{"max-steps-return", "cap-summary", "per-call-cap", "repeated-error-stop",
	"parallel-tool-calls", "tool-approval", "approval-edit", "async"}

var notClaimed = object{
	"signature":         "a native loop: no signature, adapters or extraction call",
	"adapters":          "a native loop: the replies are tool calls, in no adapter format",
	"max-steps-error":   "on the cap the run returns; it never raises",
	"max-steps-extract": "on the cap the run returns; no extra call writes the outputs",
	"ask-user":          "no built-in tool to ask the user",
	"durable-approvals": "approval is a callback during the run: there is no pause to keep",
	"streaming":         "no event stream",
	"lm-retry":          "the model is a plain function: no client, no retries",
	"http":              "the model is a plain function: no HTTP client",
}

// With OBSERVER=1 the loop runs its observation processor: an auxiliary model call per tool result.
var observer = os.Getenv("OBSERVER") == "1"

func list(value any) []any { l, _ := value.([]any); return l }
func obj(value any) object { o, _ := value.(object); return o }
func str(value any) string { s, _ := value.(string); return s }

// toolError is the suite's tool error in the loop's terms: its kind is the tool's exception name.
type toolError struct{ *protocol.ToolError }

func (e toolError) Kind() string { return e.Type }

// tools are the suite's tools, declared in the loop's form; each call goes to the suite.
func tools(ctx context.Context, spec object) []tinyloop.Tool {
	out := []tinyloop.Tool{}
	for _, t := range list(spec["tools"]) {
		tool := obj(t)
		properties, required := object{}, []string{}
		for _, p := range list(tool["parameters"]) {
			param := obj(p)
			properties[str(param["name"])] = object{"type": jsonType[str(param["type"])], "description": param["description"]}
			required = append(required, str(param["name"]))
		}
		name := str(tool["name"])
		out = append(out, tinyloop.Tool{Name: name, Description: str(tool["description"]),
			Schema: object{"type": "object", "properties": properties, "required": required, "additionalProperties": false},
			Function: func(args map[string]any) (any, error) {
				result, err := protocol.CallTool(ctx, name, args)
				if te, ok := err.(*protocol.ToolError); ok {
					return nil, toolError{te}
				}
				return result, err
			}})
	}
	return out
}

func jsonText(value any) string {
	if s, ok := value.(string); ok {
		return s
	}
	text, _ := json.Marshal(value)
	return string(text)
}

// userMessage is the inputs as the user message: the one input's text, or `name: value` lines
// (render.user_message), in the order the suite sent them.
func userMessage(call object, raw json.RawMessage) string {
	inputs := obj(call["inputs"])
	if len(inputs) == 1 {
		for _, v := range inputs {
			return jsonText(v)
		}
	}
	lines := []string{}
	for _, name := range keysInOrder(raw) {
		lines = append(lines, name+": "+jsonText(inputs[name]))
	}
	return strings.Join(lines, "\n")
}

// keysInOrder is the keys of a JSON object's text in their order (a Go map forgets it).
func keysInOrder(raw json.RawMessage) []string {
	decoder := json.NewDecoder(strings.NewReader(string(raw)))
	keys := []string{}
	if _, err := decoder.Token(); err != nil {
		return keys
	}
	for decoder.More() {
		key, err := decoder.Token()
		if err != nil {
			return keys
		}
		keys = append(keys, fmt.Sprint(key))
		var skip json.RawMessage
		if decoder.Decode(&skip) != nil {
			return keys
		}
	}
	return keys
}

// seam is the loop's model: each request logged as the model saw it, answered from the script.
func seam(ctx context.Context) func([]map[string]any, []map[string]any) (tinyloop.Reply, error) {
	counter := 0
	return func(messages []map[string]any, declared []map[string]any) (tinyloop.Reply, error) {
		shown := []any{}
		for _, m := range messages {
			parts := []string{str(m["content"])}
			calls, _ := m["tool_calls"].([]any)
			for _, c := range calls {
				call := obj(c)
				parts = append(parts, fmt.Sprintf("call %s(%s)", str(call["name"]), str(call["arguments"])))
			}
			shown = append(shown, object{"role": m["role"], "content": strings.TrimSpace(strings.Join(parts, "\n"))})
		}
		decl := []any{}
		for _, d := range declared {
			decl = append(decl, d)
		}
		turn, err := protocol.AskModel(ctx, object{"kind": "step", "adapter": "native", "messages": shown, "tools": decl})
		if err != nil {
			return tinyloop.Reply{}, err
		}
		counter++
		switch str(turn["kind"]) {
		case "step":
			calls := []tinyloop.ToolCall{}
			for i, c := range append([]any{turn}, list(turn["parallel"])...) {
				call := obj(c)
				args, ok := call["raw_tool_args"].(string)
				if !ok {
					args = jsonText(call["tool_args"])
				}
				calls = append(calls, tinyloop.ToolCall{ID: fmt.Sprintf("call_%d_%d", counter, i), Name: str(call["tool_name"]), Arguments: args})
			}
			return tinyloop.Reply{Content: str(turn["thought"]), ToolCalls: calls}, nil
		case "final", "extract":
			return tinyloop.Reply{Content: protocol.ReplyText(obj(turn["outputs"]))}, nil
		}
		return tinyloop.Reply{}, fmt.Errorf("the model's transport failed: %v", turn["fault"])
	}
}

func stepOf(step *tinyloop.Step) object {
	var thought any
	if step.Thought != "" {
		thought = step.Thought
	}
	return object{"thought": thought, "tool_name": step.ToolName, "tool_args": protocol.Wire(step.ToolArgs),
		"observation": step.Observation, "is_error": step.Failed, "call_id": step.CallID}
}

type agent struct {
	spec object
	last *tinyloop.Result
}

// harness has one method per command.
type harness struct {
	lock   sync.Mutex
	agents map[string]*agent
}

func (h *harness) Hello(object) (object, error) {
	auxiliary := object{}
	if observer {
		auxiliary["observation"] = "the loop may rewrite each tool result with a model call"
	}
	return object{"name": "go-loop", "version": "0", "capabilities": claimed, "not_claimed": notClaimed,
		"known_failures": object{}, "auxiliary_calls": auxiliary, "approval_form": "callback"}, nil
}

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
	needs := []string{}
	for _, t := range list(spec["tools"]) {
		if interruptible, _ := obj(t)["interruptible"].(bool); interruptible {
			needs = append(needs, str(obj(t)["name"]))
		}
	}
	maxSteps, _ := spec["max_steps"].(json.Number).Int64()
	// Each run its own loop: its callbacks close over the run's context, on whatever goroutine they run.
	loop := &tinyloop.Agent{Tools: tools(ctx, spec), Model: seam(ctx), NeedsApproval: needs, MaxSteps: int(maxSteps),
		Instructions: str(obj(spec["signature"])["instructions"]),
		Approve:      func(name string, args any, callID string) any { return approve(ctx, name, args, callID) }}
	if observer {
		loop.Observer = func(tool, observation string) string { return observe(ctx, tool, observation) }
	}
	perCall := 0
	if n, ok := call["max_steps"].(json.Number); ok {
		limit, _ := n.Int64()
		perCall = int(limit)
	}
	raw, _ := json.Marshal(call["inputs"])
	user := userMessage(call, raw)
	var result *tinyloop.Result
	var err error
	if str(call["mode"]) == "async" {
		done := <-loop.RunAsync(user, perCall)
		result, err = done.Result, done.Err
	} else {
		result, err = loop.Run(user, perCall)
	}
	if err != nil {
		return object{"outcome": object{"error": protocol.ErrorInfo(err, "", nil)}}, nil
	}
	h.lock.Lock()
	entry.last = result
	h.lock.Unlock()
	var outputs any
	if result.Output != nil {
		outputs = protocol.ReplyOutputs(obj(spec["signature"]), *result.Output)
	}
	trajectory := []any{}
	for _, s := range result.Steps {
		trajectory = append(trajectory, stepOf(s))
	}
	var message any
	if result.Message != nil {
		message = *result.Message
	}
	return object{"outcome": object{"outputs": outputs, "trajectory": trajectory, "stop_reason": result.StopReason,
		"iterations": result.StepsUsed, "fallback": message, "tool_errors": result.ToolErrors}}, nil
}

// approve is the loop's approval callback: the person's answer, in the loop's terms.
func approve(ctx context.Context, name string, args any, callID string) any {
	response, err := protocol.AskApproval(ctx, name, args, callID)
	if err != nil {
		return false
	}
	answer := protocol.ReadApproval(response)
	switch answer.Decision {
	case "approve":
		return true
	case "reject":
		return false
	case "edit":
		return tinyloop.Edit{Name: answer.Name, Args: answer.Args}
	}
	return answer.Text
}

// observe is the observation processor's model call: `continue` keeps the observation as it is.
func observe(ctx context.Context, tool, observation string) string {
	call := object{"kind": "auxiliary", "adapter": "other", "tools": nil, "messages": []any{
		object{"role": "user", "content": "Rewrite the result of " + tool + ", or say continue: " + observation}}}
	answer, err := protocol.AskAuxiliary(ctx, "observation", call)
	if err != nil || answer == "continue" {
		return observation
	}
	return answer
}

func (h *harness) MutateLastResult(cmd object) (object, error) {
	h.lock.Lock()
	defer h.lock.Unlock()
	entry := h.agents[str(cmd["agent"])]
	if entry == nil || entry.last == nil {
		return object{"changed": []any{}}, nil
	}
	marker, held := str(cmd["marker"]), len(entry.last.Steps)
	for _, s := range entry.last.Steps {
		s.Thought, s.Observation = marker, marker
	}
	entry.last.Steps = append(entry.last.Steps, &tinyloop.Step{Thought: marker, ToolName: marker, ToolArgs: object{}, Observation: marker})
	return object{"changed": []any{fmt.Sprintf("result.steps (%d steps)", held)}}, nil
}

func main() {
	protocol.Serve(&harness{agents: map[string]*agent{}})
}
