// Package tinyloop is a tiny native tool-calling loop, written for the suite's own tests (as
// tests/ruby/loop.rb is): the library a Go harness binds. The model is a function taking the
// messages and the tool declarations and returning a Reply; the loop runs tools until a reply
// calls none, or the step cap.
package tinyloop

import (
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"syscall"
)

// RepeatedErrors is how many consecutive similar tool failures (same tool, same error kind) stop the run.
const RepeatedErrors = 3

// ToolCall is one call in a reply; Arguments is JSON text.
type ToolCall struct{ ID, Name, Arguments string }

// Reply is the model's reply.
type Reply struct {
	Content   string
	ToolCalls []ToolCall
}

// Tool is a tool the loop may run.
type Tool struct {
	Name, Description string
	Schema            map[string]any
	Function          func(args map[string]any) (any, error)
}

// Step is one tool call of a run.
type Step struct {
	Thought, ToolName, Observation, CallID string
	ToolArgs                               any
	Failed                                 bool
}

// Result is a run's result.
type Result struct {
	Output     *string
	StopReason string
	StepsUsed  int
	Steps      []*Step
	Message    *string
	ToolErrors []string
}

// Edit is an approval callback's edited call.
type Edit struct {
	Name string
	Args any
}

// Agent is the loop. Approve answers a call of a tool in NeedsApproval: true runs it, false or a
// string rejects it, an Edit runs that call instead.
type Agent struct {
	Tools         []Tool
	Model         func(messages []map[string]any, tools []map[string]any) (Reply, error)
	Observer      func(tool, observation string) string
	NeedsApproval []string
	Approve       func(name string, args any, callID string) any
	MaxSteps      int
	Instructions  string
}

// ArgsError is a tool's arguments that cannot reach it.
type ArgsError struct{ Message string }

func (e *ArgsError) Error() string { return e.Message }

// Typed is a tool error with a type name of its own (a tool's exception name).
type Typed interface{ Kind() string }

func (a *Agent) declarations() []map[string]any {
	out := []map[string]any{}
	for _, t := range a.Tools {
		out = append(out, map[string]any{"type": "function", "function": map[string]any{
			"name": t.Name, "description": t.Description, "parameters": t.Schema}})
	}
	return out
}

// RunAsync is the async form: the run on a goroutine of the loop's own.
func (a *Agent) RunAsync(user string, maxSteps int) <-chan struct {
	Result *Result
	Err    error
} {
	done := make(chan struct {
		Result *Result
		Err    error
	}, 1)
	go func() {
		r, err := a.Run(user, maxSteps)
		done <- struct {
			Result *Result
			Err    error
		}{r, err}
	}()
	return done
}

// Run is one call with its own budget (maxSteps 0: the agent's).
func (a *Agent) Run(user string, maxSteps int) (*Result, error) {
	limit := maxSteps
	if limit == 0 {
		limit = a.MaxSteps
	}
	if limit < 1 {
		return nil, fmt.Errorf("max_steps must be at least 1, not %d", limit)
	}
	// A library that prints to stdout, as many do: the protocol module keeps it off the wire.
	fmt.Printf("tinyloop: a run with a cap of %d steps\n", limit)
	// (os.NewFile(1) would close fd 1 when collected: write to the descriptor itself.)
	_, _ = syscall.Write(1, []byte("tinyloop: (and through file descriptor 1)\n"))

	messages := []map[string]any{}
	if a.Instructions != "" {
		messages = append(messages, map[string]any{"role": "system", "content": a.Instructions})
	}
	messages = append(messages, map[string]any{"role": "user", "content": user})
	steps := []*Step{}
	tried := map[string]int{}
	var order []string
	var errs [][3]string
	var streak [][2]string
	completed := 0
	for step := 1; step <= limit; step++ {
		reply, err := a.Model(messages, a.declarations())
		if err != nil {
			return nil, err
		}
		calls := []any{}
		for _, c := range reply.ToolCalls {
			calls = append(calls, map[string]any{"id": c.ID, "name": c.Name, "arguments": c.Arguments})
		}
		messages = append(messages, map[string]any{"role": "assistant", "content": reply.Content, "tool_calls": calls})
		if len(reply.ToolCalls) == 0 {
			content := reply.Content
			return &Result{Output: &content, StopReason: "finish", StepsUsed: step, Steps: steps, ToolErrors: texts(errs)}, nil
		}
		for _, call := range reply.ToolCalls {
			observation, args, callErr, ran := a.execute(call, false)
			if a.Observer != nil {
				observation = a.Observer(call.Name, observation)
			}
			if ran {
				if tried[call.Name] == 0 {
					order = append(order, call.Name)
				}
				tried[call.Name]++
			}
			if callErr == nil {
				completed++
				streak = nil
			}
			steps = append(steps, &Step{Thought: reply.Content, ToolName: call.Name, ToolArgs: args,
				Observation: observation, Failed: callErr != nil, CallID: call.ID})
			messages = append(messages, map[string]any{"role": "tool", "tool_call_id": call.ID, "content": observation})
			if callErr == nil || !ran {
				continue
			}
			kind := [2]string{call.Name, errorKind(callErr)}
			errs = append(errs, [3]string{call.Name, kind[1], callErr.Error()})
			if len(streak) > 0 && streak[len(streak)-1] == kind {
				streak = append(streak, kind)
			} else {
				streak = [][2]string{kind}
			}
			if len(streak) < RepeatedErrors {
				continue
			}
			message := fmt.Sprintf("I stopped: the tool %s failed %d times in a row (%s). Please check its input, or try rephrasing the request.",
				call.Name, len(streak), callErr.Error())
			return &Result{StopReason: "repeated_tool_errors", StepsUsed: step, Steps: steps, Message: &message, ToolErrors: texts(errs)}, nil
		}
	}
	summary := []string{}
	for _, name := range order {
		summary = append(summary, fmt.Sprintf("ran %s %d×", name, tried[name]))
	}
	ran := strings.Join(summary, ", ")
	if ran == "" {
		ran = "ran no tool"
	}
	message := fmt.Sprintf("I reached the step cap (%d steps) without an answer: %s.", limit, ran)
	if len(errs) > 0 {
		message += fmt.Sprintf(" The last tool error: %s.", errs[len(errs)-1][2])
	}
	if completed == 0 {
		message += " No tool completed."
	}
	return &Result{StopReason: "max_steps", StepsUsed: limit, Steps: steps, Message: &message, ToolErrors: texts(errs)}, nil
}

func texts(errs [][3]string) []string {
	if len(errs) > 10 {
		errs = errs[len(errs)-10:]
	}
	out := []string{}
	for _, e := range errs {
		out = append(out, e[0]+": "+e[1]+": "+e[2])
	}
	return out
}

func errorKind(err error) string {
	var typed Typed
	if errors.As(err, &typed) {
		return typed.Kind()
	}
	return fmt.Sprintf("%T", err)
}

func (a *Agent) tool(name string) *Tool {
	for i := range a.Tools {
		if a.Tools[i].Name == name {
			return &a.Tools[i]
		}
	}
	return nil
}

// execute is the observation, the args as parsed (or the raw text), the error if any, and whether the tool ran.
func (a *Agent) execute(call ToolCall, approved bool) (string, any, error, bool) {
	tool := a.tool(call.Name)
	if tool == nil {
		names := []string{}
		for _, t := range a.Tools {
			names = append(names, t.Name)
		}
		sort.Strings(names)
		err := &ArgsError{fmt.Sprintf("Error: unknown tool %q; the tools are %v", call.Name, names)}
		return err.Message, call.Arguments, err, false
	}
	args, err := parseArgs(tool, call.Arguments)
	if err != nil {
		return "Error: invalid arguments for " + tool.Name + ": " + err.Error(), call.Arguments, err, false
	}
	if !approved && contains(a.NeedsApproval, tool.Name) {
		if a.Approve == nil {
			return "", args, fmt.Errorf("the tool %s needs approval, and no one approves calls", tool.Name), false
		}
		switch answer := a.Approve(tool.Name, args, call.ID).(type) {
		case Edit:
			text, _ := json.Marshal(answer.Args)
			return a.execute(ToolCall{call.ID, answer.Name, string(text)}, true)
		case bool:
			if !answer {
				return a.reject(tool.Name, args, "")
			}
		case string:
			return a.reject(tool.Name, args, ": "+answer)
		default:
			return a.reject(tool.Name, args, "")
		}
	}
	result, err := tool.Function(args)
	if err != nil {
		return "Error executing " + tool.Name + ": " + err.Error(), args, err, true
	}
	if text, ok := result.(string); ok {
		return text, args, nil, true
	}
	text, _ := json.Marshal(result)
	return string(text), args, nil, true
}

func (a *Agent) reject(name string, args any, said string) (string, any, error, bool) {
	err := &ArgsError{"the person rejected the call of " + name}
	return "Error: the person rejected the call of " + name + "; it did not run" + said, args, err, false
}

var jsonTypes = map[string]func(any) bool{
	"string":  func(v any) bool { _, ok := v.(string); return ok },
	"integer": func(v any) bool { n, ok := v.(json.Number); _, e := n.Int64(); return ok && e == nil },
	"number":  func(v any) bool { _, ok := v.(json.Number); return ok },
	"boolean": func(v any) bool { _, ok := v.(bool); return ok },
	"array":   func(v any) bool { _, ok := v.([]any); return ok },
	"object":  func(v any) bool { _, ok := v.(map[string]any); return ok },
}

func parseArgs(tool *Tool, text string) (map[string]any, error) {
	decoder := json.NewDecoder(strings.NewReader(text))
	decoder.UseNumber()
	var parsed any
	if err := decoder.Decode(&parsed); err != nil {
		message := err.Error()
		if len(message) > 200 {
			message = message[:200]
		}
		return nil, &ArgsError{"the arguments are not valid JSON (" + message + ")"}
	}
	args, ok := parsed.(map[string]any)
	if !ok {
		return nil, &ArgsError{fmt.Sprintf("the arguments must be a JSON object, not %T", parsed)}
	}
	properties, _ := tool.Schema["properties"].(map[string]any)
	required, _ := tool.Schema["required"].([]string)
	for _, name := range required {
		if _, ok := args[name]; !ok {
			return nil, &ArgsError{fmt.Sprintf("the field %q is missing", name)}
		}
	}
	for name, value := range args {
		property, ok := properties[name].(map[string]any)
		if !ok {
			return nil, &ArgsError{fmt.Sprintf("the field %q is not an argument of %s", name, tool.Name)}
		}
		expected, _ := property["type"].(string)
		if check := jsonTypes[expected]; check != nil && !check(value) {
			return nil, &ArgsError{fmt.Sprintf("the field %q must be of type %s", name, expected)}
		}
	}
	return args, nil
}

func contains(names []string, name string) bool {
	for _, n := range names {
		if n == name {
			return true
		}
	}
	return false
}
