package protocol

// The translation every native tool-calling Go harness shares, as harnesses/lib/render.mjs and
// conformance/render.py do it: the inputs as one user message, a final turn as the reply's text, a
// final reply as outputs, a suite tool's parameters as a JSON schema.

import (
	"encoding/json"
	"runtime/debug"
	"sort"
	"strings"
)

// jsonTypes are the suite's parameter types (ParamSpec.type) as JSON schema types.
var jsonTypes = map[string]string{"str": "string", "int": "integer", "float": "number", "bool": "boolean",
	"list": "array", "dict": "object"}

// Text is a value as the text a message shows: a string as it is, anything else as JSON.
func Text(value any) string {
	if s, ok := value.(string); ok {
		return s
	}
	text, _ := json.Marshal(value)
	return string(text)
}

// UserMessage is render.user_message: the one input's text, or `name: value` lines (in key order:
// the decoded command keeps no order of its own).
func UserMessage(inputs Object) string {
	names := make([]string, 0, len(inputs))
	for name := range inputs {
		names = append(names, name)
	}
	if len(names) == 1 {
		return Text(inputs[names[0]])
	}
	sort.Strings(names)
	lines := make([]string, 0, len(names))
	for _, name := range names {
		lines = append(lines, name+": "+Text(inputs[name]))
	}
	return strings.Join(lines, "\n")
}

// ReplyText is FinalTurn.reply_text: the one output's text, or a JSON object of them.
func ReplyText(outputs Object) string {
	if len(outputs) == 1 {
		for _, value := range outputs {
			return Text(value)
		}
	}
	if outputs == nil {
		outputs = Object{}
	}
	return Text(outputs)
}

// ReplyOutputs is render.reply_outputs: the reply under the signature's one output name ("answer"
// when it names none), or the JSON object of several.
func ReplyOutputs(signature Object, reply string) Object {
	fields, _ := signature["outputs"].([]any)
	names := []string{}
	for _, field := range fields {
		name, _ := asObject(field)["name"].(string)
		names = append(names, name)
	}
	if len(names) == 0 {
		names = []string{"answer"}
	}
	if len(names) > 1 {
		var values Object
		if json.Unmarshal([]byte(reply), &values) == nil && values != nil {
			return values
		}
	}
	return Object{names[0]: reply}
}

// JSONSchema is a ToolSpec's parameters as a JSON schema object (ToolSpec.json_schema): every
// parameter required, no other property allowed.
func JSONSchema(tool Object) Object {
	properties, required := Object{}, []any{}
	params, _ := tool["parameters"].([]any)
	for _, p := range params {
		param := asObject(p)
		name, _ := param["name"].(string)
		kind, _ := param["type"].(string)
		description, _ := param["description"].(string)
		properties[name] = Object{"type": jsonTypes[kind], "description": description}
		required = append(required, name)
	}
	return Object{"type": "object", "properties": properties, "required": required, "additionalProperties": false}
}

// ToolArgs is a tool call's arguments as the model wrote them, as a step's `tool_args`: JSON data
// (Wire: its JSON text when nested deeper than a message may be), or the text when it is not JSON.
func ToolArgs(text string) any {
	var value any
	decoder := json.NewDecoder(strings.NewReader(text))
	decoder.UseNumber()
	if decoder.Decode(&value) != nil || decoder.More() {
		return text
	}
	return Wire(value)
}

// ModuleVersion is the version of the Go module `path` built into the harness (without its "v"),
// for the welcome's version and dependencies; "unknown" when the build names none.
func ModuleVersion(path string) string {
	if info, ok := debug.ReadBuildInfo(); ok {
		for _, dep := range info.Deps {
			if dep.Path == path {
				return strings.TrimPrefix(dep.Version, "v")
			}
		}
	}
	return "unknown"
}

// AssistantMessage is a turn as the chat-completions assistant message an endpoint answers with
// (render.openai_message), reply `number` of its run: for a harness whose seam is its library's own
// model interface, which renders that message in the library's own types.
func AssistantMessage(turn Object, number int64) Object { return assistantMessage(turn, number) }
