package protocol

// MessagesEndpoint's translation, held to the shapes conformance/_messages_api.py gives the same
// request and reply (go test in this folder; tests/suite/test_protocol_modules.py runs it).

import (
	"encoding/json"
	"strings"
	"testing"
)

func decoded(t *testing.T, text string) Object {
	t.Helper()
	var value Object
	decoder := json.NewDecoder(strings.NewReader(text))
	decoder.UseNumber()
	if err := decoder.Decode(&value); err != nil {
		t.Fatal(err)
	}
	return value
}

func jsonText(t *testing.T, value any) string {
	t.Helper()
	text, err := json.Marshal(value)
	if err != nil {
		t.Fatal(err)
	}
	return string(text)
}

// A request shows as chat_body shows it: system first, tool results as tool messages, an
// assistant's text and tool_use blocks as one message with its calls; only client tools declared.
func TestARequestShowsAsChatMessages(t *testing.T) {
	body := decoded(t, `{"model": "m", "system": [{"type": "text", "text": "Be brief."}], "messages": [
		{"role": "user", "content": "What is 2 + 3?"},
		{"role": "assistant", "content": [{"type": "text", "text": "I will add"},
			{"type": "tool_use", "id": "toolu_1", "name": "add", "input": {"a": 2, "b": 3}}]},
		{"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": [{"type": "text", "text": "5"}]}]}],
		"tools": [{"name": "add", "description": "Add.", "input_schema": {"type": "object"}}, {"type": "web_search_20250305", "name": "web"}]}`)
	shown := jsonText(t, messagesShown(body))
	want := `[{"content":"Be brief.","role":"system"},{"content":"What is 2 + 3?","role":"user"},` +
		`{"content":"I will add\n[{\"function\":{\"arguments\":\"{\\\"a\\\":2,\\\"b\\\":3}\",\"name\":\"add\"},\"id\":\"toolu_1\",\"type\":\"function\"}]","role":"assistant"},` +
		`{"content":"5","role":"tool"}]`
	if shown != want {
		t.Fatalf("shown as\n%s\nwant\n%s", shown, want)
	}
	tools := jsonText(t, messagesTools(body))
	if tools != `[{"function":{"description":"Add.","name":"add","parameters":{"type":"object"}},"type":"function"}]` {
		t.Fatalf("tools declared as %s", tools)
	}
}

// A reply is a `message`: text, then each call as a tool_use block whose input is the object, the
// text of arguments that are not an object, or arguments nested past encoding/json spliced in as
// written; stop_reason tool_use or end_turn.
func TestAReplyIsAMessage(t *testing.T) {
	deep := strings.Repeat(`{"a": `, 20000) + "1" + strings.Repeat("}", 20000)
	chat := Object{"role": "assistant", "content": "I will add", "tool_calls": []any{
		Object{"id": "call_3", "function": Object{"name": "add", "arguments": `{"a": 2}`}},
		Object{"id": "call_3_1", "function": Object{"name": "add", "arguments": `[2, 3]`}},
		Object{"id": "call_3_2", "function": Object{"name": "add", "arguments": deep}}}}
	message, verbatim := messagesReply(Object{"model": "m"}, chat, 3)
	text, err := spliced(message, verbatim)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(text), `"input":`+deep+`,`) {
		t.Fatalf("the deep arguments are not spliced in as written")
	}
	shallow := strings.Replace(string(text), deep, `"deep"`, 1)
	want := `{"content":[{"text":"I will add","type":"text"},{"id":"toolu_3","input":{"a":2},"name":"add","type":"tool_use"},` +
		`{"id":"toolu_3_1","input":"[2, 3]","name":"add","type":"tool_use"},{"id":"toolu_3_2","input":"deep","name":"add","type":"tool_use"}],` +
		`"id":"msg_3","model":"m","role":"assistant","stop_reason":"tool_use","stop_sequence":null,"type":"message","usage":{"input_tokens":0,"output_tokens":0}}`
	if shallow != want {
		t.Fatalf("replied\n%s\nwant\n%s", shallow, want)
	}
	final, _ := messagesReply(Object{}, Object{"role": "assistant", "content": "5"}, 4)
	if final["stop_reason"] != "end_turn" || final["model"] != "scripted" {
		t.Fatalf("a final reply is %v", final)
	}
}

// A streamed reply is the events the real API sends, in _messages_api.py's order.
func TestAStreamedReplyIsItsEvents(t *testing.T) {
	message, _ := messagesReply(Object{"model": "m"}, Object{"role": "assistant", "content": "I will add",
		"tool_calls": []any{Object{"id": "call_1", "function": Object{"name": "add", "arguments": `{"a": 2}`}}}}, 1)
	events, err := messagesEvents(message)
	if err != nil {
		t.Fatal(err)
	}
	var kinds []string
	for _, line := range strings.Split(string(events), "\n") {
		if strings.HasPrefix(line, "event: ") {
			kinds = append(kinds, strings.TrimPrefix(line, "event: "))
		}
	}
	want := "message_start content_block_start content_block_delta content_block_stop content_block_start " +
		"content_block_delta content_block_stop message_delta message_stop"
	if strings.Join(kinds, " ") != want || !strings.Contains(string(events), `"partial_json":"{\"a\":2}"`) {
		t.Fatalf("streamed as %v:\n%s", kinds, events)
	}
}

// A thread's `continue` stands for the held fields and messages, then its own; an unknown one is refused.
func TestAThreadIsExpandedFromWhatWasHeld(t *testing.T) {
	e := &MessagesEndpoint{}
	first := decoded(t, `{"thread": {"type": "create"}, "system": "Be brief.", "tools": [{"name": "add"}],
		"messages": [{"role": "user", "content": "Hi"}]}`)
	e.hold(first, Object{"id": "msg_1", "content": []any{Object{"type": "text", "text": "Hello"}}})
	whole, found := e.expand(decoded(t, `{"thread": {"type": "continue", "previous_message_id": "msg_1"},
		"messages": [{"role": "user", "content": "Again"}]}`))
	if !found || whole["system"] != "Be brief." || len(asList(whole["tools"])) != 1 || len(asList(whole["messages"])) != 3 ||
		asObject(asList(whole["messages"])[1])["role"] != "assistant" {
		t.Fatalf("expanded to %v", whole)
	}
	if _, found := e.expand(decoded(t, `{"thread": {"type": "continue", "previous_message_id": "msg_9"}}`)); found {
		t.Fatal("an unknown previous message was expanded")
	}
}
