// The react-conformance harness for Google's Agent Development Kit for Go (google.golang.org/adk):
// an llmagent run by its runner over the in-memory session service, its defaults.
//
//	pytest --impl adk-go      (or --impl cmd:"harnesses/adk-go/.bin/adk-go-harness")
//
// Seam: ADK's model interface, model.LLM (model/llm.go: Name and GenerateContent, the interface its
// Gemini and Apigee models implement), answering each LLMRequest from the script as Gemini's API
// answers, as the Python binding's BaseLlm (conformance/bindings/google_adk.py) and the Java
// harness's BaseLlm (harnesses/google-adk-java) do: a content with a text part (the thought) and a
// function-call part per call, its args an object (genai.FunctionCall.Args is a map); args that are
// not a JSON object come back as Gemini answers a call it cannot parse, a response with no content
// and the finish reason MALFORMED_FUNCTION_CALL, which ADK's Gemini model turns into the
// response's ErrorCode (converters.Genai2LLMResponse, internal/llminternal/converters); args nested
// deeper than encoding/json reads fail as the genai client's decoding of the response fails
// (library_test.go drives ADK's own Gemini model over an in-memory transport for both). A stream
// (agent.StreamingModeSSE) is the reply's text in partial responses, then the whole response, as
// ADK's Gemini model aggregates it.
//
// The agent is llmagent.New with the spec's instruction and tools, run by runner.New over one
// session.InMemoryService for the harness (the application's store: each agent an app of its own,
// named as the spec names the agent, each call a new session). Runner.Run is an iterator of the
// run's events; a streamed call sets RunConfig.StreamingMode to SSE. ADK Go has no step cap
// (agent.RunConfig holds StreamingMode and SaveInputBlobsAsArtifacts only; Flow.Run,
// internal/llminternal/base_flow.go, loops until an event is a final response), so the spec's cap
// is not passed anywhere.
//
// Tools: functiontool.New, ADK's tool for a Go function. Its documented form takes a typed args
// struct and infers the input schema from it (jsonschema.For, tool/functiontool/function.go); a
// type parameter is fixed at compile time, and the suite describes its tools at run time, so the
// harness builds the struct a user would write for each tool (reflect.StructOf: a field per
// parameter, its json name and its jsonschema description) and gives functiontool.New the schema
// ADK infers for that struct (jsonschema.ForType, what For does for a compile-time type) with
// map[string]any args, New's other documented argument kind. Either way functiontool's Run
// validates the args against that schema before the function runs (typeutil.ConvertToWithJSONSchema);
// library_test.go checks that a compile-time struct and the built one declare the same tool and
// treat the same args alike. A tool that needs approval is functiontool.Config.RequireConfirmation.
//
// Approval: ADK's tool confirmation. A call of a tool that requires confirmation is answered with an
// error response and an `adk_request_confirmation` function call holding the original call, marked
// long-running (generateRequestConfirmationEvent, internal/llminternal/functions.go), and the run
// ends there. The person answers as ADK documents, with a FunctionResponse to that call holding a
// toolconfirmation.ToolConfirmation, sent by a new Runner.Run of the paused session; the request
// processor then runs (or refuses) the original call (RequestConfirmationRequestProcessor,
// internal/llminternal/request_confirmation_processor.go). A pause is its session, kept in the
// harness's session store by its id. With --database (adk-go+database, variant.go) the agents whose
// tools need confirmation keep their sessions in ADK's database store instead.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"iter"
	"os"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/google/jsonschema-go/jsonschema"
	"google.golang.org/adk/agent"
	"google.golang.org/adk/agent/llmagent"
	"google.golang.org/adk/model"
	"google.golang.org/adk/runner"
	"google.golang.org/adk/session"
	"google.golang.org/adk/tool"
	"google.golang.org/adk/tool/functiontool"
	"google.golang.org/adk/tool/toolconfirmation"
	"google.golang.org/genai"

	"react-conformance/protocol"
)

type object = protocol.Object

const (
	library = "google.golang.org/adk"
	genaiGo = "google.golang.org/genai"
	user    = "user"
)

var claimed = []any{"tool-approval", "streaming", "parallel-tool-calls"}

// noCap is why every cap behaviour is unclaimed: ADK Go has no step cap.
const noCap = "ADK Go has no step cap: agent.RunConfig holds only StreamingMode and SaveInputBlobsAsArtifacts (agent/run_config.go) and Flow.Run (internal/llminternal/base_flow.go) loops until an event is a final response (LiveRunConfig.MaxLLMCalls, of live runs only, is read nowhere)"

var notClaimed = object{
	"signature":           "a native tool-calling loop: llmagent takes an instruction and tools, no signature",
	"adapters":            "no pluggable prompt format: each model.LLM writes its provider's request",
	"max-steps-error":     noCap,
	"max-steps-extract":   noCap,
	"max-steps-return":    noCap,
	"cap-summary":         noCap,
	"per-call-cap":        "Runner.Run takes a RunConfig of StreamingMode and SaveInputBlobsAsArtifacts (agent/run_config.go): no step cap",
	"repeated-error-stop": "a tool's error becomes an {\"error\": ...} function response every time (Flow.callTool, internal/llminternal/base_flow.go) and the loop asks the model again: no count of repeated failures and no stop",
	"ask-user":            "ADK Go has no built-in tool through which the model asks the person a question",
	"approval-edit":       "a ToolConfirmation carries only hint, confirmed and payload (tool/toolconfirmation/tool_confirmation.go), and RequestConfirmationRequestProcessor (internal/llminternal/request_confirmation_processor.go) runs the original call as the session holds it (OriginalCallFrom): a pending call cannot be edited",
	"durable-approvals":   "ADK's default session store, session.InMemoryService, keeps a pause in the process only, as live objects; its durable store, session/database, is the documented opt-in that adk-go+database judges",
	"async":               "no async form: Runner.Run returns an iterator (iter.Seq2) that runs as the caller ranges over it, as Go calls block",
	"lm-retry":            "ADK Go's model classes send each request once: model/gemini (and model/apigee, which points it at a proxy) calls the genai client's GenerateContent, whose sendRequest (api_client.go) makes one HTTP request with no retry (the client retries file uploads only), and ADK adds none: Flow.callLLM (internal/llminternal/base_flow.go) hands a model's error to the OnModelError callbacks, then out of the run",
	"http":                "ADK Go's model classes talk to Gemini's generateContent API through the genai client (model/gemini, and model/apigee through a proxy of it), which the suite's endpoint does not speak (OpenAI chat completions and Responses, Anthropic Messages): no model class of ADK Go can be pointed at it",
}

var parity = object{
	"stop_reason":    "library: the run's last event is a final response (session.Event.IsFinalResponse, which ends Flow.Run): its text is the answer; ADK Go has no cap stop",
	"iterations":     "derived: counted from the session's events, one per model response (ADK Go counts no model calls)",
	"max_iterations": "none: ADK Go has no step cap and so no cap error",
	"partial_run":    "none: ADK Go has no step cap and so no cap error",
	"concurrency":    "shared",
}

// Each failure is ADK Go's, checked by driving it directly (library_test.go, go test).
const (
	noStepCap = "ADK Go has no step cap: agent.RunConfig holds only StreamingMode and SaveInputBlobsAsArtifacts (agent/run_config.go), llmagent.Config has no limit, and Flow.Run (internal/llminternal/base_flow.go) asks the model again until an event is a final response (a direct run: a model that kept calling a tool was asked 30 times, until the caller stopped ranging over Runner.Run)"
	malformed = "Gemini answers a call it cannot parse with finish reason MALFORMED_FUNCTION_CALL and no content; ADK's Gemini model turns that into an LLMResponse with that ErrorCode (converters.Genai2LLMResponse, internal/llminternal/converters), and an event with no function call is a final response (session.Event.IsFinalResponse), so Flow.Run (internal/llminternal/base_flow.go) ends the run: the model is never told or asked again (a direct run of ADK's Gemini model: one model call, the tool never ran, the run ended)"
	tooDeep   = "args nested 100,000 levels deep end the run: the genai client decodes Gemini's response with encoding/json (deserializeUnaryResponse, api_client.go), which refuses nesting past 10,000 levels, and ADK's Gemini model returns that error (generate, model/gemini/gemini.go) out of Runner.Run (a direct run: 'failed to call model: deserializeUnaryResponse: error unmarshalling response: ... exceeded max depth', the tool never ran)"
	payload   = "a ToolConfirmation takes no message for the model: functiontool's Run (tool/functiontool/function.go) answers a call that was not confirmed with the error 'error tool \"<name>\" call is rejected' (tool.ErrConfirmationRejected), and the confirmation's payload, the person's text, never reaches the model (a direct run: the model was shown the rejection only)"
	replay    = "a second answer to the same confirmation runs the call again: RequestConfirmationRequestProcessor (internal/llminternal/request_confirmation_processor.go) drops a confirmed call that already has a function response only when that response comes after the latest user event, and a new answer is a new user event, so the original call is dispatched again (a direct run: two answers, the tool ran twice)"
	shared    = "the events Runner.Run hands the caller are the session's own: InMemoryService.AppendEvent (session/inmemory.go) copies an Event but keeps its LLMResponse, whose Content is a pointer, and the next run of the session reads those events, so a caller's change to a content it was given reaches the paused session and the next model call (a direct run: a text part appended to a yielded event was in the resumed run's request)"
)

var knownFailures = object{
	"The step cap stops a loop that never chooses finish": noStepCap,
	"A step cap of one allows exactly one step":           noStepCap,
	"ARGS-2": malformed,
	"ARGS-3": malformed,
	"test_tool_args_of_any_size_or_nesting_reach_the_tool_intact_or_are_refused_saying_why[store-an object nested 100000 levels deep]": tooDeep,
	"Free text is fed back to the agent as the user's answer":                                                                          payload,
	"Resuming the same interrupt twice never runs the tool twice":                                                                      replay,
	"Answering a pause again after its resumed run paused again never runs a call twice":                                               replay,
	"A pause's trajectory is a snapshot":                                                                                               shared,
}

func list(value any) []any { l, _ := value.([]any); return l }
func obj(value any) object { o, _ := value.(object); return o }
func str(value any) string { s, _ := value.(string); return s }

// -- the model: ADK's model.LLM answered from the script ----------------------------------------------

// scripted is the model.LLM of one call: each request goes to the suite as an LMCall.
type scripted struct {
	replies atomic.Int64
}

func (m *scripted) Name() string { return "scripted" }

func (m *scripted) GenerateContent(ctx context.Context, req *model.LLMRequest, stream bool) iter.Seq2[*model.LLMResponse, error] {
	return func(yield func(*model.LLMResponse, error) bool) {
		turn, err := protocol.AskModel(ctx, object{"kind": "step", "adapter": "native", "messages": shown(req), "tools": declared(req)})
		if err != nil {
			yield(nil, err)
			return
		}
		if turn["kind"] == "fault" {
			yield(nil, fmt.Errorf("the script holds a transport fault (%v), but this harness is bound at model.LLM, above any transport", turn["fault"]))
			return
		}
		response, err := m.answer(turn)
		if err != nil || !stream || response.Content == nil {
			yield(response, err)
			return
		}
		for _, piece := range pieces(response.Content) {
			if !yield(&model.LLMResponse{Content: genai.NewContentFromText(piece, genai.RoleModel), Partial: true}, nil) {
				return
			}
		}
		response.TurnComplete = true
		yield(response, nil)
	}
}

// answer is the scripted turn as Gemini's API answers it (read by ADK's Gemini model): the thought
// as a text part, each call as a function-call part whose args are the object the model wrote.
func (m *scripted) answer(turn object) (*model.LLMResponse, error) {
	message := protocol.AssistantMessage(turn, m.replies.Load()+1)
	parts := []*genai.Part{}
	if text := str(message["content"]); text != "" {
		parts = append(parts, genai.NewPartFromText(text))
	}
	for _, c := range list(message["tool_calls"]) {
		call := obj(c)
		function := obj(call["function"])
		arguments := str(function["arguments"])
		var args map[string]any
		if err := json.Unmarshal([]byte(arguments), &args); err != nil || args == nil {
			if err != nil && strings.Contains(err.Error(), "exceeded max depth") {
				// The genai client decodes Gemini's response with encoding/json, which refuses it: ADK's
				// Gemini model fails so (library_test.go), its error followed by the whole body.
				return nil, fmt.Errorf("failed to call model: deserializeUnaryResponse: error unmarshalling response: %w", err)
			}
			m.replies.Add(1)
			return &model.LLMResponse{ErrorCode: string(genai.FinishReasonMalformedFunctionCall),
				ErrorMessage: "Malformed function call: " + arguments, FinishReason: genai.FinishReasonMalformedFunctionCall}, nil
		}
		parts = append(parts, &genai.Part{FunctionCall: &genai.FunctionCall{ID: str(call["id"]), Name: str(function["name"]), Args: args}})
	}
	m.replies.Add(1)
	return &model.LLMResponse{Content: &genai.Content{Role: genai.RoleModel, Parts: parts}, FinishReason: genai.FinishReasonStop}, nil
}

// pieces are a content's text in pieces of 16 characters, as a stream delivers it.
func pieces(content *genai.Content) []string {
	var text strings.Builder
	for _, p := range content.Parts {
		text.WriteString(p.Text)
	}
	runes := []rune(text.String())
	found := []string{}
	for start := 0; start < len(runes); start += 16 {
		found = append(found, string(runes[start:min(start+16, len(runes))]))
	}
	return found
}

// shown is the request as the model sees it: the system instruction, then each content's text, its
// function responses as JSON and a line `call name(args)` per function call.
func shown(req *model.LLMRequest) []any {
	messages := []any{}
	if req.Config != nil && req.Config.SystemInstruction != nil {
		messages = append(messages, object{"role": "system", "content": contentText(req.Config.SystemInstruction)})
	}
	for _, content := range req.Contents {
		text := contentText(content)
		for _, p := range content.Parts {
			if p.FunctionResponse != nil {
				text += protocol.Text(p.FunctionResponse.Response)
			}
		}
		for _, p := range content.Parts {
			if p.FunctionCall != nil {
				text += "\ncall " + p.FunctionCall.Name + "(" + protocol.Text(p.FunctionCall.Args) + ")"
			}
		}
		messages = append(messages, object{"role": content.Role, "content": text})
	}
	return messages
}

func contentText(content *genai.Content) string {
	var text strings.Builder
	for _, p := range content.Parts {
		text.WriteString(p.Text)
	}
	return text.String()
}

// declared are the request's function declarations as chat-completions tools (nil: none).
func declared(req *model.LLMRequest) any {
	tools := []any{}
	if req.Config == nil {
		return nil
	}
	for _, t := range req.Config.Tools {
		for _, d := range t.FunctionDeclarations {
			var parameters any = d.ParametersJsonSchema
			if parameters == nil && d.Parameters != nil {
				parameters = d.Parameters
			}
			tools = append(tools, object{"type": "function", "function": object{"name": d.Name, "description": d.Description,
				"parameters": plain(parameters)}})
		}
	}
	if len(tools) == 0 {
		return nil
	}
	return tools
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

// -- the tools: functiontool.New over the struct a user would write -------------------------------------

// goTypes are the suite's parameter types as the Go types of a struct's fields.
var goTypes = map[string]reflect.Type{"str": reflect.TypeFor[string](), "int": reflect.TypeFor[int](),
	"float": reflect.TypeFor[float64](), "bool": reflect.TypeFor[bool](), "list": reflect.TypeFor[[]any](),
	"dict": reflect.TypeFor[map[string]any]()}

// argsStruct is the args struct a user writes for the tool: a field per parameter, named by its
// json tag and described by its jsonschema tag.
func argsStruct(spec object) (reflect.Type, error) {
	fields := []reflect.StructField{}
	for i, p := range list(spec["parameters"]) {
		param := obj(p)
		kind, ok := goTypes[str(param["type"])]
		if !ok {
			return nil, fmt.Errorf("the tool %s has a parameter of type %v, which no Go type stands for", str(spec["name"]), param["type"])
		}
		tag := fmt.Sprintf(`json:%s jsonschema:%s`, strconv.Quote(str(param["name"])), strconv.Quote(str(param["description"])))
		fields = append(fields, reflect.StructField{Name: "F" + strconv.Itoa(i), Type: kind, Tag: reflect.StructTag(tag)})
	}
	return reflect.StructOf(fields), nil
}

// newTool is the suite's tool as functiontool.New makes it, with the schema ADK infers for its
// args struct.
func newTool(spec object) (tool.Tool, error) {
	args, err := argsStruct(spec)
	if err != nil {
		return nil, err
	}
	schema, err := jsonschema.ForType(args, nil)
	if err != nil {
		return nil, err
	}
	name := str(spec["name"])
	return functiontool.New(functiontool.Config{Name: name, Description: str(spec["description"]), InputSchema: schema,
		RequireConfirmation: spec["interruptible"] == true},
		func(tc agent.ToolContext, input map[string]any) (any, error) {
			return protocol.CallTool(tc, name, plain(input))
		})
}

// -- the agent -------------------------------------------------------------------------------------------

// agentOf is the spec's llmagent with model m.
func agentOf(spec object, m model.LLM) (agent.Agent, error) {
	tools := []tool.Tool{}
	for _, t := range list(spec["tools"]) {
		made, err := newTool(obj(t))
		if err != nil {
			return nil, err
		}
		tools = append(tools, made)
	}
	return llmagent.New(llmagent.Config{Name: str(spec["name"]), Model: m,
		Instruction: str(obj(spec["signature"])["instructions"]), Tools: tools})
}

type built struct {
	spec object
	last []*session.Event
}

// pause is a run's session, under an agent's app, in the session store that keeps it.
type pause struct {
	app, session string
	store        session.Service
}

type harness struct {
	lock   sync.Mutex
	agents map[string]*built
	// The application's session stores: in memory, and (adk-go+database) ADK's database store for
	// the agents whose tools need confirmation.
	sessions, durable session.Service
	config            variant
	// Every pause a call made, by its confirmation request's id, whichever agent made it: a
	// person's answer may reach another agent than the paused one (HITL-6), and refusing it is
	// ADK's part.
	pauses map[string]pause
}

func (h *harness) Hello(object) (object, error) {
	return object{"name": h.config.name, "version": protocol.ModuleVersion(library), "capabilities": h.config.claimed,
		"not_claimed": h.config.notClaimed, "known_failures": h.config.knownFailures, "parity": parity,
		"dependencies": h.config.dependencies()}, nil
}

// storeOf is the session store of the agent spec's runs: ADK's database store for an agent with a
// tool that needs confirmation, where the harness has one; else the in-memory store.
func (h *harness) storeOf(spec object) session.Service {
	if h.durable != nil {
		for _, t := range list(spec["tools"]) {
			if obj(t)["interruptible"] == true {
				return h.durable
			}
		}
	}
	return h.sessions
}

func (h *harness) Configure(object) (object, error) { return object{}, nil }

func (h *harness) Build(cmd object) (object, error) {
	spec := obj(cmd["spec"])
	if _, err := agentOf(spec, &scripted{}); err != nil { // a spec ADK refuses fails here, at build
		return object{"error": protocol.ErrorInfo(err, "", nil)}, nil
	}
	h.lock.Lock()
	defer h.lock.Unlock()
	h.agents[str(cmd["agent"])] = &built{spec: spec}
	return object{"error": nil}, nil
}

func (h *harness) agent(name string) (*built, error) {
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
	app := str(entry.spec["name"])
	store := h.storeOf(entry.spec)
	created, err := store.Create(ctx, &session.CreateRequest{AppName: app, UserID: user})
	if err != nil {
		return nil, err
	}
	said := genai.NewContentFromText(protocol.UserMessage(obj(call["inputs"])), genai.RoleUser)
	return object{"outcome": h.play(ctx, entry, pause{app: app, session: created.Session.ID(), store: store}, said, str(call["mode"]) == "stream")}, nil
}

// Resume sends the person's answer as ADK documents it: a FunctionResponse to the pause's
// adk_request_confirmation call holding a ToolConfirmation, by a new run of the paused session,
// through the agent given.
func (h *harness) Resume(ctx context.Context, cmd object) (object, error) {
	entry, err := h.agent(str(cmd["agent"]))
	if err != nil {
		return nil, err
	}
	request := obj(cmd["request"])
	id := str(request["interrupt_id"])
	h.lock.Lock()
	paused, ok := h.pauses[id]
	h.lock.Unlock()
	if !ok {
		return object{"outcome": object{"error": object{"type": "UnknownInterrupt", "message": "no pause " + id + " was made through this harness",
			"kind": "other", "fields": object{}}}}, nil
	}
	person := protocol.ReadApproval(str(request["response"]))
	if person.Decision == "edit" {
		return object{"outcome": object{"error": object{"type": "NotSupported", "message": str(notClaimed["approval-edit"]),
			"kind": "other", "fields": object{}}}}, nil
	}
	// Free text declines the call, the text as the confirmation's payload: ADK takes no message.
	confirmation := toolconfirmation.ToolConfirmation{Confirmed: person.Decision == "approve"}
	if person.Decision == "message" {
		confirmation.Payload = person.Text
	}
	response, err := json.Marshal(confirmation)
	if err != nil {
		return nil, err
	}
	var fields map[string]any
	if err := json.Unmarshal(response, &fields); err != nil {
		return nil, err
	}
	answer := &genai.Content{Role: genai.RoleUser, Parts: []*genai.Part{{FunctionResponse: &genai.FunctionResponse{
		ID: id, Name: toolconfirmation.FunctionCallName, Response: fields}}}}
	// The answer goes to the given agent's app, in its store: a session of another app is not its
	// to find.
	run := pause{app: str(entry.spec["name"]), session: paused.session, store: h.storeOf(entry.spec)}
	return object{"outcome": h.play(ctx, entry, run, answer, str(request["mode"]) == "stream")}, nil
}

// play runs `message` through the agent's runner in the run's session, and reads its outcome.
func (h *harness) play(ctx context.Context, entry *built, run pause, message *genai.Content, stream bool) object {
	m := &scripted{}
	made, err := agentOf(entry.spec, m)
	if err != nil {
		return object{"error": protocol.ErrorInfo(err, "", nil)}
	}
	r, err := runner.New(runner.Config{AppName: run.app, Agent: made, SessionService: run.store})
	if err != nil {
		return object{"error": protocol.ErrorInfo(err, "", nil)}
	}
	config := agent.RunConfig{}
	if stream {
		config.StreamingMode = agent.StreamingModeSSE
	}
	seen := []*session.Event{}
	events := []any{}
	var failure error
	for event, err := range r.Run(ctx, user, run.session, message, config) {
		if err != nil {
			failure = err
			break
		}
		if event.Partial {
			continue
		}
		seen = append(seen, event)
		if stream {
			for _, p := range parts(event) {
				if p.FunctionResponse != nil {
					events = append(events, object{"kind": "step", "model_calls": m.replies.Load(), "step": nil})
				}
			}
		}
	}
	h.lock.Lock()
	entry.last = seen
	h.lock.Unlock()
	history := h.history(ctx, run, seen)
	trajectory, calls := steps(history), modelCalls(history)
	if stream {
		// A step event per function response, in order, each with the step it completed.
		done := []any{}
		for _, s := range trajectory {
			if obj(s)["observation"] != nil {
				done = append(done, s)
			}
		}
		offset := len(done) - len(events)
		for i, e := range events {
			if offset+i >= 0 && offset+i < len(done) {
				obj(e)["step"] = done[offset+i]
			}
		}
	}
	out := h.outcome(entry.spec, run, seen, history, trajectory, calls, failure)
	if stream {
		if fail := obj(out["error"]); fail == nil || fail["kind"] == "human-in-the-loop" {
			events = append(events, object{"kind": "done", "model_calls": m.replies.Load(), "stop_reason": out["stop_reason"],
				"outputs": out["outputs"]})
		}
		out["events"] = events
	}
	return out
}

// history is the session's events as the store keeps them (Service.Get, the documented API): a
// resumed run's steps begin before the pause. The run's own events if the store has none.
func (h *harness) history(ctx context.Context, run pause, seen []*session.Event) []*session.Event {
	got, err := run.store.Get(ctx, &session.GetRequest{AppName: run.app, UserID: user, SessionID: run.session})
	if err != nil {
		return seen
	}
	events := []*session.Event{}
	for e := range got.Session.Events().All() {
		events = append(events, e)
	}
	return events
}

func parts(event *session.Event) []*genai.Part {
	if event == nil || event.Content == nil {
		return nil
	}
	return event.Content.Parts
}

// steps are the model's function calls among the events, in order, each with the text beside it
// and its call's last function response (a confirmed call's result replaces the pause's error).
// ADK's own adk_request_confirmation calls are the pause, not the model's steps.
func steps(events []*session.Event) []any {
	results := map[string]any{}
	for _, e := range events {
		for _, p := range parts(e) {
			if p.FunctionResponse != nil && p.FunctionResponse.Name != toolconfirmation.FunctionCallName {
				results[p.FunctionResponse.ID] = plain(p.FunctionResponse.Response)
			}
		}
	}
	found := []any{}
	for _, e := range events {
		var thought any
		if text := contentTextOf(e); text != "" {
			thought = text
		}
		for _, p := range parts(e) {
			call := p.FunctionCall
			if call == nil || call.Name == toolconfirmation.FunctionCallName {
				continue
			}
			var callID any
			if call.ID != "" {
				callID = call.ID
			}
			found = append(found, object{"thought": thought, "tool_name": call.Name, "tool_args": protocol.Wire(plain(call.Args)),
				"observation": results[call.ID], "is_error": nil, "call_id": callID})
		}
	}
	return found
}

func contentTextOf(e *session.Event) string {
	if e.Content == nil {
		return ""
	}
	return contentText(e.Content)
}

// modelCalls are the model responses among the events: an event of the model's content or with
// its error code (a malformed call's, which has no content); not the confirmation request ADK adds.
func modelCalls(events []*session.Event) int {
	n := 0
	for _, e := range events {
		if e.Author == user || len(confirmations(e)) > 0 {
			continue
		}
		if e.ErrorCode != "" || (e.Content != nil && e.Content.Role == genai.RoleModel) {
			n++
		}
	}
	return n
}

// confirmations are the event's requests for a person's confirmation: its long-running
// adk_request_confirmation calls.
func confirmations(e *session.Event) []*genai.FunctionCall {
	found := []*genai.FunctionCall{}
	for _, p := range parts(e) {
		if p.FunctionCall != nil && p.FunctionCall.Name == toolconfirmation.FunctionCallName {
			for _, id := range e.LongRunningToolIDs {
				if id == p.FunctionCall.ID {
					found = append(found, p.FunctionCall)
				}
			}
		}
	}
	return found
}

func (h *harness) outcome(spec object, run pause, seen, history []*session.Event, trajectory []any, calls int, failure error) object {
	if failure != nil {
		return object{"trajectory": trajectory, "iterations": calls, "error": protocol.ErrorInfo(failure, "", nil)}
	}
	for _, e := range seen {
		for _, request := range confirmations(e) {
			original, err := toolconfirmation.OriginalCallFrom(request)
			if err != nil {
				return object{"trajectory": trajectory, "iterations": calls, "error": protocol.ErrorInfo(err, "", nil)}
			}
			h.lock.Lock()
			h.pauses[request.ID] = run
			h.lock.Unlock()
			var inputs any
			for _, event := range history {
				if event.Author == user && event.Content != nil {
					inputs = contentText(event.Content)
					break
				}
			}
			var hint string
			if c, ok := request.Args["toolConfirmation"].(*toolconfirmation.ToolConfirmation); ok {
				hint = c.Hint
			}
			var callID any
			if original.ID != "" {
				callID = original.ID
			}
			return object{"trajectory": trajectory, "iterations": calls, "error": object{
				"type": "ToolConfirmation", "message": hint, "kind": "human-in-the-loop",
				"fields": object{"question": nil, "interrupt_id": request.ID,
					"tool_call": object{"name": original.Name, "args": protocol.Wire(plain(original.Args)), "call_id": callID},
					"context":   object{"trajectory": trajectory, "iteration": calls, "input": inputs}}}}
		}
	}
	var final *session.Event
	for i := len(seen) - 1; i >= 0; i-- {
		if seen[i].IsFinalResponse() && seen[i].Content != nil {
			final = seen[i]
			break
		}
	}
	if final == nil {
		return object{"trajectory": trajectory, "iterations": calls}
	}
	return object{"outputs": protocol.ReplyOutputs(obj(spec["signature"]), contentText(final.Content)),
		"trajectory": trajectory, "iterations": calls, "stop_reason": "finish"}
}

// MutateLastResult changes what the last call handed the caller: its events' function responses
// and contents, as a caller holding them could.
func (h *harness) MutateLastResult(cmd object) (object, error) {
	entry, err := h.agent(str(cmd["agent"]))
	if err != nil {
		return nil, err
	}
	h.lock.Lock()
	defer h.lock.Unlock()
	if len(entry.last) == 0 {
		return object{"changed": []any{}}, nil
	}
	marker := str(cmd["marker"])
	for _, event := range entry.last {
		if event.Content == nil {
			continue
		}
		for _, p := range event.Content.Parts {
			if p.FunctionResponse != nil && p.FunctionResponse.Response != nil {
				for k := range p.FunctionResponse.Response {
					p.FunctionResponse.Response[k] = marker
				}
			}
		}
		event.Content.Parts = append(event.Content.Parts, genai.NewPartFromText(marker))
	}
	return object{"changed": []any{fmt.Sprintf("the run's events (%d events)", len(entry.last))}}, nil
}

func main() {
	h := &harness{agents: map[string]*built{}, sessions: session.InMemoryService(), pauses: map[string]pause{}, config: defaults}
	if len(os.Args) > 1 && os.Args[1] == "--database" {
		durable, err := databaseStore()
		if err != nil {
			fmt.Fprintf(os.Stderr, "adk-go: ADK's database session store did not open: %v\n", err)
			os.Exit(2)
		}
		h.durable, h.config = durable, withDatabase
	} else if len(os.Args) > 1 {
		fmt.Fprintf(os.Stderr, "adk-go: unknown argument %q: the harness takes --database or nothing\n", os.Args[1])
		os.Exit(2)
	}
	protocol.Serve(h)
}
