package protocol

// An OpenAI chat-completions endpoint in process, for a harness whose library talks to its model
// through its own OpenAI client: give the client an Endpoint as its HTTP client (a Doer) or as its
// http.Client's Transport, and every request the library builds goes to the suite as an LMCall and
// is answered with the chat.completion JSON (server-sent chunks when the body asks to stream), the
// HTTP status or the failed request an endpoint would give (as conformance/server.py answers). The library's own request building and reply
// parsing run as in a user's run.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
)

// Endpoint answers chat-completions requests from the script of the run the request's context
// carries. One Endpoint per run numbers its replies' tool calls from 1.
type Endpoint struct {
	replies atomic.Int64
	// Timeout is the client's own request timeout in seconds, nil without one: what a `hang` fault
	// (a request that never gets an answer) waits for, on the run's model clock.
	Timeout *float64
}

// Do answers one request (the Doer interface some clients take).
func (e *Endpoint) Do(request *http.Request) (*http.Response, error) {
	body, err := requestBody(request, "OpenAI")
	if err != nil {
		return nil, err
	}
	stream, _ := body["stream"].(bool)
	messages := []any{}
	for _, m := range asList(body["messages"]) {
		messages = append(messages, shownMessage(asObject(m)))
	}
	var declared any
	if tools := asList(body["tools"]); len(tools) > 0 {
		declared = tools
	}
	call := Object{"kind": "step", "adapter": "native", "messages": messages, "tools": declared}
	jsonHeader := http.Header{"Content-Type": {"application/json"}}
	turn, err := AskModel(request.Context(), call)
	if errors.Is(err, ErrUnexpectedModelCall) {
		// Not scripted: answer as the suite's endpoint does, 400 (not transient).
		text, _ := json.Marshal(Object{"error": Object{"message": err.Error()}})
		return httpResponse(http.StatusBadRequest, jsonHeader, text, request), nil
	}
	if err != nil {
		return nil, err
	}
	if turn["kind"] == "fault" {
		return e.fault(request, turn)
	}
	number := e.replies.Add(1)
	reply := assistantMessage(turn, number)
	finish := "stop"
	if reply["tool_calls"] != nil {
		finish = "tool_calls"
	}
	if stream {
		text, err := streamed(reply, number, finish)
		if err != nil {
			return nil, err
		}
		return httpResponse(http.StatusOK, http.Header{"Content-Type": {"text/event-stream"}}, text, request), nil
	}
	text, err := json.Marshal(Object{"id": "chatcmpl-" + strconv.FormatInt(number, 10), "object": "chat.completion",
		"created": 0, "model": body["model"], "choices": []any{Object{"index": 0, "message": reply, "finish_reason": finish}},
		"usage": Object{"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0}})
	if err != nil {
		return nil, err
	}
	return httpResponse(http.StatusOK, jsonHeader, text, request), nil
}

// Replies is how many replies the endpoint has answered with so far: the model calls a run made.
func (e *Endpoint) Replies() int64 { return e.replies.Load() }

// streamed is the reply as server-sent chat.completion.chunk events, as conformance/server.py
// streams it: the content in pieces, then each tool call, then the finish reason.
func streamed(reply Object, number int64, finish string) ([]byte, error) {
	var events strings.Builder
	chunk := func(delta Object, finishReason any) error {
		text, err := json.Marshal(Object{"id": "chatcmpl-" + strconv.FormatInt(number, 10), "object": "chat.completion.chunk",
			"created": 0, "model": "scripted", "choices": []any{Object{"index": 0, "delta": delta, "finish_reason": finishReason}}})
		events.WriteString("data: " + string(text) + "\n\n")
		return err
	}
	if err := chunk(Object{"role": "assistant", "content": ""}, nil); err != nil {
		return nil, err
	}
	text, _ := reply["content"].(string)
	content := []rune(text) // pieces of characters, as server.py's, never a split UTF-8 sequence
	for start := 0; start < len(content); start += 16 {
		if err := chunk(Object{"content": string(content[start:min(start+16, len(content))])}, nil); err != nil {
			return nil, err
		}
	}
	for index, c := range asList(reply["tool_calls"]) {
		call := Object{"index": index}
		for k, v := range asObject(c) {
			call[k] = v
		}
		if err := chunk(Object{"tool_calls": []any{call}}, nil); err != nil {
			return nil, err
		}
	}
	if err := chunk(Object{}, finish); err != nil {
		return nil, err
	}
	events.WriteString("data: [DONE]\n\n")
	return []byte(events.String()), nil
}

// requestBody is a request's JSON body, its numbers kept as their text.
func requestBody(request *http.Request, client string) (Object, error) {
	raw, err := io.ReadAll(request.Body)
	if err != nil {
		return nil, err
	}
	var body Object
	decoder := json.NewDecoder(strings.NewReader(string(raw)))
	decoder.UseNumber()
	if err := decoder.Decode(&body); err != nil {
		return nil, fmt.Errorf("the %s client sent a body that is not JSON: %w", client, err)
	}
	return body, nil
}

// RoundTrip answers one request (an http.Client's Transport).
func (e *Endpoint) RoundTrip(request *http.Request) (*http.Response, error) { return e.Do(request) }

// fault is a scripted fault as the transport gives it: an HTTP status, or a failed request.
func (e *Endpoint) fault(request *http.Request, turn Object) (*http.Response, error) {
	status, header, body, err := faultAnswer(request, turn, e.Timeout)
	if err != nil {
		return nil, err
	}
	return httpResponse(status, header, body, request), nil
}

// faultAnswer is a scripted fault's HTTP status, headers and body; an error for a request that
// fails instead (a reset connection, or a timeout: a `hang` first sends its notice with timeout,
// the client's own request timeout).
func faultAnswer(request *http.Request, turn Object, timeout *float64) (int, http.Header, []byte, error) {
	switch turn["fault"] {
	case "connection":
		return 0, nil, nil, errors.New("scripted connection reset: read: connection reset by peer")
	case "timeout", "hang":
		// A request that gets no answer waits for the client's timeout (or, with none, for the
		// caller's context): the harness fails it as that deadline would.
		if turn["fault"] == "hang" {
			if err := NotifyHang(request.Context(), timeout); err != nil {
				return 0, nil, nil, err
			}
		}
		return 0, nil, nil, context.DeadlineExceeded
	}
	return FaultResponse(turn)
}

// shownMessage is a chat-completions message as the model sees it: its text, and an assistant's
// tool calls as their JSON.
func shownMessage(message Object) Object {
	parts := []string{}
	switch content := message["content"].(type) {
	case string:
		parts = append(parts, content)
	case []any:
		for _, part := range content {
			text, _ := asObject(part)["text"].(string)
			parts = append(parts, text)
		}
	}
	if calls := asList(message["tool_calls"]); len(calls) > 0 {
		text, _ := json.Marshal(calls)
		parts = append(parts, string(text))
	}
	return Object{"role": message["role"], "content": strings.Join(parts, "\n")}
}

// assistantMessage is a turn as the assistant message the endpoint answers with
// (render.openai_message): a step's calls, in order, or a final turn's reply text.
func assistantMessage(turn Object, number int64) Object {
	if turn["kind"] != "step" {
		return Object{"role": "assistant", "content": ReplyText(asObject(turn["outputs"]))}
	}
	calls := []any{}
	for i, c := range append([]any{turn}, asList(turn["parallel"])...) {
		call := asObject(c)
		args, raw := call["raw_tool_args"].(string)
		if !raw {
			args = Text(call["tool_args"])
		}
		id := "call_" + strconv.FormatInt(number, 10)
		if i > 0 {
			id += "_" + strconv.Itoa(i)
		}
		calls = append(calls, Object{"id": id, "type": "function",
			"function": Object{"name": call["tool_name"], "arguments": args}})
	}
	var content any
	if thought, _ := turn["thought"].(string); thought != "" {
		content = thought
	}
	return Object{"role": "assistant", "content": content, "tool_calls": calls}
}

func httpResponse(status int, header http.Header, body []byte, request *http.Request) *http.Response {
	return &http.Response{StatusCode: status, Status: fmt.Sprintf("%d %s", status, http.StatusText(status)),
		Header: header, Body: io.NopCloser(strings.NewReader(string(body))), ContentLength: int64(len(body)),
		Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1, Request: request}
}

func asList(value any) []any {
	list, _ := value.([]any)
	return list
}
