// The react-conformance harness for Genkit for Go (github.com/firebase/genkit/go), its tool loop:
// genkit.Generate with tools made by genkit.DefineTool.
//
//	pytest --impl genkit-go      (or --impl cmd:"harnesses/genkit-go/.bin/genkit-go-harness")
//
// Seam: the model is Genkit's own OpenAI plugin (plugins/compat_oai/openai), whose openai-go client
// takes the documented option.WithHTTPClient: an http.Client whose Transport is protocol.Endpoint
// (harnesses/lib/go/openai.go), so every chat-completions request the plugin builds goes to the
// suite as an LMCall and is answered with the chat.completion JSON, the SSE stream, or the HTTP
// status an endpoint would give. In the `http` profile the plugin points at CallRequest.base_url
// with option.WithBaseURL and the client's default HTTP client. (genkit.DefineModel over the
// protocol would be a model no user runs, and would skip the plugin's request building and reply
// parsing, where Genkit meets the wire.) Beneath the plugin run Genkit's generate loop
// (ai/generate.go, GenerateWithRequest), its tool input validation (core/action.go), and
// openai-go's default retries (2, with backoff: internal/requestconfig/requestconfig.go).
//
// There is no agent object: an "agent" is what a user passes to every Generate call, the model,
// the system prompt and the tools, registered on a Genkit instance (genkit.Init with the plugin).
// The step cap is ai.WithMaxTurns (default 5), given to each call: a per-call cap. On the cap
// Generate returns a nil response and the GenkitError ABORTED 'exceeded maximum tool call
// iterations (N)' (GenerateWithRequest).
//
// Tools: genkit.DefineTool with ai.WithInputSchema, the documented form for a tool whose input
// schema is not a Go type (genkit.DefineTool's doc: "Use WithInputSchema to provide a custom JSON
// schema instead of inferring from the type parameter"); its input type is then `any`. A typed
// input struct needs the struct at compile time, and the suite's tools are described at run time.
// Both forms validate the input against the schema before the function runs (UnmarshalAndNormalize
// in RunJSON, core/action.go).
//
// Approval: Genkit's documented tool interrupt. A tool that needs approval returns
// ToolContext.Interrupt from its own body unless it was resumed; Generate returns with
// FinishReason "interrupted" and the call among ModelResponse.Interrupts(); a new Generate with the
// paused history (ModelResponse.History()) and ai.WithToolRestarts(tool.RestartWith(part)) runs it
// (an edit is ai.WithNewInput), or ai.WithToolResponses(tool.RespondWith(part, output)) answers it
// without running it (a refusal, its output the person's message). The pause is kept as its
// messages' JSON, as an application persists it.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"

	"github.com/firebase/genkit/go/ai"
	"github.com/firebase/genkit/go/genkit"
	oai "github.com/firebase/genkit/go/plugins/compat_oai/openai"
	"github.com/openai/openai-go/option"

	"react-conformance/protocol"
)

type object = protocol.Object

const (
	library  = "github.com/firebase/genkit/go"
	openaiGo = "github.com/openai/openai-go"
	model    = "openai/gpt-4o-mini"
)

var claimed = []any{"max-steps-error", "per-call-cap", "tool-approval", "approval-edit", "durable-approvals",
	"streaming", "parallel-tool-calls", "lm-retry", "http"}

var notClaimed = object{
	"signature":           "a native tool-calling loop: a system prompt, messages and tools, no signature",
	"adapters":            "no pluggable format-and-parse layer: the model plugin (here compat_oai's openai) formats and parses every call",
	"max-steps-extract":   "on WithMaxTurns Generate returns the error 'exceeded maximum tool call iterations' (ai/generate.go, GenerateWithRequest); it makes no tool-less final call",
	"max-steps-return":    "on WithMaxTurns Generate returns the error 'exceeded maximum tool call iterations' and a nil response (ai/generate.go, GenerateWithRequest); no option returns instead",
	"cap-summary":         "the cap is the error 'exceeded maximum tool call iterations' (ai/generate.go, GenerateWithRequest): no run returns on a cap to summarise",
	"repeated-error-stop": "the generate loop has no repeated-failure stop: a tool's error ends the run at once (handleToolRequests, ai/generate.go)",
	"ask-user":            "Genkit has no built-in tool through which the model asks the person a question (an interrupting tool is one the application writes)",
	"async":               "no async form: Generate blocks, as Go calls do",
}

var parity = object{
	"stop_reason":    "library: ModelResponse.FinishReason, 'stop' the answer and 'interrupted' a pause; the GenkitError ABORTED 'exceeded maximum tool call iterations (N)' (ai/generate.go, GenerateWithRequest) the cap stop",
	"iterations":     "derived: counted from the model messages the call added to ModelResponse.History(), one per model call",
	"max_iterations": "derived: the WithMaxTurns the harness gave Generate, which the error names only in its text 'exceeded maximum tool call iterations (N)'",
	"partial_run":    "none: the cap's GenkitError carries only its message, Generate returns a nil response beside it (ai/generate.go, GenerateWithRequest), and Genkit keeps no record of the run for the caller",
	"concurrency":    "shared",
}

// Each failure is the library's, checked by driving it directly (library_test.go, go test).
const (
	offByOne = "WithMaxTurns(N) counts the turns whose tool calls ran, not model calls: GenerateWithRequest (ai/generate.go) returns 'exceeded maximum tool call iterations (N)' only when the reply of turn N+1 asks for tools, so a cap of N makes N+1 model calls"
	zeroCap  = "a cap of zero is taken as unset: WithMaxTurns ignores a value that is not positive (ai/option.go) and GenerateWithRequest (ai/generate.go) replaces a MaxTurns of 0 by the default 5, so the run makes up to 6 model calls"
	noRecord = "the cap's GenkitError carries only its message, and Generate returns a nil response beside it (GenerateWithRequest, ai/generate.go): the caller is handed no history to own"
	anyOut   = "a tool whose output type is any cannot be answered with a string: it has no output schema of its own, so ToolDef.Definition (ai/tools.go) gives its MultipartToolResponse wrapper's, an object, and handleResumedToolRequest (ai/generate.go) refuses the RespondWith output ('output validation failed ... Expected: object, given: string')"
	replay   = "a pause is its messages (ModelResponse.History()), which keep no record that its interrupt was answered: a Generate that resumes the same messages again with WithToolRestarts runs the tool again (handleResumedToolRequest, ai/generate.go)"
	anyAgent = "a pause is only messages and names no agent: a Generate with another agent's tools resumes it, and WithToolRestarts runs that agent's tool of the call's name (handleResumedToolRequest, ai/generate.go, looks the tool up by name)"
	noTimout = "openai-go, the OpenAI plugin's client, has no request timeout by default (RequestTimeout 0, internal/requestconfig/requestconfig.go) and the plugin sets none (plugins/compat_oai/compat_oai.go): a request to an endpoint that never answers waits for ever"
	unknown  = "a call of a tool the request lacks ends the run: handleToolRequests (ai/generate.go) returns GenkitError NOT_FOUND 'tool <name> not found' out of Generate, and the model is never told"
	nulls    = "Genkit drops every key whose value is null, at any depth, before the tool runs: normalizeObjectInput (internal/base/json_type_converter.go, from UnmarshalAndNormalize in RunJSON, core/action.go) skips null values, so {\"data\": {\"\": null}} reaches the tool as {\"data\": {}}"
	notObj   = "args that are not a JSON object end the run: the OpenAI plugin's convertChatCompletionToModelResponse (plugins/compat_oai/generate.go) unmarshals them into a map and returns 'could not parse tool args' out of Generate (null reads as no map and then fails the tool's input schema, an error handleToolRequests returns out of Generate, ai/generate.go); the model is never told"
	badJSON  = "tool args that are not JSON end the run: the OpenAI plugin's convertChatCompletionToModelResponse (plugins/compat_oai/generate.go) returns 'could not parse tool args' out of Generate; the tool does not run and the model is never told"
	invalid  = "args that break the tool's input schema end the run: the tool action checks its input (UnmarshalAndNormalize in RunJSON, core/action.go) and handleToolRequests (ai/generate.go) returns the INVALID_ARGUMENT error out of Generate, so the tool does not run and the model is never told"
	tooDeep  = "args nested 100,000 levels deep end the run: encoding/json refuses nesting past 10,000 levels in the OpenAI plugin's convertChatCompletionToModelResponse (plugins/compat_oai/generate.go), which returns 'could not parse tool args' out of Generate"
	throws   = "a tool's error ends the run: handleToolRequests (ai/generate.go) returns it out of Generate as GenkitError INTERNAL 'tool <name> failed: ...', so the model is never told"
)

var knownFailures = object{
	"The step cap stops a loop that never chooses finish":                                                                              offByOne,
	"A step cap of one allows exactly one step":                                                                                        offByOne,
	"A step cap of zero is refused at configuration, or raises before any model call":                                                  zeroCap,
	"A step cap of zero given to one call is refused, or raises before any model call":                                                 zeroCap,
	"The history on MaxIterationsError is a snapshot the caller owns":                                                                  noRecord,
	"Rejecting never runs the pending call and the agent chooses again":                                                                anyOut,
	"Free text is fed back to the agent as the user's answer":                                                                          anyOut,
	"Resuming the same interrupt twice never runs the tool twice":                                                                      replay,
	"Answering a pause again after its resumed run paused again never runs a call twice":                                               replay,
	"Replaying the answer to a serialised pause whose call already ran never runs it again":                                            replay,
	"A pause answered through another agent is refused":                                                                                anyAgent,
	"A hung endpoint times out and the call is retried":                                                                                noTimout,
	"An unknown tool name is never run, and the loop goes on":                                                                          unknown,
	"An unknown tool name never crashes the run, also when it is the last step":                                                        unknown,
	"The agent is told that the tool it chose does not exist":                                                                          unknown,
	"Any JSON object the model writes reaches the tool intact":                                                                         nulls,
	"Tool args that are JSON but not an object never reach the tool":                                                                   notObj,
	"Malformed JSON tool args never crash the run":                                                                                     badJSON,
	"Python literals in tool args are malformed JSON, never guessed at":                                                                badJSON,
	"Malformed JSON tool args never reach a tool that takes no arguments":                                                              badJSON,
	"Tool args that break the tool's schema never reach it with a wrong or missing value":                                              invalid,
	"An argument the schema does not declare is refused, naming it, not dropped":                                                       invalid,
	"A raising tool becomes an error observation bound to its call, and the loop goes on":                                              throws,
	"A tool that raises on its second call still has each error bound to its own call":                                                 throws,
	"test_tool_args_of_any_size_or_nesting_reach_the_tool_intact_or_are_refused_saying_why[store-an object nested 100000 levels deep]": tooDeep,
}

func list(value any) []any { l, _ := value.([]any); return l }
func obj(value any) object { o, _ := value.(object); return o }
func str(value any) string { s, _ := value.(string); return s }

// -- the agent: a Genkit instance with the plugin and the tools -------------------------------------

type running struct {
	g        *genkit.Genkit
	tools    map[string]*ai.ToolDef[any, any]
	refs     []ai.ToolRef
	endpoint *protocol.Endpoint
}

// build is the agent's Genkit instance and tools, its model answered from the script or at baseURL.
func build(spec object, baseURL string) (built *running, err error) {
	defer func() {
		// genkit.DefineTool panics on a tool it refuses (a second tool of one name, a bad schema).
		if p := recover(); p != nil {
			built, err = nil, fmt.Errorf("%v", p)
		}
	}()
	endpoint := &protocol.Endpoint{}
	opts := []option.RequestOption{option.WithHTTPClient(&http.Client{Transport: endpoint})}
	if baseURL != "" {
		opts = []option.RequestOption{option.WithBaseURL(baseURL)}
	}
	g := genkit.Init(context.Background(), genkit.WithPlugins(&oai.OpenAI{APIKey: "placeholder-key", Opts: opts}))
	built = &running{g: g, tools: map[string]*ai.ToolDef[any, any]{}, endpoint: endpoint}
	for _, t := range list(spec["tools"]) {
		tool := obj(t)
		name, interruptible := str(tool["name"]), tool["interruptible"] == true
		defined := genkit.DefineTool(g, name, str(tool["description"]),
			func(tc *ai.ToolContext, input any) (any, error) {
				if interruptible && !tc.IsResumed() {
					return nil, tc.Interrupt(&ai.InterruptOptions{Metadata: map[string]any{"approval": "the call of " + name + " needs approval"}})
				}
				return protocol.CallTool(tc, name, input)
			}, ai.WithInputSchema(protocol.JSONSchema(tool)))
		built.tools[name] = defined
		built.refs = append(built.refs, defined)
	}
	return built, nil
}

func options(built *running, cap int) []ai.GenerateOption {
	return []ai.GenerateOption{ai.WithModelName(model), ai.WithTools(built.refs...), ai.WithMaxTurns(cap)}
}

// -- reading the run ---------------------------------------------------------------------------------

// resultText is a tool's output as the observation text: a string as it is, anything else as JSON.
func resultText(output any) string { return protocol.Text(output) }

// steps are the tool calls among messages, in order, each with its response and the text beside it.
func steps(messages []*ai.Message) []any {
	results := map[string]*ai.ToolResponse{}
	for _, m := range messages {
		if m.Role != ai.RoleTool {
			continue
		}
		for _, p := range m.Content {
			if p.IsToolResponse() {
				results[key(p.ToolResponse.Ref, p.ToolResponse.Name)] = p.ToolResponse
			}
		}
	}
	found := []any{}
	for _, m := range messages {
		if m.Role != ai.RoleModel {
			continue
		}
		var thought any
		if text := m.Text(); text != "" {
			thought = text
		}
		for _, p := range m.Content {
			if !p.IsToolRequest() {
				continue
			}
			call := p.ToolRequest
			var observation, callID any
			if result, ok := results[key(call.Ref, call.Name)]; ok {
				observation = resultText(result.Output)
			}
			if call.Ref != "" {
				callID = call.Ref
			}
			found = append(found, object{"thought": thought, "tool_name": call.Name, "tool_args": protocol.Wire(plain(call.Input)),
				"observation": observation, "is_error": nil, "call_id": callID})
		}
	}
	return found
}

func key(ref, name string) string {
	if ref != "" {
		return ref
	}
	return name
}

// plain is a value as the protocol carries it (its JSON, read back).
func plain(value any) any {
	text, err := json.Marshal(value)
	if err != nil {
		return fmt.Sprint(value)
	}
	var out any
	decoder := json.NewDecoder(strings.NewReader(string(text)))
	decoder.UseNumber()
	if decoder.Decode(&out) != nil {
		return string(text)
	}
	return out
}

func modelReplies(messages []*ai.Message) int {
	n := 0
	for _, m := range messages {
		if m.Role == ai.RoleModel {
			n++
		}
	}
	return n
}

// -- the harness -------------------------------------------------------------------------------------

type agent struct {
	spec object
	last []*ai.Message
}

// pause is a paused run as an application keeps it: its messages as JSON, and what the call was.
type pause struct {
	messages []byte
	ref      string
	name     string
	cap      int
	baseURL  string
	start    int
}

type harness struct {
	lock   sync.Mutex
	agents map[string]*agent
	// Every pause a call made, by its id, whichever agent made it: a person's answer may reach
	// another agent than the paused one (HITL-6), and refusing it is the library's part.
	pauses map[string]*pause
}

func (h *harness) Hello(object) (object, error) {
	return object{"name": "genkit-go", "version": protocol.ModuleVersion(library), "capabilities": claimed,
		"not_claimed": notClaimed, "known_failures": knownFailures, "parity": parity,
		"dependencies": object{library: protocol.ModuleVersion(library), openaiGo: protocol.ModuleVersion(openaiGo)}}, nil
}

func (h *harness) Configure(object) (object, error) { return object{}, nil }

func (h *harness) Build(cmd object) (object, error) {
	spec := obj(cmd["spec"])
	if _, err := build(spec, ""); err != nil { // a spec Genkit refuses fails here, at build
		return object{"error": protocol.ErrorInfo(err, "", nil)}, nil
	}
	h.lock.Lock()
	defer h.lock.Unlock()
	h.agents[str(cmd["agent"])] = &agent{spec: spec}
	return object{"error": nil}, nil
}

func (h *harness) agent(name string) (*agent, error) {
	h.lock.Lock()
	defer h.lock.Unlock()
	entry, ok := h.agents[name]
	if !ok {
		return nil, fmt.Errorf("no agent %v was built", name)
	}
	return entry, nil
}

func (h *harness) Run(ctx context.Context, cmd object) (object, error) {
	entry, err := h.agent(str(cmd["agent"]))
	if err != nil {
		return nil, err
	}
	call := obj(cmd["call"])
	capValue := entry.spec["max_steps"]
	if perCall, ok := call["max_steps"]; ok && perCall != nil {
		capValue = perCall
	}
	cap := integer(capValue)
	baseURL := str(call["base_url"])
	built, err := build(entry.spec, baseURL)
	if err != nil {
		return object{"outcome": object{"error": protocol.ErrorInfo(err, "", nil)}}, nil
	}
	opts := options(built, cap)
	start := 1
	if instructions := str(obj(entry.spec["signature"])["instructions"]); instructions != "" {
		opts = append(opts, ai.WithSystem("%s", instructions))
		start = 2
	}
	opts = append(opts, ai.WithPrompt("%s", protocol.UserMessage(obj(call["inputs"]))))
	run := &pause{cap: cap, baseURL: baseURL, start: start}
	return object{"outcome": h.generate(ctx, entry, built, opts, str(call["mode"]) == "stream", run)}, nil
}

func (h *harness) Resume(ctx context.Context, cmd object) (object, error) {
	entry, err := h.agent(str(cmd["agent"]))
	if err != nil {
		return nil, err
	}
	request := obj(cmd["request"])
	id := str(request["interrupt_id"])
	h.lock.Lock()
	paused := h.pauses[id]
	h.lock.Unlock()
	if paused == nil {
		return object{"outcome": object{"error": object{"type": "UnknownInterrupt", "message": "no pause " + id + " was made through this harness",
			"kind": "other", "fields": object{}}}}, nil
	}
	built, err := build(entry.spec, paused.baseURL)
	if err != nil {
		return object{"outcome": object{"error": protocol.ErrorInfo(err, "", nil)}}, nil
	}
	var messages []*ai.Message
	if err := json.Unmarshal(paused.messages, &messages); err != nil {
		return nil, fmt.Errorf("the pause's messages do not read back: %w", err)
	}
	answer, err := answer(built, messages, paused, str(request["response"]))
	if err != nil {
		return object{"outcome": object{"error": protocol.ErrorInfo(err, "", nil)}}, nil
	}
	opts := append(options(built, paused.cap), ai.WithMessages(messages...), answer)
	return object{"outcome": h.generate(ctx, entry, built, opts, str(request["mode"]) == "stream", paused)}, nil
}

// answer is the person's answer as Genkit's resume option: approve restarts the call, an edit
// restarts it with new input (ai.WithNewInput), anything else answers it with the person's message
// as its output, without running it.
func answer(built *running, messages []*ai.Message, paused *pause, response string) (ai.GenerateOption, error) {
	var part *ai.Part
	if len(messages) > 0 {
		for _, p := range messages[len(messages)-1].Content {
			if p.IsInterrupt() && p.ToolRequest.Ref == paused.ref && p.ToolRequest.Name == paused.name {
				part = p
			}
		}
	}
	if part == nil {
		return nil, fmt.Errorf("the pause's last message holds no interrupted call of %s", paused.name)
	}
	tool := built.tools[paused.name]
	if tool == nil {
		return nil, fmt.Errorf("the agent has no tool %s", paused.name)
	}
	person := protocol.ReadApproval(response)
	switch person.Decision {
	case "approve":
		restart, err := tool.RestartWith(part)
		return ai.WithToolRestarts(restart), err
	case "edit":
		// RestartWith re-runs the pending call's own tool: an edit can replace its input, not the
		// tool it names.
		if person.Name != "" && person.Name != paused.name {
			return nil, fmt.Errorf("the edit names %s, but Genkit's RestartWith runs only the pending call's own tool, %s", person.Name, paused.name)
		}
		args := person.Args
		if args == nil {
			args = object{}
		}
		restart, err := tool.RestartWith(part, ai.WithNewInput[any](args))
		return ai.WithToolRestarts(restart), err
	case "reject":
		respond, err := tool.RespondWith(part, "The person refused this call.")
		return ai.WithToolResponses(respond), err
	}
	respond, err := tool.RespondWith(part, person.Text)
	return ai.WithToolResponses(respond), err
}

// generate runs one Generate (streamed when asked) and reads its outcome.
func (h *harness) generate(ctx context.Context, entry *agent, built *running, opts []ai.GenerateOption, stream bool, run *pause) object {
	var seen *streamed
	if stream {
		seen = &streamed{endpoint: built.endpoint, calls: map[string]*streamedCall{}, events: []any{}}
		opts = append(opts, ai.WithStreaming(seen.chunk))
	}
	response, err := genkit.Generate(ctx, built.g, opts...)
	out := h.outcome(entry, response, err, run)
	if !stream {
		return out
	}
	events := seen.events
	if failure := obj(out["error"]); failure == nil || failure["kind"] == "human-in-the-loop" {
		events = append(events, object{"kind": "done", "model_calls": built.endpoint.Replies(), "stop_reason": out["stop_reason"],
			"outputs": out["outputs"]})
	}
	out["events"] = events
	return out
}

// streamed is what a streamed run handed the caller, read as a caller reads it: the model's chunks
// (its text and each tool request, its arguments in pieces) and, after a turn's tools ran, one
// tool chunk with their responses (handleToolRequests, ai/generate.go), each a completed step.
type streamed struct {
	endpoint *protocol.Endpoint
	thought  strings.Builder
	calls    map[string]*streamedCall
	last     *streamedCall
	events   []any
}

type streamedCall struct {
	name, thought string
	args          strings.Builder
}

func (s *streamed) chunk(_ context.Context, chunk *ai.ModelResponseChunk) error {
	for _, p := range chunk.Content {
		switch {
		case chunk.Role == ai.RoleTool && p.IsToolResponse():
			response := p.ToolResponse
			var thought, callID, args any
			if call := s.calls[key(response.Ref, response.Name)]; call != nil {
				if call.thought != "" {
					thought = call.thought
				}
				args = protocol.ToolArgs(call.args.String())
			}
			if response.Ref != "" {
				callID = response.Ref
			}
			s.events = append(s.events, object{"kind": "step", "model_calls": s.endpoint.Replies(), "step": object{
				"thought": thought, "tool_name": response.Name, "tool_args": args, "observation": resultText(response.Output),
				"is_error": nil, "call_id": callID}})
			s.thought.Reset()
		case p.IsToolRequest():
			request := p.ToolRequest
			if request.Name != "" || request.Ref != "" { // a new call; its later pieces name neither
				s.last = &streamedCall{name: request.Name, thought: s.thought.String()}
				s.calls[key(request.Ref, request.Name)] = s.last
			}
			if piece, ok := request.Input.(string); ok && s.last != nil {
				s.last.args.WriteString(piece)
			}
		case p.IsText():
			s.thought.WriteString(p.Text)
		}
	}
	return nil
}

func (h *harness) outcome(entry *agent, response *ai.ModelResponse, err error, run *pause) object {
	if err != nil {
		h.lock.Lock()
		entry.last = nil
		h.lock.Unlock()
		if strings.Contains(err.Error(), "exceeded maximum tool call iterations") {
			// The error carries no steps and Generate returns no response beside it: only the cap
			// the harness gave is known.
			return object{"stop_reason": "max_steps", "error": protocol.ErrorInfo(err, "max-iterations", object{"max_iterations": run.cap})}
		}
		return object{"error": protocol.ErrorInfo(err, "", nil)}
	}
	// A streamed reply of the OpenAI plugin carries no request (generateStream,
	// plugins/compat_oai/generate.go, leaves ModelResponse.Request empty), so History() then holds
	// the final reply alone: a streamed run's steps are the stream's step events.
	messages := response.History()
	mine := messages[min(run.start, len(messages)):]
	h.lock.Lock()
	entry.last = mine
	h.lock.Unlock()
	trajectory, iterations := steps(mine), modelReplies(mine)
	if response.FinishReason == "interrupted" {
		interrupts := response.Interrupts()
		if len(interrupts) == 0 {
			return object{"trajectory": trajectory, "iterations": iterations, "error": protocol.ErrorInfo(
				errors.New("Generate returned FinishReason interrupted without an interrupted call"), "", nil)}
		}
		call := interrupts[0].ToolRequest
		saved, err := json.Marshal(messages)
		if err != nil {
			return object{"error": protocol.ErrorInfo(err, "", nil)}
		}
		h.lock.Lock()
		id := fmt.Sprintf("%s#%d", key(call.Ref, call.Name), len(h.pauses)+1)
		h.pauses[id] = &pause{messages: saved, ref: call.Ref, name: call.Name, cap: run.cap, baseURL: run.baseURL, start: run.start}
		h.lock.Unlock()
		var callID any
		if call.Ref != "" {
			callID = call.Ref
		}
		return object{"trajectory": trajectory, "iterations": iterations, "error": object{
			"type": "Interrupt", "message": "the call of " + call.Name + " needs approval", "kind": "human-in-the-loop",
			"fields": object{"question": nil, "interrupt_id": id,
				"tool_call": object{"name": call.Name, "args": protocol.Wire(plain(call.Input)), "call_id": callID},
				"context":   object{"trajectory": trajectory, "iteration": iterations, "input": nil}}}}
	}
	stop := string(response.FinishReason)
	if stop == "stop" {
		stop = "finish"
	}
	return object{"outputs": protocol.ReplyOutputs(obj(entry.spec["signature"]), response.Text()), "trajectory": trajectory,
		"iterations": iterations, "stop_reason": stop}
}

func (h *harness) MutateLastResult(cmd object) (object, error) {
	entry, err := h.agent(str(cmd["agent"]))
	if err != nil {
		return nil, err
	}
	h.lock.Lock()
	defer h.lock.Unlock()
	if entry.last == nil {
		return object{"changed": []any{}}, nil
	}
	marker := str(cmd["marker"])
	for _, message := range entry.last {
		message.Content = append(message.Content, ai.NewTextPart(marker))
	}
	return object{"changed": []any{fmt.Sprintf("ModelResponse.History() (%d messages of the call)", len(entry.last))}}, nil
}

func integer(value any) int {
	n, _ := value.(json.Number).Int64()
	return int(n)
}

func main() {
	protocol.Serve(&harness{agents: map[string]*agent{}, pauses: map[string]*pause{}})
}
