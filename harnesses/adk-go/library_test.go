package main

// The known failures of harness.go, checked against ADK Go itself: an llmagent run by runner.Run over
// session.InMemoryService, with functiontool tools, its model either a plain scripted model.LLM or
// ADK's own Gemini model (model/gemini) whose genai client is answered by a scripted transport
// (canned generateContent JSON), no suite and no harness (go test in this folder).

import (
	"context"
	"encoding/json"
	"io"
	"iter"
	"net/http"
	"strings"
	"sync"
	"testing"

	"google.golang.org/adk/agent"
	"google.golang.org/adk/agent/llmagent"
	"google.golang.org/adk/model"
	"google.golang.org/adk/model/gemini"
	"google.golang.org/adk/runner"
	"google.golang.org/adk/session"
	"google.golang.org/adk/tool"
	"google.golang.org/adk/tool/functiontool"
	"google.golang.org/adk/tool/toolconfirmation"
	"google.golang.org/genai"
)

// replies is a model.LLM that answers each request with the next content (a final answer once they
// run out), and keeps every request's contents as text.
type replies struct {
	lock     sync.Mutex
	contents []*genai.Content
	seen     []string
}

func (r *replies) Name() string { return "replies" }

func (r *replies) GenerateContent(_ context.Context, req *model.LLMRequest, _ bool) iter.Seq2[*model.LLMResponse, error] {
	return func(yield func(*model.LLMResponse, error) bool) {
		r.lock.Lock()
		text, _ := json.Marshal(req.Contents)
		r.seen = append(r.seen, string(text))
		content := genai.NewContentFromText("done", genai.RoleModel)
		if len(r.contents) > 0 {
			content, r.contents = r.contents[0], r.contents[1:]
		}
		r.lock.Unlock()
		yield(&model.LLMResponse{Content: content}, nil)
	}
}

func (r *replies) calls() int {
	r.lock.Lock()
	defer r.lock.Unlock()
	return len(r.seen)
}

// calling is a model content with one function call.
func calling(id, name string, args map[string]any) *genai.Content {
	return &genai.Content{Role: genai.RoleModel, Parts: []*genai.Part{{FunctionCall: &genai.FunctionCall{ID: id, Name: name, Args: args}}}}
}

// transferArgs is the args struct a user writes for the transfer tool.
type transferArgs struct {
	Amount    int    `json:"amount" jsonschema:"the amount"`
	Recipient string `json:"recipient" jsonschema:"the recipient"`
}

// payments is an app with a transfer tool that keeps the args it receives; needsApproval makes it
// require confirmation.
type payments struct {
	lock     sync.Mutex
	received []transferArgs
	runner   *runner.Runner
	sessions session.Service
}

func newPayments(t *testing.T, m model.LLM, needsApproval bool) *payments {
	t.Helper()
	return inStore(t, m, needsApproval, session.InMemoryService())
}

// inStore is the payments app with its sessions in store.
func inStore(t *testing.T, m model.LLM, needsApproval bool, store session.Service) *payments {
	t.Helper()
	p := &payments{sessions: store}
	transfer, err := functiontool.New(functiontool.Config{Name: "transfer", Description: "Send money.", RequireConfirmation: needsApproval},
		func(_ agent.ToolContext, args transferArgs) (string, error) {
			p.lock.Lock()
			defer p.lock.Unlock()
			p.received = append(p.received, args)
			return "sent", nil
		})
	if err != nil {
		t.Fatal(err)
	}
	made, err := llmagent.New(llmagent.Config{Name: "payer", Model: m, Tools: []tool.Tool{transfer}})
	if err != nil {
		t.Fatal(err)
	}
	if p.runner, err = runner.New(runner.Config{AppName: "payments", Agent: made, SessionService: p.sessions}); err != nil {
		t.Fatal(err)
	}
	return p
}

func (p *payments) session(t *testing.T) string {
	t.Helper()
	created, err := p.sessions.Create(context.Background(), &session.CreateRequest{AppName: "payments", UserID: "user"})
	if err != nil {
		t.Fatal(err)
	}
	return created.Session.ID()
}

// run sends message in the session and returns the events it yielded, or its error.
func (p *payments) run(ctx context.Context, id string, message *genai.Content) ([]*session.Event, error) {
	events := []*session.Event{}
	for event, err := range p.runner.Run(ctx, "user", id, message, agent.RunConfig{}) {
		if err != nil {
			return events, err
		}
		events = append(events, event)
	}
	return events, nil
}

func ask(text string) *genai.Content { return genai.NewContentFromText(text, genai.RoleUser) }

// LOOP-3: there is no step cap; a model that keeps calling a tool is asked on and on.
func TestNoStepCap(t *testing.T) {
	m := &replies{}
	for range 40 {
		m.contents = append(m.contents, calling("", "transfer", map[string]any{"amount": 1, "recipient": "Ann"}))
	}
	p := newPayments(t, m, false)
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	calls := 0
	for event, err := range p.runner.Run(ctx, "user", p.session(t), ask("pay"), agent.RunConfig{}) {
		if err != nil {
			t.Fatal(err)
		}
		if event.Content != nil && event.Content.Role == genai.RoleModel {
			if calls++; calls == 30 {
				break // the caller's own way out: no config of ADK's stops it
			}
		}
	}
	if calls != 30 || len(p.received) < 29 {
		t.Fatalf("expected the loop to go on past 30 model calls; it made %d and ran the tool %d times", calls, len(p.received))
	}
}

// geminiAPI is a scripted Gemini API: each generateContent request is answered with the next body.
type geminiAPI struct {
	lock     sync.Mutex
	bodies   []string
	statuses []int // the status of each request, 200 once they run out
	calls    int
}

func (g *geminiAPI) RoundTrip(request *http.Request) (*http.Response, error) {
	g.lock.Lock()
	defer g.lock.Unlock()
	g.calls++
	body := `{"candidates": [{"content": {"role": "model", "parts": [{"text": "done"}]}, "finishReason": "STOP"}]}`
	if len(g.bodies) > 0 {
		body, g.bodies = g.bodies[0], g.bodies[1:]
	}
	status := http.StatusOK
	if len(g.statuses) > 0 {
		status, g.statuses = g.statuses[0], g.statuses[1:]
		body = `{"error": {"code": 503, "message": "overloaded", "status": "UNAVAILABLE"}}`
	}
	return &http.Response{StatusCode: status, Status: http.StatusText(status), Header: http.Header{"Content-Type": {"application/json"}},
		Body: io.NopCloser(strings.NewReader(body)), Request: request, ProtoMajor: 1, ProtoMinor: 1}, nil
}

func geminiModel(t *testing.T, api *geminiAPI) model.LLM {
	t.Helper()
	m, err := gemini.NewModel(context.Background(), "gemini-2.5-flash", &genai.ClientConfig{APIKey: "placeholder-key",
		Backend: genai.BackendGeminiAPI, HTTPClient: &http.Client{Transport: api}})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// ARGS-2, ARGS-3: Gemini's answer to a call it cannot parse ends the run; the model is not asked again.
func TestMalformedCallEndsTheRun(t *testing.T) {
	api := &geminiAPI{bodies: []string{`{"candidates": [{"finishReason": "MALFORMED_FUNCTION_CALL", "finishMessage": "Malformed function call: transfer(50)"}]}`,
		`{"candidates": [{"content": {"role": "model", "parts": [{"text": "sorry"}]}, "finishReason": "STOP"}]}`}}
	p := newPayments(t, geminiModel(t, api), false)
	events, err := p.run(context.Background(), p.session(t), ask("pay"))
	if err != nil {
		t.Fatal(err)
	}
	last := events[len(events)-1]
	if api.calls != 1 || len(p.received) != 0 || last.ErrorCode != string(genai.FinishReasonMalformedFunctionCall) || !last.IsFinalResponse() {
		t.Fatalf("expected one model call ending on the malformed call; got %d calls, %d tool runs, last event %+v", api.calls, len(p.received), last.LLMResponse)
	}
}

// ARGS-5: args nested deeper than encoding/json reads end the run with the genai client's error.
func TestDeepArgsEndTheRun(t *testing.T) {
	deep := strings.Repeat(`{"a": `, 100000) + "1" + strings.Repeat("}", 100000)
	api := &geminiAPI{bodies: []string{`{"candidates": [{"content": {"role": "model", "parts": [{"functionCall": {"name": "transfer", "args": {"amount": ` +
		deep + `}}}]}, "finishReason": "STOP"}]}`}}
	p := newPayments(t, geminiModel(t, api), false)
	_, err := p.run(context.Background(), p.session(t), ask("pay"))
	if err == nil || !strings.HasPrefix(err.Error(), "failed to call model: deserializeUnaryResponse: error unmarshalling response: invalid character '{' exceeded max depth") || len(p.received) != 0 {
		t.Fatalf("expected the run to fail on the depth, the tool never run; got %.200v and %d runs", err, len(p.received))
	}
}

// lm-retry: ADK's Gemini model sends a request once; a transient failure ends the run.
func TestNoRetry(t *testing.T) {
	api := &geminiAPI{statuses: []int{http.StatusServiceUnavailable}}
	p := newPayments(t, geminiModel(t, api), false)
	_, err := p.run(context.Background(), p.session(t), ask("pay"))
	if err == nil || api.calls != 1 {
		t.Fatalf("expected the 503 to end the run after one request; got %v after %d requests", err, api.calls)
	}
}

// pauseOf is the confirmation request among events.
func pauseOf(t *testing.T, events []*session.Event) *genai.FunctionCall {
	t.Helper()
	for _, e := range events {
		if e.Content == nil {
			continue
		}
		for _, part := range e.Content.Parts {
			if part.FunctionCall != nil && part.FunctionCall.Name == toolconfirmation.FunctionCallName {
				return part.FunctionCall
			}
		}
	}
	t.Fatal("the run did not pause for confirmation")
	return nil
}

func answer(id string, confirmation toolconfirmation.ToolConfirmation) *genai.Content {
	text, _ := json.Marshal(confirmation)
	var fields map[string]any
	_ = json.Unmarshal(text, &fields)
	return &genai.Content{Role: genai.RoleUser, Parts: []*genai.Part{{FunctionResponse: &genai.FunctionResponse{
		ID: id, Name: toolconfirmation.FunctionCallName, Response: fields}}}}
}

// paused is a payments app over store whose run of a session has paused on its call of transfer: its model,
// the app, the session and the run's events.
func paused(t *testing.T, store session.Service) (*replies, *payments, string, []*session.Event) {
	t.Helper()
	m := &replies{contents: []*genai.Content{calling("call_1", "transfer", map[string]any{"amount": 50, "recipient": "Ann"})}}
	p := inStore(t, m, true, store)
	id := p.session(t)
	events, err := p.run(context.Background(), id, ask("pay"))
	if err != nil {
		t.Fatal(err)
	}
	return m, p, id, events
}

// HITL-6: a second answer to the same confirmation runs the call again.
func TestAnswerTwiceRunsTwice(t *testing.T) {
	_, p, id, events := paused(t, session.InMemoryService())
	request := pauseOf(t, events)
	for range 2 {
		if _, err := p.run(context.Background(), id, answer(request.ID, toolconfirmation.ToolConfirmation{Confirmed: true})); err != nil {
			t.Fatal(err)
		}
	}
	if len(p.received) != 2 {
		t.Fatalf("expected the second answer to run the call again; it ran %d times", len(p.received))
	}
}

// HITL-4: a declined call's answer to the model is ADK's fixed rejection; the person's text (the
// payload) never reaches the model.
func TestPayloadNeverReachesTheModel(t *testing.T) {
	m, p, id, events := paused(t, session.InMemoryService())
	request := pauseOf(t, events)
	said := "Pay Bob instead"
	if _, err := p.run(context.Background(), id, answer(request.ID, toolconfirmation.ToolConfirmation{Payload: said})); err != nil {
		t.Fatal(err)
	}
	last := m.seen[len(m.seen)-1]
	if strings.Contains(last, said) || !strings.Contains(last, "call is rejected") || len(p.received) != 0 {
		t.Fatalf("expected the model shown the rejection and not %q; it saw %s", said, last)
	}
}

// TRJ-2: the events Runner.Run hands the caller are the session's own: a change to one reaches the
// next model call of the session.
func TestEventsAreTheSessions(t *testing.T) {
	m, p, id, events := paused(t, session.InMemoryService())
	request := pauseOf(t, events)
	events[0].Content.Parts = append(events[0].Content.Parts, genai.NewPartFromText("CALLER-MUTATION"))
	if _, err := p.run(context.Background(), id, answer(request.ID, toolconfirmation.ToolConfirmation{Confirmed: true})); err != nil {
		t.Fatal(err)
	}
	if last := m.seen[len(m.seen)-1]; !strings.Contains(last, "CALLER-MUTATION") {
		t.Fatalf("expected the caller's change in the next model call; it saw %s", last)
	}
}

// The harness's tools: the schema ADK infers for the struct built at run time is the one it infers
// for the same struct written in Go, and functiontool treats the same args alike with either.
func TestBuiltStructActsAsWritten(t *testing.T) {
	written, err := functiontool.New(functiontool.Config{Name: "transfer", Description: "Send money."},
		func(_ agent.ToolContext, args transferArgs) (any, error) { return args, nil })
	if err != nil {
		t.Fatal(err)
	}
	built, err := newTool(map[string]any{"name": "transfer", "description": "Send money.", "parameters": []any{
		map[string]any{"name": "amount", "type": "int", "description": "the amount"},
		map[string]any{"name": "recipient", "type": "str", "description": "the recipient"}}})
	if err != nil {
		t.Fatal(err)
	}
	declaration := func(x tool.Tool) string {
		text, _ := json.Marshal(x.(interface {
			Declaration() *genai.FunctionDeclaration
		}).Declaration().ParametersJsonSchema)
		return string(text)
	}
	if declaration(written) != declaration(built) {
		t.Fatalf("the declarations differ:\n%s\n%s", declaration(written), declaration(built))
	}
	type runner interface {
		Run(agent.ToolContext, any) (map[string]any, error)
	}
	for _, args := range []map[string]any{{"amount": "fifty", "recipient": "Ann"}, {"amount": 50.5, "recipient": "Ann"},
		{"amount": nil, "recipient": "Ann"}, {"recipient": "Ann"}, {"amount": 50, "recipient": "Ann", "memo": "rent"}} {
		_, writtenErr := written.(runner).Run(nil, args)
		_, builtErr := built.(runner).Run(nil, args)
		if writtenErr == nil || builtErr == nil || writtenErr.Error() != builtErr.Error() {
			t.Fatalf("%v: written %v, built %v", args, writtenErr, builtErr)
		}
	}
}

// adk-go+database: with ADK's database store, the events a run yields are no longer the session's
// (TRJ-2 holds), and a second answer to the same confirmation still runs the call again (HITL-8).
func TestDatabaseStore(t *testing.T) {
	store, err := databaseStore()
	if err != nil {
		t.Fatal(err)
	}
	m, p, id, events := paused(t, store)
	request := pauseOf(t, events)
	events[0].Content.Parts = append(events[0].Content.Parts, genai.NewPartFromText("CALLER-MUTATION"))
	for range 2 {
		if _, err := p.run(context.Background(), id, answer(request.ID, toolconfirmation.ToolConfirmation{Confirmed: true})); err != nil {
			t.Fatal(err)
		}
	}
	if strings.Contains(m.seen[1], "CALLER-MUTATION") || len(p.received) != 2 {
		t.Fatalf("expected the store's own events and the call run twice; the model saw %s, the tool ran %d times", m.seen[1], len(p.received))
	}
}
