package main

// The known failures of harness.go, checked against the SDK itself: its tool runner over a client
// whose requests a plain scripted transport answers (canned Messages API replies), and a
// toolrunner tool, no suite and no harness (go test in this folder).

import (
	"context"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"
	"github.com/anthropics/anthropic-sdk-go/v2/toolrunner"
)

// script answers each request with the next reply's content (a final answer once they run out).
type script struct {
	lock    sync.Mutex
	replies []string // each a message's content JSON
	calls   int
}

func (s *script) RoundTrip(request *http.Request) (*http.Response, error) {
	s.lock.Lock()
	defer s.lock.Unlock()
	s.calls++
	content, stop := `[{"type": "text", "text": "done"}]`, "end_turn"
	if len(s.replies) > 0 {
		content, s.replies, stop = s.replies[0], s.replies[1:], "tool_use"
	}
	body := `{"id": "msg_` + strings.Repeat("1", s.calls) + `", "type": "message", "role": "assistant", "model": "claude-haiku-5-5", ` +
		`"stop_sequence": null, "content": ` + content + `, "stop_reason": "` + stop + `", "usage": {"input_tokens": 0, "output_tokens": 0}}`
	return &http.Response{StatusCode: 200, Status: "200 OK", Header: http.Header{"Content-Type": {"application/json"}},
		Body: io.NopCloser(strings.NewReader(body)), Request: request, ProtoMajor: 1, ProtoMinor: 1}, nil
}

func using(input string) string {
	return `[{"type": "tool_use", "id": "toolu_1", "name": "transfer", "input": ` + input + `}]`
}

// run runs the runner with a transfer tool of a declared schema that keeps the input it receives.
func run(t *testing.T, s *script, maxIterations int) (*anthropic.BetaMessage, []map[string]any, error) {
	t.Helper()
	received := []map[string]any{}
	transfer, err := toolrunner.NewBetaToolFromBytes("transfer", "Send money.",
		[]byte(`{"type": "object", "properties": {"amount": {"type": "integer"}}, "required": ["amount"], "additionalProperties": false}`),
		func(_ context.Context, input map[string]any) (anthropic.BetaToolResultBlockParamContentUnion, error) {
			received = append(received, input)
			return anthropic.BetaToolResultBlockParamContentUnion{OfText: &anthropic.BetaTextBlockParam{Text: "sent"}}, nil
		})
	if err != nil {
		t.Fatal(err)
	}
	client := anthropic.NewClient(option.WithAPIKey("placeholder-key"), option.WithHTTPClient(&http.Client{Transport: s}))
	runner := client.Beta.Messages.NewToolRunner([]anthropic.BetaTool{transfer}, anthropic.BetaToolRunnerParams{
		BetaMessageNewParams: anthropic.BetaMessageNewParams{Model: "claude-haiku-5-5", MaxTokens: 1024,
			Messages: []anthropic.BetaMessageParam{anthropic.NewBetaUserMessage(anthropic.NewBetaTextBlock("Pay Ann"))}},
		MaxIterations: maxIterations})
	last, err := runner.RunToCompletion(context.Background())
	return last, received, err
}

// LOOP-3: MaxIterations 2 ends the run after 2 replies without running the second reply's tools.
func TestTheCapDropsTheLastReplysTools(t *testing.T) {
	s := &script{replies: []string{using(`{"amount": 1}`), using(`{"amount": 2}`), using(`{"amount": 3}`)}}
	last, received, err := run(t, s, 2)
	if err != nil || s.calls != 2 || len(received) != 1 || last == nil || last.StopReason != "tool_use" {
		t.Fatalf("expected 2 calls, 1 tool run and the last reply returned; got %d calls, %v, %v", s.calls, received, err)
	}
}

// ARGS-4, ARGS-6: the declared schema is not checked: wrong-typed, missing and extra keys reach the tool.
func TestTheSchemaIsNotChecked(t *testing.T) {
	for _, input := range []string{`{"amount": "fifty"}`, `{}`, `{"amount": 50, "memo": "rent"}`} {
		s := &script{replies: []string{using(input)}}
		if _, received, err := run(t, s, 0); err != nil || len(received) != 1 {
			t.Fatalf("expected the tool to run with %s; got %v (%v)", input, received, err)
		}
	}
}

// ARGS-5: a reply whose tool input is nested past encoding/json's depth ends the run unparsed.
func TestDeeplyNestedArgsEndTheRun(t *testing.T) {
	deep := strings.Repeat(`{"a": `, 100000) + "1" + strings.Repeat("}", 100000)
	s := &script{replies: []string{using(deep)}}
	if _, received, err := run(t, s, 0); err == nil || !strings.Contains(err.Error(), "exceeded max depth") || len(received) != 0 {
		t.Fatalf("expected the reply refused as too deep; got %v, %v", received, err)
	}
}
