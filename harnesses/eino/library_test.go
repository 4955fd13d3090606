package main

// The known failures of harness.go, checked against Eino itself: its ReAct agent driven with a plain
// model.ToolCallingChatModel and a NewTool tool, no suite, no harness (go test in this folder).

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/cloudwego/eino/components/model"
	"github.com/cloudwego/eino/components/tool"
	"github.com/cloudwego/eino/components/tool/utils"
	"github.com/cloudwego/eino/compose"
	"github.com/cloudwego/eino/flow/agent/react"
	"github.com/cloudwego/eino/schema"
)

// scriptedModel answers each Generate with the next reply (a final answer once they run out).
type scriptedModel struct {
	next  []*schema.Message
	calls int
}

func (m *scriptedModel) Generate(context.Context, []*schema.Message, ...model.Option) (*schema.Message, error) {
	m.calls++
	if len(m.next) == 0 {
		return schema.AssistantMessage("done", nil), nil
	}
	reply := m.next[0]
	m.next = m.next[1:]
	return reply, nil
}

func (m *scriptedModel) Stream(context.Context, []*schema.Message, ...model.Option) (*schema.StreamReader[*schema.Message], error) {
	return nil, errors.New("not streamed")
}

func (m *scriptedModel) WithTools([]*schema.ToolInfo) (model.ToolCallingChatModel, error) {
	return m, nil
}

func calling(name, arguments string) *schema.Message {
	return schema.AssistantMessage("", []schema.ToolCall{{ID: "call_1", Type: "function",
		Function: schema.FunctionCall{Name: name, Arguments: arguments}}})
}

// transfer is a NewTool tool that keeps the arguments its function receives, and fails with err.
func transfer(received *[]map[string]any, err error) tool.BaseTool {
	info := &schema.ToolInfo{Name: "transfer", Desc: "Send money.", ParamsOneOf: schema.NewParamsOneOfByParams(
		map[string]*schema.ParameterInfo{"amount": {Type: schema.Integer, Required: true}})}
	return utils.NewTool(info, func(_ context.Context, args map[string]any) (string, error) {
		*received = append(*received, args)
		return "sent", err
	})
}

func run(t *testing.T, llm *scriptedModel, maxStep int, tools ...tool.BaseTool) error {
	t.Helper()
	built, err := react.NewAgent(context.Background(), &react.AgentConfig{ToolCallingModel: llm,
		ToolsConfig: compose.ToolsNodeConfig{Tools: tools}, MaxStep: maxStep})
	if err != nil {
		t.Fatal(err)
	}
	_, err = built.Generate(context.Background(), []*schema.Message{schema.UserMessage("Pay Ann")})
	return err
}

// ERR-1: a tool's error is returned out of Generate at once; the model is not asked again.
func TestAToolErrorEndsTheRun(t *testing.T) {
	received := []map[string]any{}
	llm := &scriptedModel{next: []*schema.Message{calling("transfer", `{"amount": 50}`)}}
	err := run(t, llm, 10, transfer(&received, errors.New("the disk is on fire")))
	if err == nil || !strings.Contains(err.Error(), "the disk is on fire") || llm.calls != 1 {
		t.Fatalf("expected the tool's error out of the run after 1 model call; got %v after %d", err, llm.calls)
	}
}

// ARGS-2, ARGS-3, ARGS-5: sonic refuses the arguments before the function runs, and that ends the run.
func TestRefusedArgumentsEndTheRun(t *testing.T) {
	deep := strings.Repeat(`{"a": `, 5000) + "1" + strings.Repeat("}", 5000)
	for _, arguments := range []string{`[50, "Ann"]`, `not json at all`, `{'amount': 50}`, deep} {
		received := []map[string]any{}
		llm := &scriptedModel{next: []*schema.Message{calling("transfer", arguments)}}
		err := run(t, llm, 10, transfer(&received, nil))
		if err == nil || !strings.Contains(err.Error(), "failed to unmarshal arguments") || len(received) != 0 || llm.calls != 1 {
			t.Fatalf("expected the unmarshal error out of the run, the function not run; got %v, %v", err, received)
		}
	}
}

// ARGS-4, ARGS-6: the declared schema is not checked: wrong-typed, missing and extra keys reach the function.
func TestTheSchemaIsNotChecked(t *testing.T) {
	for _, arguments := range []string{`{"amount": "fifty"}`, `{}`, `{"amount": 50, "memo": "rent"}`} {
		received := []map[string]any{}
		llm := &scriptedModel{next: []*schema.Message{calling("transfer", arguments)}}
		if err := run(t, llm, 10, transfer(&received, nil)); err != nil || len(received) != 1 {
			t.Fatalf("expected the function to run with %s; got %v (%v)", arguments, received, err)
		}
	}
}

// LOOP-5: a call of a tool the agent lacks ends the run.
func TestAnUnknownToolEndsTheRun(t *testing.T) {
	received := []map[string]any{}
	llm := &scriptedModel{next: []*schema.Message{calling("delete_everything", `{}`)}}
	err := run(t, llm, 10, transfer(&received, nil))
	if err == nil || !strings.Contains(err.Error(), "tool delete_everything not found in toolsNode indexes") {
		t.Fatalf("expected the unknown tool's error out of the run; got %v", err)
	}
}

// EXH-3: MaxStep 0 is the default cap (node count + 10), not a refusal.
func TestAZeroCapIsTheDefault(t *testing.T) {
	received := []map[string]any{}
	llm := &scriptedModel{next: []*schema.Message{calling("transfer", `{"amount": 1}`), calling("transfer", `{"amount": 2}`)}}
	if err := run(t, llm, 0, transfer(&received, nil)); err != nil || llm.calls != 3 || len(received) != 2 {
		t.Fatalf("expected a whole run of 3 model calls under MaxStep 0; got %d calls, %v", llm.calls, err)
	}
}
