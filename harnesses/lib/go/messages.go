package protocol

// Anthropic's Messages API (POST .../messages) in process, for a harness whose library talks to its
// model through Anthropic's own client, as conformance/_messages_api.py translates it for the
// suite's endpoint: a request becomes the chat-completions messages and tools the scripted model
// reads, and the scripted turn becomes a `message` (or its server-sent events). Requests on a
// message thread (`thread: {"type": "create"}`, then `{"type": "continue", "previous_message_id"}`
// with only the new messages), which Anthropic's SDKs send by default, are expanded from the
// conversation the endpoint holds.

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
)

// createOnly are the fields a thread takes from the request that created it: a `continue` leaves
// them out.
var createOnly = []string{"system", "tools"}

// messagesErrors is the error `type` the real API sends with each status.
var messagesErrors = map[int]string{400: "invalid_request_error", 401: "authentication_error", 404: "not_found_error",
	413: "request_too_large", 429: "rate_limit_error", 500: "api_error", 503: "overloaded_error", 504: "api_error",
	529: "overloaded_error"}

// MessagesEndpoint answers Messages API requests from the script of the run the request's context
// carries: give the client an http.Client whose Transport is a MessagesEndpoint. One per run.
type MessagesEndpoint struct {
	replies atomic.Int64
	// Timeout is the client's own request timeout in seconds, nil without one (as Endpoint's);
	// when nil, the X-Stainless-Timeout header of the request says it, as Anthropic's SDKs send it.
	Timeout *float64
	lock    sync.Mutex
	held    map[string]Object // by reply id: the thread's create-only fields and its messages
}

// Replies is how many replies the endpoint has answered with so far: the model calls a run made.
func (e *MessagesEndpoint) Replies() int64 { return e.replies.Load() }

// RoundTrip answers one request.
func (e *MessagesEndpoint) RoundTrip(request *http.Request) (*http.Response, error) {
	jsonHeader := http.Header{"Content-Type": {"application/json"}}
	if !strings.HasSuffix(request.URL.Path, "/messages") {
		return e.refuse(request, http.StatusNotFound, "this endpoint serves the Messages API (POST .../messages) only, not "+request.URL.Path, nil)
	}
	body, err := requestBody(request, "Anthropic")
	if err != nil {
		return nil, err
	}
	body, found := e.expand(body)
	if !found {
		previous := asObject(body["thread"])["previous_message_id"]
		return e.refuse(request, http.StatusNotFound, fmt.Sprintf("no thread holds the message %v: replay the conversation with thread: {'type': 'create'}", previous),
			Object{"error_code": "thread_not_found"})
	}
	call := Object{"kind": "step", "adapter": "native", "messages": messagesShown(body), "tools": messagesTools(body)}
	turn, err := AskModel(request.Context(), call)
	if errors.Is(err, ErrUnexpectedModelCall) {
		return e.refuse(request, http.StatusBadRequest, err.Error(), nil)
	}
	if err != nil {
		return nil, err
	}
	if turn["kind"] == "fault" {
		timeout := e.Timeout
		if seconds, err := strconv.ParseFloat(request.Header.Get("X-Stainless-Timeout"), 64); timeout == nil && err == nil {
			timeout = &seconds
		}
		status, header, text, err := faultAnswer(request, turn, timeout)
		if err != nil {
			return nil, err
		}
		var reason Object
		_ = json.Unmarshal(text, &reason)
		message, _ := asObject(reason["error"])["message"].(string)
		if text, err = json.Marshal(messagesError(status, message, nil)); err != nil {
			return nil, err
		}
		return httpResponse(status, header, text, request), nil
	}
	number := e.replies.Add(1)
	message, verbatim := messagesReply(body, assistantMessage(turn, number), number)
	e.hold(body, message)
	if stream, _ := body["stream"].(bool); stream {
		text, err := messagesEvents(message)
		if err != nil {
			return nil, err
		}
		return httpResponse(http.StatusOK, http.Header{"Content-Type": {"text/event-stream"}}, text, request), nil
	}
	text, err := spliced(message, verbatim)
	if err != nil {
		return nil, err
	}
	return httpResponse(http.StatusOK, jsonHeader, text, request), nil
}

func (e *MessagesEndpoint) refuse(request *http.Request, status int, message string, details Object) (*http.Response, error) {
	text, err := json.Marshal(messagesError(status, message, details))
	if err != nil {
		return nil, err
	}
	return httpResponse(status, http.Header{"Content-Type": {"application/json"}}, text, request), nil
}

func messagesError(status int, message string, details Object) Object {
	kind, ok := messagesErrors[status]
	if !ok {
		kind = "invalid_request_error"
		if status >= 500 {
			kind = "api_error"
		}
	}
	inner := Object{"type": kind, "message": message}
	if details != nil {
		inner["details"] = details
	}
	return Object{"type": "error", "error": inner}
}

// expand is the whole request a `continue` stands for: the held fields and messages, then its own;
// false when no thread holds its previous message.
func (e *MessagesEndpoint) expand(body Object) (Object, bool) {
	thread := asObject(body["thread"])
	if thread == nil || thread["type"] != "continue" {
		return body, true
	}
	e.lock.Lock()
	held := e.held[fmt.Sprint(thread["previous_message_id"])]
	e.lock.Unlock()
	if held == nil {
		return body, false
	}
	whole := Object{}
	for k, v := range body {
		whole[k] = v
	}
	for k, v := range asObject(held["fields"]) {
		whole[k] = v
	}
	whole["messages"] = append(append([]any{}, asList(held["messages"])...), asList(body["messages"])...)
	return whole, true
}

// hold keeps the conversation of a threaded request (as expand returned it) and its reply.
func (e *MessagesEndpoint) hold(body Object, message Object) {
	if asObject(body["thread"]) == nil {
		return
	}
	fields := Object{}
	for _, f := range createOnly {
		if v, ok := body[f]; ok {
			fields[f] = v
		}
	}
	messages := append(append([]any{}, asList(body["messages"])...), Object{"role": "assistant", "content": message["content"]})
	e.lock.Lock()
	defer e.lock.Unlock()
	if e.held == nil {
		e.held = map[string]Object{}
	}
	e.held[fmt.Sprint(message["id"])] = Object{"fields": fields, "messages": messages}
}

// messagesShown is the request's system prompt and messages as the model sees them, in the
// chat-completions form Endpoint shows (tool_result blocks as tool messages, tool_use blocks as an
// assistant's tool calls).
func messagesShown(body Object) []any {
	shown := []any{}
	if system := blocksText(body["system"]); system != "" {
		shown = append(shown, Object{"role": "system", "content": system})
	}
	for _, m := range asList(body["messages"]) {
		message := asObject(m)
		blocks := asList(message["content"])
		if text, ok := message["content"].(string); ok {
			blocks = []any{Object{"type": "text", "text": text}}
		}
		var texts, calls []any
		results := 0
		for _, b := range blocks {
			block := asObject(b)
			switch block["type"] {
			case "tool_result":
				results++
				shown = append(shown, Object{"role": "tool", "content": blocksText(block["content"])})
			case "text":
				texts = append(texts, block)
			case "tool_use":
				calls = append(calls, Object{"id": block["id"], "type": "function",
					"function": Object{"name": block["name"], "arguments": inputArguments(block["input"])}})
			}
		}
		if text := blocksText(texts); text != "" || len(calls) > 0 || results == 0 {
			chat := Object{"role": message["role"], "content": text}
			if len(calls) > 0 {
				chat["tool_calls"] = calls
			}
			shown = append(shown, shownMessage(chat))
		}
	}
	return shown
}

// messagesTools are the request's client tools (those with an input_schema) as chat-completions tools.
func messagesTools(body Object) any {
	tools := []any{}
	for _, t := range asList(body["tools"]) {
		tool := asObject(t)
		if schema, ok := tool["input_schema"]; ok {
			description, _ := tool["description"].(string)
			tools = append(tools, Object{"type": "function", "function": Object{"name": tool["name"],
				"description": description, "parameters": schema}})
		}
	}
	if len(tools) == 0 {
		return nil
	}
	return tools
}

// blocksText is text content: a string as it is, or its text blocks joined.
func blocksText(content any) string {
	if text, ok := content.(string); ok {
		return text
	}
	var out strings.Builder
	for _, b := range asList(content) {
		text, _ := asObject(b)["text"].(string)
		out.WriteString(text)
	}
	return out.String()
}

// inputArguments is a tool_use block's input as chat-completions arguments: the text it arrived as
// when it is one, else the object as JSON.
func inputArguments(input any) string {
	switch text := input.(type) {
	case string:
		return text
	case verbatimInput:
		return string(text)
	}
	text, _ := json.Marshal(input)
	return string(text)
}

// verbatimInput is a tool_use input held as the text the script wrote: an object nested deeper
// than encoding/json goes, which the reply carries spliced in as written.
type verbatimInput string

// messagesReply is the chat-completions assistant message as a Messages `message`, and the
// arguments it carries verbatim. A tool_use input is the arguments' object, or, for arguments a
// scenario scripts as malformed JSON or not an object, their text (the real API never sends one;
// the scenario asks what a client does with it).
func messagesReply(body Object, chat Object, number int64) (Object, []string) {
	content := []any{}
	if text, _ := chat["content"].(string); text != "" {
		content = append(content, Object{"type": "text", "text": text})
	}
	var verbatim []string
	for _, c := range asList(chat["tool_calls"]) {
		call := asObject(c)
		function := asObject(call["function"])
		arguments, _ := function["arguments"].(string)
		var input any = arguments
		var value any
		decoder := json.NewDecoder(strings.NewReader(arguments))
		decoder.UseNumber()
		if err := decoder.Decode(&value); err == nil && !decoder.More() {
			if object, ok := value.(Object); ok {
				input = object
			}
		} else if strings.Contains(err.Error(), "exceeded max depth") {
			input = verbatimInput(arguments)
			verbatim = append(verbatim, arguments)
		}
		id := strings.TrimPrefix(fmt.Sprint(call["id"]), "call_")
		content = append(content, Object{"type": "tool_use", "id": "toolu_" + id, "name": function["name"], "input": input})
	}
	stop := "end_turn"
	if len(asList(chat["tool_calls"])) > 0 {
		stop = "tool_use"
	}
	model, ok := body["model"].(string)
	if !ok {
		model = "scripted"
	}
	return Object{"id": "msg_" + strconv.FormatInt(number, 10), "type": "message", "role": "assistant", "model": model,
		"stop_sequence": nil, "content": content, "stop_reason": stop, "usage": Object{"input_tokens": 0, "output_tokens": 0}}, verbatim
}

// spliced is value as JSON, each verbatim input written in as the script wrote it.
func spliced(value Object, verbatim []string) ([]byte, error) {
	marked := Object{}
	for k, v := range value {
		marked[k] = v
	}
	content := []any{}
	index := 0
	for _, b := range asList(value["content"]) {
		block := asObject(b)
		if _, ok := block["input"].(verbatimInput); ok {
			copied := Object{}
			for k, v := range block {
				copied[k] = v
			}
			copied["input"] = fmt.Sprintf("react-conformance-verbatim-%d", index)
			index++
			block = copied
		}
		content = append(content, block)
	}
	marked["content"] = content
	text, err := json.Marshal(marked)
	if err != nil {
		return nil, err
	}
	out := string(text)
	for i, written := range verbatim {
		out = strings.Replace(out, fmt.Sprintf(`"react-conformance-verbatim-%d"`, i), written, 1)
	}
	return []byte(out), nil
}

// messagesEvents are the streaming events the real API sends (as _messages_api.py's _events):
// message_start, each block's start, deltas (text, or the input's JSON text in input_json_delta)
// and stop, message_delta with the stop reason, message_stop.
func messagesEvents(message Object) ([]byte, error) {
	var out strings.Builder
	event := func(e Object) error {
		text, err := json.Marshal(e)
		out.WriteString("event: " + fmt.Sprint(e["type"]) + "\ndata: " + string(text) + "\n\n")
		return err
	}
	head := Object{}
	for k, v := range message {
		head[k] = v
	}
	head["content"], head["stop_reason"] = []any{}, nil
	events := []Object{{"type": "message_start", "message": head}}
	for index, b := range asList(message["content"]) {
		block := asObject(b)
		if block["type"] == "text" {
			events = append(events, Object{"type": "content_block_start", "index": index, "content_block": Object{"type": "text", "text": ""}})
			text := []rune(fmt.Sprint(block["text"]))
			for start := 0; start < len(text); start += 16 {
				events = append(events, Object{"type": "content_block_delta", "index": index,
					"delta": Object{"type": "text_delta", "text": string(text[start:min(start+16, len(text))])}})
			}
		} else {
			events = append(events, Object{"type": "content_block_start", "index": index,
				"content_block": Object{"type": "tool_use", "id": block["id"], "name": block["name"], "input": Object{}}})
			events = append(events, Object{"type": "content_block_delta", "index": index,
				"delta": Object{"type": "input_json_delta", "partial_json": inputArguments(block["input"])}})
		}
		events = append(events, Object{"type": "content_block_stop", "index": index})
	}
	events = append(events, Object{"type": "message_delta", "delta": Object{"stop_reason": message["stop_reason"], "stop_sequence": nil},
		"usage": Object{"output_tokens": 0}}, Object{"type": "message_stop"})
	for _, e := range events {
		if err := event(e); err != nil {
			return nil, err
		}
	}
	return []byte(out.String()), nil
}
