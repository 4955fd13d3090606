// Package protocol is the react-conformance harness protocol for Go harnesses: JSON lines on
// stdio, the standard library only. It mirrors harnesses/lib/protocol.mjs; the message shapes are
// harnesses/protocol.schema.json, and docs/writing-a-harness.md explains them.
//
// Serve(handlers) reads the suite's commands from stdin and writes the replies to stdout. The
// handlers implement Handlers (hello, build, run, mutate_last_result) and, where the library has
// them, the optional interfaces (Configurer, GlobalAdapter, Resumer, StepToolNamer). A run's
// context carries its run id: AskModel, CallTool and AskApproval take that context, so concurrent
// runs need no bookkeeping as long as the harness passes the run's context to the library's
// callbacks (a goroutine the library starts keeps it when the callback closes over it).
package protocol

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
)

// Protocol is the protocol version: the binding contract's (conformance/binding.py, CONTRACT_VERSION).
const Protocol = 3

// Deepest is how deep a value may nest in a protocol message: the suite's JSON parser refuses a
// message nested deeper than about 200 levels.
const Deepest = 150

// Object is a JSON object as the protocol carries it.
type Object = map[string]any

// Handlers answers the suite's commands; each returns the reply's payload.
type Handlers interface {
	Hello(cmd Object) (Object, error)
	Build(cmd Object) (Object, error)
	// Run runs one call; ctx carries the run id (RunOf).
	Run(ctx context.Context, cmd Object) (Object, error)
	MutateLastResult(cmd Object) (Object, error)
}

// Configurer is implemented by a harness with a `configure` command.
type Configurer interface {
	Configure(cmd Object) (Object, error)
}

// GlobalAdapter is implemented by a harness whose library has a global adapter.
type GlobalAdapter interface {
	GlobalAdapter(cmd Object) (Object, error)
}

// Resumer is implemented by a harness whose library resumes a paused run.
type Resumer interface {
	Resume(ctx context.Context, cmd Object) (Object, error)
}

// StepToolNamer is implemented by a harness whose library constrains a step's tool names.
type StepToolNamer interface {
	StepToolNames(cmd Object) (Object, error)
}

// ErrUnexpectedModelCall is wrapped by AskModel's error when the suite did not expect the request.
var ErrUnexpectedModelCall = errors.New("unexpected model call")

// ToolError is a tool's error as the suite sent it: Type is the tool's exception name.
type ToolError struct{ Type, Message string }

func (e *ToolError) Error() string { return e.Message }

var replies = map[string]string{
	"hello": "welcome", "configure": "done", "global_adapter": "adapter", "build": "built",
	"run": "ran", "resume": "ran", "run_concurrently": "ran_all", "step_tool_names": "names",
	"mutate_last_result": "done",
}

var (
	out       io.Writer = os.Stdout
	writeLock sync.Mutex
	waitLock  sync.Mutex
	waiting   = map[string]chan Object{}
	nextID    int
)

type runKey struct{}

// WithRun is ctx as part of run `run`.
func WithRun(ctx context.Context, run string) context.Context {
	return context.WithValue(ctx, runKey{}, run)
}

// RunOf is the id of the run ctx belongs to ("" outside a run).
func RunOf(ctx context.Context) string {
	run, _ := ctx.Value(runKey{}).(string)
	return run
}

// AskModel is the scripted turn answering call (an LMCall); an error wrapping
// ErrUnexpectedModelCall if the script did not expect it.
func AskModel(ctx context.Context, call Object) (Object, error) {
	answer, err := ask(ctx, "model", Object{"call": call})
	if err != nil {
		return nil, err
	}
	turn, ok := answer["turn"].(Object)
	if answer["error"] != nil || !ok {
		return nil, fmt.Errorf("%w: %v", ErrUnexpectedModelCall, orText(answer["error"], "no turn"))
	}
	return turn, nil
}

// AskAuxiliary is the standing answer to an auxiliary model call (one the harness names in its
// welcome's `auxiliary_calls`), "continue": render it as the library's "go on, unchanged".
func AskAuxiliary(ctx context.Context, name string, call Object) (string, error) {
	withKind := Object{}
	for k, v := range call {
		withKind[k] = v
	}
	withKind["kind"], withKind["auxiliary"] = "auxiliary", name
	answer, err := ask(ctx, "model", Object{"call": withKind})
	if err != nil {
		return "", err
	}
	aux, ok := answer["auxiliary"].(string)
	if answer["error"] != nil || !ok {
		return "", fmt.Errorf("%w: %v", ErrUnexpectedModelCall, orText(answer["error"], "no answer"))
	}
	return aux, nil
}

// AskApproval is the person's answer to the library's approval callback for the call name(args)
// (`approval_form: "callback"` in the welcome): yes, no, free text, or an edit as JSON text;
// ReadApproval reads it. callID may be "" (sent as null).
func AskApproval(ctx context.Context, name string, args any, callID string) (string, error) {
	var id any
	if callID != "" {
		id = callID
	}
	answer, err := ask(ctx, "approve", Object{"name": name, "args": Wire(args), "call_id": id})
	if err != nil {
		return "", err
	}
	response, _ := answer["response"].(string)
	return response, nil
}

// Approval is a person's answer read as the suite means it (conformance.translate.approval).
type Approval struct {
	Decision string // approve, reject, message or edit
	Text     string
	Name     string // an edit's tool name ("" if it names none)
	Args     any    // an edit's args
}

// ReadApproval reads a person's answer (an approval's, or a resume's `response`).
func ReadApproval(response string) Approval {
	switch strings.ToLower(strings.TrimSpace(response)) {
	case "yes", "y":
		return Approval{Decision: "approve", Text: response}
	case "no", "n":
		return Approval{Decision: "reject", Text: response}
	}
	var parsed any
	if json.Unmarshal([]byte(response), &parsed) != nil {
		return Approval{Decision: "message", Text: response}
	}
	edit, ok := parsed.(Object)
	if inner, isObject := edit["edit"].(Object); ok && isObject {
		edit = inner
	}
	if !ok {
		return Approval{Decision: "message", Text: response}
	}
	name, _ := edit["name"].(string)
	return Approval{Decision: "edit", Text: response, Name: name, Args: edit["args"]}
}

// CallTool runs the suite's tool name with args and returns its result; a *ToolError when the
// tool raised. Args nested deeper than a protocol message may be travel as their JSON text
// (`args_json`), which the suite parses to any depth.
func CallTool(ctx context.Context, name string, args any) (any, error) {
	fields := Object{"name": name, "args": args}
	if depth(args, Deepest) > Deepest {
		text, err := json.Marshal(args)
		if err != nil {
			return nil, err
		}
		fields = Object{"name": name, "args": nil, "args_json": string(text)}
	}
	return toolAnswer(ask(ctx, "tool", fields))
}

func toolAnswer(answer Object, err error) (any, error) {
	if err != nil {
		return nil, err
	}
	if e, ok := answer["error"].(Object); ok {
		kind, _ := e["type"].(string)
		message, _ := e["message"].(string)
		return nil, &ToolError{Type: kind, Message: message}
	}
	return answer["result"], nil
}

// CallToolJSON runs the suite's tool name with args given as their JSON text (`args_json`), for
// args the harness cannot decode itself (nested past encoding/json's depth limit); as CallTool.
func CallToolJSON(ctx context.Context, name string, argsJSON string) (any, error) {
	return toolAnswer(ask(ctx, "tool", Object{"name": name, "args": nil, "args_json": argsJSON}))
}

// NotifyHang sends a `hang` fault's notice: the request's own timeout in seconds (nil without
// one), which the suite passes on the run's model clock. Then fail the request as that timeout would.
func NotifyHang(ctx context.Context, timeout *float64) error {
	run := RunOf(ctx)
	if run == "" {
		return errors.New("a hang notice outside of any run")
	}
	var t any
	if timeout != nil {
		t = *timeout
	}
	return send(Object{"type": "hang", "run": run, "timeout": t})
}

// NotifySleep sends a retry's wait, on the run's model clock (NET-1), instead of sleeping.
func NotifySleep(ctx context.Context, seconds float64) error {
	run := RunOf(ctx)
	if run == "" {
		return errors.New("a sleep notice outside of any run")
	}
	return send(Object{"type": "sleep", "run": run, "seconds": seconds})
}

// FaultResponse is a scripted HTTP fault (a `fault` turn with a status) as the endpoint answers
// it: the status, its headers (Retry-After) and an error body that says what failed in words,
// never the status code (as server.py does).
func FaultResponse(turn Object) (int, http.Header, []byte, error) {
	status, err := strconv.Atoi(fmt.Sprint(turn["fault"]))
	if err != nil {
		return 0, nil, nil, fmt.Errorf("a fault turn without an HTTP status: %v", turn["fault"])
	}
	headers := http.Header{"Content-Type": {"application/json"}}
	if after, ok := turn["retry_after"]; ok && after != nil {
		headers.Set("Retry-After", fmt.Sprint(after))
	}
	reason := http.StatusText(status)
	if reason == "" {
		reason = "client error"
		if status >= 500 {
			reason = "server error"
		}
	}
	body, err := json.Marshal(Object{"error": Object{"message": "scripted fault: " + reason}})
	return status, headers, body, err
}

// ErrorInfo is an error as the protocol's ErrorInfo (kind "other" unless given).
func ErrorInfo(err error, kind string, fields Object) Object {
	if kind == "" {
		kind = "other"
	}
	if fields == nil {
		fields = Object{}
	}
	name := fmt.Sprintf("%T", err)
	var toolError *ToolError
	if errors.As(err, &toolError) {
		name = toolError.Type
	}
	name = strings.TrimLeft(name[strings.LastIndex(name, ".")+1:], "*")
	return Object{"type": name, "message": err.Error(), "kind": kind, "fields": fields}
}

// Wire is a value as a protocol message may carry it (a step's `tool_args`): nested deeper than
// the suite parses a message, its JSON text.
func Wire(value any) any {
	if depth(value, Deepest) <= Deepest {
		return value
	}
	text, err := json.Marshal(value)
	if err != nil {
		return fmt.Sprint(value)
	}
	return string(text)
}

// Serve serves the suite until it says stop (or closes stdin), then exits the process.
func Serve(handlers Handlers) {
	input := bufio.NewReaderSize(os.Stdin, 1<<20)
	for {
		line, err := input.ReadBytes('\n')
		if len(strings.TrimSpace(string(line))) > 0 {
			// Numbers stay their text (json.Number): a float64 would refuse 1e400 and round big integers.
			decoder := json.NewDecoder(strings.NewReader(string(line)))
			decoder.UseNumber()
			var message Object
			if jsonErr := decoder.Decode(&message); jsonErr != nil {
				fmt.Fprintf(os.Stderr, "protocol: a line that is not JSON: %v\n", jsonErr)
				os.Exit(2)
			}
			dispatch(handlers, message)
		}
		if err != nil {
			os.Exit(0)
		}
	}
}

func dispatch(handlers Handlers, message Object) {
	switch message["type"] {
	case "turn", "observation", "approval":
		id, _ := message["id"].(string)
		waitLock.Lock()
		queue := waiting[id]
		delete(waiting, id)
		waitLock.Unlock()
		if queue != nil {
			queue <- message
		}
	case "stop":
		_ = send(Object{"type": "done", "id": message["id"]})
		os.Exit(0) // the library's goroutines end with the process
	default:
		go reply(handlers, message)
	}
}

func reply(handlers Handlers, cmd Object) {
	payload, err := carryOut(handlers, cmd)
	if err != nil {
		_ = send(Object{"type": "failed", "id": cmd["id"], "message": err.Error()})
		return
	}
	message := Object{"type": replies[fmt.Sprint(cmd["type"])], "id": cmd["id"]}
	for k, v := range payload {
		message[k] = v
	}
	if err := send(message); err != nil {
		_ = send(Object{"type": "failed", "id": cmd["id"], "message": err.Error()})
	}
}

// carryOut runs one command; a panic in the harness is the command's failure, with its stack.
func carryOut(handlers Handlers, cmd Object) (payload Object, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("the harness panicked: %v\n%s", p, debug.Stack())
		}
	}()
	kind := fmt.Sprint(cmd["type"])
	run, _ := cmd["run"].(string)
	ctx := WithRun(context.Background(), run)
	switch kind {
	case "hello":
		payload, err = handlers.Hello(cmd)
		if payload != nil {
			payload["protocol"] = Protocol
		}
		return payload, err
	case "build":
		return handlers.Build(cmd)
	case "run":
		return handlers.Run(ctx, cmd)
	case "mutate_last_result":
		return handlers.MutateLastResult(cmd)
	case "run_concurrently":
		return runConcurrently(handlers, cmd)
	case "resume":
		if h, ok := handlers.(Resumer); ok {
			return h.Resume(ctx, cmd)
		}
	case "configure":
		if h, ok := handlers.(Configurer); ok {
			return h.Configure(cmd)
		}
	case "global_adapter":
		if h, ok := handlers.(GlobalAdapter); ok {
			return h.GlobalAdapter(cmd)
		}
		return Object{"adapter": nil}, nil
	case "step_tool_names":
		if h, ok := handlers.(StepToolNamer); ok {
			return h.StepToolNames(cmd)
		}
		return Object{"names": nil}, nil
	}
	return nil, fmt.Errorf("this harness has no %s command", kind)
}

// runConcurrently runs each of the command's runs on its own goroutine, all at once.
func runConcurrently(handlers Handlers, cmd Object) (Object, error) {
	runs, _ := cmd["runs"].([]any)
	outcomes := make([]any, len(runs))
	errs := make([]error, len(runs))
	var group sync.WaitGroup
	for i, entry := range runs {
		group.Add(1)
		go func(i int, entry Object) {
			defer group.Done()
			defer func() {
				if p := recover(); p != nil {
					errs[i] = fmt.Errorf("the harness panicked: %v\n%s", p, debug.Stack())
				}
			}()
			run, _ := entry["run"].(string)
			payload, err := handlers.Run(WithRun(context.Background(), run), entry)
			outcomes[i], errs[i] = payload["outcome"], err
		}(i, asObject(entry))
	}
	group.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return Object{"outcomes": outcomes}, nil
}

func ask(ctx context.Context, kind string, fields Object) (Object, error) {
	run := RunOf(ctx)
	if run == "" {
		return nil, fmt.Errorf("a %s request outside of any run", kind)
	}
	queue := make(chan Object, 1)
	waitLock.Lock()
	nextID++
	id := kind + "-" + strconv.Itoa(nextID)
	waiting[id] = queue
	waitLock.Unlock()
	message := Object{"type": kind, "id": id, "run": run}
	for k, v := range fields {
		message[k] = v
	}
	if err := send(message); err != nil {
		waitLock.Lock()
		delete(waiting, id)
		waitLock.Unlock()
		return nil, err
	}
	select {
	case answer := <-queue:
		return answer, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func send(message Object) error {
	line, err := json.Marshal(message)
	if err != nil {
		return fmt.Errorf("a message that is not JSON: %w", err)
	}
	writeLock.Lock()
	defer writeLock.Unlock()
	_, err = out.Write(append(line, '\n'))
	return err
}

func depth(value any, limit int) int {
	var children []any
	switch v := value.(type) {
	case Object:
		for _, child := range v {
			children = append(children, child)
		}
	case []any:
		children = v
	default:
		return 0
	}
	if limit <= 0 {
		return 1
	}
	deepest := 0
	for _, child := range children {
		deepest = max(deepest, depth(child, limit-1))
	}
	return 1 + deepest
}

func asObject(value any) Object {
	object, _ := value.(Object)
	return object
}

func orText(value any, otherwise string) any {
	if value == nil {
		return otherwise
	}
	return value
}
