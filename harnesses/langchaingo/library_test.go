package main

// The known failures of harness.go, checked against langchaingo itself: its Executor and its OpenAI
// functions agent driven with a plain llms.Model, no suite, no harness (go test in this folder).

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/tmc/langchaingo/agents"
	"github.com/tmc/langchaingo/chains"
	"github.com/tmc/langchaingo/llms"
	"github.com/tmc/langchaingo/tools"
)

// scriptedModel is a model that answers each GenerateContent with the next reply and keeps what it was shown.
type scriptedModel struct {
	next  []llms.ContentChoice
	shown [][]llms.MessageContent
}

func (m *scriptedModel) GenerateContent(_ context.Context, messages []llms.MessageContent, _ ...llms.CallOption) (*llms.ContentResponse, error) {
	m.shown = append(m.shown, messages)
	reply := m.next[0]
	m.next = m.next[1:]
	return &llms.ContentResponse{Choices: []*llms.ContentChoice{&reply}}, nil
}

func (m *scriptedModel) Call(ctx context.Context, prompt string, options ...llms.CallOption) (string, error) {
	return llms.GenerateFromSinglePrompt(ctx, m, prompt, options...)
}

func calling(thought, name, arguments string) llms.ContentChoice {
	return llms.ContentChoice{Content: thought, ToolCalls: []llms.ToolCall{{ID: "call_1", Type: "function",
		FunctionCall: &llms.FunctionCall{Name: name, Arguments: arguments}}}}
}

// recording is a tool that keeps each input it is handed and answers with answer, or fails with err.
type recording struct {
	inputs []string
	err    error
}

func (r *recording) Name() string        { return "transfer" }
func (r *recording) Description() string { return "Send money." }
func (r *recording) Call(_ context.Context, input string) (string, error) {
	r.inputs = append(r.inputs, input)
	return "sent", r.err
}

func run(model *scriptedModel, tool tools.Tool) (map[string]any, error) {
	executor := agents.NewExecutor(agents.NewOpenAIFunctionsAgent(model, []tools.Tool{tool}), agents.WithMaxIterations(3))
	return chains.Call(context.Background(), executor, map[string]any{"input": "Pay Ann"})
}

// ERR-1: a tool's error is returned out of Executor.Call at once; the model is not asked again.
func TestAToolErrorEndsTheRun(t *testing.T) {
	failure := errors.New("the disk is on fire")
	model := &scriptedModel{next: []llms.ContentChoice{calling("", "transfer", `{"amount": 50}`), {Content: "done"}}}
	_, err := run(model, &recording{err: failure})
	if !errors.Is(err, failure) || len(model.shown) != 1 {
		t.Fatalf("expected the tool's error out of the run after 1 model call; got %v after %d", err, len(model.shown))
	}
}

// ARGS-2, ARGS-3, ARGS-4, ARGS-6: the arguments reach Tool.Call as the model wrote them, object or not,
// JSON or not, of any type (ParseOutput keeps the raw text when it holds no __arg1).
func TestArgumentsReachTheToolAsWritten(t *testing.T) {
	for _, arguments := range []string{`[50, "Ann"]`, `null`, `{amount: 50}`, `not json at all`, `{"amount": "fifty"}`,
		`{"amount": 50, "recipient": "Ann", "memo": "rent"}`} {
		tool := &recording{}
		model := &scriptedModel{next: []llms.ContentChoice{calling("", "transfer", arguments), {Content: "done"}}}
		if _, err := run(model, tool); err != nil || len(tool.inputs) != 1 || tool.inputs[0] != arguments {
			t.Fatalf("expected the tool to run once with %q; got %q (%v)", arguments, tool.inputs, err)
		}
	}
}

// STEP-3: the text the model wrote beside a tool call is not in the next request: constructScratchPad
// keeps it in the AIChatMessage's content, and Plan sends only the tool-call parts of such a message.
func TestTheThoughtBesideAToolCallIsNotShownAgain(t *testing.T) {
	model := &scriptedModel{next: []llms.ContentChoice{calling("I will add two numbers", "transfer", `{"amount": 50}`), {Content: "done"}}}
	if _, err := run(model, &recording{}); err != nil || len(model.shown) != 2 {
		t.Fatalf("expected 2 model calls and a final answer; got %d (%v)", len(model.shown), err)
	}
	for _, message := range model.shown[1] {
		for _, part := range message.Parts {
			if text, ok := part.(llms.TextContent); ok && strings.Contains(text.Text, "I will add two numbers") {
				t.Fatalf("the thought was shown in the second request: %q", text.Text)
			}
		}
	}
}

// EXH-1: the cap's error text says the agent did not finish, and names no limit being reached.
func TestTheCapErrorSaysNotFinished(t *testing.T) {
	model := &scriptedModel{next: []llms.ContentChoice{calling("", "transfer", `{}`), calling("", "transfer", `{}`),
		calling("", "transfer", `{}`)}}
	_, err := run(model, &recording{})
	if !errors.Is(err, agents.ErrNotFinished) || err.Error() != "agent not finished before max iterations" {
		t.Fatalf("expected ErrNotFinished; got %v", err)
	}
}
