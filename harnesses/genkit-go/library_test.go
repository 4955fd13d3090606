package main

// The known failures of harness.go, checked against Genkit itself: genkit.Generate over its OpenAI
// plugin, whose client is answered by a plain scripted transport (canned chat.completion JSON), and
// genkit.DefineTool tools, no suite and no harness (go test in this folder).

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/firebase/genkit/go/ai"
	"github.com/firebase/genkit/go/genkit"
	oai "github.com/firebase/genkit/go/plugins/compat_oai/openai"
	"github.com/openai/openai-go/option"
)

// script answers each chat-completions request with the next reply (a final answer once they run
// out), and keeps what it saw.
type script struct {
	lock      sync.Mutex
	replies   []string // each an assistant message's JSON
	calls     int
	deadlines []bool
}

func (s *script) RoundTrip(request *http.Request) (*http.Response, error) {
	s.lock.Lock()
	defer s.lock.Unlock()
	s.calls++
	_, deadline := request.Context().Deadline()
	s.deadlines = append(s.deadlines, deadline)
	message := `{"role": "assistant", "content": "done"}`
	if len(s.replies) > 0 {
		message, s.replies = s.replies[0], s.replies[1:]
	}
	body := `{"id": "chatcmpl-1", "object": "chat.completion", "created": 0, "model": "gpt-4o-mini", "choices": [{"index": 0, "message": ` +
		message + `, "finish_reason": "stop"}], "usage": {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0}}`
	return &http.Response{StatusCode: 200, Status: "200 OK", Header: http.Header{"Content-Type": {"application/json"}},
		Body: io.NopCloser(strings.NewReader(body)), Request: request, ProtoMajor: 1, ProtoMinor: 1}, nil
}

func calling(name, arguments string) string {
	text, _ := json.Marshal(arguments)
	return `{"role": "assistant", "content": null, "tool_calls": [{"id": "call_1", "type": "function", "function": {"name": "` +
		name + `", "arguments": ` + string(text) + `}}]}`
}

// payments is a Genkit instance over the scripted client, with a transfer tool of a declared
// schema that keeps the input it receives and fails with fail; needsApproval makes it interrupt.
type payments struct {
	g        *genkit.Genkit
	transfer *ai.ToolDef[any, any]
	received []any
}

var transferSchema = map[string]any{"type": "object", "properties": map[string]any{
	"amount": map[string]any{"type": "integer"}, "note": map[string]any{"type": "object"}},
	"required": []any{"amount"}, "additionalProperties": false}

func newPayments(s *script, fail error, needsApproval bool) *payments {
	p := &payments{}
	p.g = genkit.Init(context.Background(), genkit.WithPlugins(&oai.OpenAI{APIKey: "placeholder-key",
		Opts: []option.RequestOption{option.WithHTTPClient(&http.Client{Transport: s})}}))
	p.transfer = genkit.DefineTool(p.g, "transfer", "Send money.", func(tc *ai.ToolContext, input any) (any, error) {
		if needsApproval && !tc.IsResumed() {
			return nil, tc.Interrupt(nil)
		}
		p.received = append(p.received, input)
		return "sent", fail
	}, ai.WithInputSchema(transferSchema))
	return p
}

func (p *payments) generate(opts ...ai.GenerateOption) (*ai.ModelResponse, error) {
	return genkit.Generate(context.Background(), p.g, append([]ai.GenerateOption{ai.WithModelName("openai/gpt-4o-mini"),
		ai.WithTools(p.transfer), ai.WithPrompt("Pay Ann")}, opts...)...)
}

func always(call string, n int) []string {
	replies := make([]string, n)
	for i := range replies {
		replies[i] = call
	}
	return replies
}

// LOOP-3, EXH-2: WithMaxTurns(2) makes 3 model calls, then a nil response and an error with no steps.
func TestTheCapStopsOneCallLateAndKeepsNoRecord(t *testing.T) {
	s := &script{replies: always(calling("transfer", `{"amount": 1}`), 10)}
	p := newPayments(s, nil, false)
	response, err := p.generate(ai.WithMaxTurns(2))
	if err == nil || err.Error() != "exceeded maximum tool call iterations (2)" || response != nil || s.calls != 3 || len(p.received) != 2 {
		t.Fatalf("expected the cap's error and no response after 3 model calls; got %v, %v after %d", response, err, s.calls)
	}
}

// EXH-3: WithMaxTurns(0) is the default of 5 turns: 6 model calls.
func TestAZeroCapIsTheDefault(t *testing.T) {
	s := &script{replies: always(calling("transfer", `{"amount": 1}`), 10)}
	p := newPayments(s, nil, false)
	if _, err := p.generate(ai.WithMaxTurns(0)); err == nil || s.calls != 6 {
		t.Fatalf("expected the default cap's error after 6 model calls; got %v after %d", err, s.calls)
	}
}

// LOOP-5: a call of a tool the request lacks ends the run after one model call.
func TestAnUnknownToolEndsTheRun(t *testing.T) {
	s := &script{replies: []string{calling("delete_everything", `{}`)}}
	p := newPayments(s, nil, false)
	if _, err := p.generate(); err == nil || err.Error() != `tool "delete_everything" not found` || s.calls != 1 {
		t.Fatalf("expected the unknown tool's error out of Generate after 1 call; got %v after %d", err, s.calls)
	}
}

// ERR-1: a tool's error ends the run; the model is not asked again.
func TestAToolErrorEndsTheRun(t *testing.T) {
	s := &script{replies: []string{calling("transfer", `{"amount": 50}`)}}
	p := newPayments(s, errors.New("the disk is on fire"), false)
	_, err := p.generate()
	if err == nil || !strings.Contains(err.Error(), `tool "transfer" failed`) || !strings.Contains(err.Error(), "the disk is on fire") || s.calls != 1 {
		t.Fatalf("expected the tool's error out of Generate after 1 call; got %v after %d", err, s.calls)
	}
}

// ARGS-2, ARGS-3, ARGS-5: args that are not a JSON object, not JSON, or nested past encoding/json's
// limit end the run in the plugin; null fails the tool's schema. The tool never runs.
func TestArgsThatAreNotAnObjectEndTheRun(t *testing.T) {
	deep := strings.Repeat(`{"a": `, 100000) + "1" + strings.Repeat("}", 100000)
	cases := map[string]string{`[50, "Ann"]`: "could not parse tool args", `50`: "could not parse tool args",
		`not json at all`: "could not parse tool args", `{'amount': 50}`: "could not parse tool args",
		deep: "exceeded max depth", `null`: "did not match expected schema"}
	for arguments, want := range cases {
		s := &script{replies: []string{calling("transfer", arguments)}}
		p := newPayments(s, nil, false)
		if _, err := p.generate(); err == nil || !strings.Contains(err.Error(), want) || len(p.received) != 0 || s.calls != 1 {
			t.Fatalf("expected %q out of Generate, the tool not run, for %.40s; got %v, %v", want, arguments, err, p.received)
		}
	}
}

// ARGS-4, ARGS-6: args that break the input schema end the run; the tool never runs.
func TestSchemaBreakingArgsEndTheRun(t *testing.T) {
	for _, arguments := range []string{`{"amount": "fifty"}`, `{}`, `{"amount": 50.5}`, `{"amount": 50, "memo": "rent"}`} {
		s := &script{replies: []string{calling("transfer", arguments)}}
		p := newPayments(s, nil, false)
		if _, err := p.generate(); err == nil || !strings.Contains(err.Error(), `tool "transfer" failed`) || len(p.received) != 0 || s.calls != 1 {
			t.Fatalf("expected the schema's refusal out of Generate, the tool not run, for %s; got %v, %v", arguments, err, p.received)
		}
	}
}

// ARGS-1: a key whose value is null is dropped before the tool runs.
func TestNullValuedKeysAreDropped(t *testing.T) {
	s := &script{replies: []string{calling("transfer", `{"amount": 5, "note": {"": null, "why": "rent"}}`)}}
	p := newPayments(s, nil, false)
	if _, err := p.generate(); err != nil || len(p.received) != 1 {
		t.Fatalf("expected one run of the tool; got %v, %v", err, p.received)
	}
	note := p.received[0].(map[string]any)["note"].(map[string]any)
	if _, kept := note[""]; kept || note["why"] != "rent" {
		t.Fatalf("expected the null-valued key dropped; the tool received %v", p.received[0])
	}
}

func paused(t *testing.T, s *script, p *payments) *ai.ModelResponse {
	t.Helper()
	response, err := p.generate()
	if err != nil || response.FinishReason != "interrupted" || len(response.Interrupts()) != 1 {
		t.Fatalf("expected a pause on the transfer; got %v, %v", response, err)
	}
	return response
}

// HITL-4: answering the interrupted call of a tool whose output type is any with a string is refused.
func TestAStringAnswerToAnAnyToolIsRefused(t *testing.T) {
	s := &script{replies: []string{calling("transfer", `{"amount": 50}`)}}
	p := newPayments(s, nil, true)
	response := paused(t, s, p)
	answer, err := p.transfer.RespondWith(response.Interrupts()[0], "The person refused this call.")
	if err != nil {
		t.Fatal(err)
	}
	_, err = genkit.Generate(context.Background(), p.g, ai.WithModelName("openai/gpt-4o-mini"), ai.WithTools(p.transfer),
		ai.WithMessages(response.History()...), ai.WithToolResponses(answer))
	if err == nil || !strings.Contains(err.Error(), "output validation failed") || !strings.Contains(err.Error(), "Expected: object, given: string") {
		t.Fatalf("expected the output validation's refusal; got %v", err)
	}
}

// HITL-6, HITL-8: the same pause resumed twice runs the tool twice, and another instance's tool of
// the same name resumes it too.
func TestAPauseResumedAgainRunsTheToolAgain(t *testing.T) {
	s := &script{replies: []string{calling("transfer", `{"amount": 50}`)}}
	p := newPayments(s, nil, true)
	saved, err := json.Marshal(paused(t, s, p).History())
	if err != nil {
		t.Fatal(err)
	}
	other := newPayments(s, nil, true)
	for _, resumer := range []*payments{p, p, other} {
		var messages []*ai.Message
		if err := json.Unmarshal(saved, &messages); err != nil {
			t.Fatal(err)
		}
		part := messages[len(messages)-1].Content[0]
		restart, err := resumer.transfer.RestartWith(part)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := genkit.Generate(context.Background(), resumer.g, ai.WithModelName("openai/gpt-4o-mini"), ai.WithTools(resumer.transfer),
			ai.WithMessages(messages...), ai.WithToolRestarts(restart)); err != nil {
			t.Fatal(err)
		}
	}
	if len(p.received) != 2 || len(other.received) != 1 {
		t.Fatalf("expected the tool run on each resume; got %v and %v", p.received, other.received)
	}
}

// NET-1: the plugin's openai-go client sends its requests with no timeout of its own.
func TestTheClientHasNoRequestTimeout(t *testing.T) {
	s := &script{}
	p := newPayments(s, nil, false)
	if _, err := p.generate(); err != nil || len(s.deadlines) != 1 || s.deadlines[0] {
		t.Fatalf("expected one request with no deadline; got %v, %v", s.deadlines, err)
	}
}
