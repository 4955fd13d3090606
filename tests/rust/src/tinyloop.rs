//! A tiny native tool-calling loop, written for the suite's own tests (as tests/go/tinyloop is):
//! the library a Rust harness binds. The model is a function taking the messages and the tool
//! declarations and returning a Reply; the loop runs tools until a reply calls none, or the cap.

use std::collections::HashMap;
use std::fmt;
use std::sync::mpsc::{self, Receiver};
use std::sync::Arc;
use std::thread;

use react_conformance_protocol::{json, Value};

/// How many consecutive similar tool failures (same tool, same error kind) stop the run.
pub const REPEATED_ERRORS: usize = 3;

pub type Error = Box<dyn std::error::Error + Send + Sync>;

/// One call in a reply; `arguments` is JSON text.
#[derive(Debug, Clone)]
pub struct ToolCall {
    pub id: String,
    pub name: String,
    pub arguments: String,
}

/// The model's reply.
#[derive(Debug, Clone, Default)]
pub struct Reply {
    pub content: String,
    pub tool_calls: Vec<ToolCall>,
}

/// A tool's failure: its kind (the tool's exception name) and message.
#[derive(Debug, Clone)]
pub struct ToolFailure {
    pub kind: String,
    pub message: String,
}

pub type ToolFunction = Arc<dyn Fn(&Value) -> Result<Value, ToolFailure> + Send + Sync>;

/// A tool the loop may run.
#[derive(Clone)]
pub struct Tool {
    pub name: String,
    pub description: String,
    pub schema: Value,
    pub function: ToolFunction,
}

/// One tool call of a run.
#[derive(Debug, Clone)]
pub struct Step {
    pub thought: String,
    pub tool_name: String,
    pub tool_args: Value,
    pub observation: String,
    pub failed: bool,
    pub call_id: String,
}

/// A run's result.
#[derive(Debug, Clone, Default)]
pub struct RunResult {
    pub output: Option<String>,
    pub stop_reason: String,
    pub steps_used: usize,
    pub steps: Vec<Step>,
    pub message: Option<String>,
    pub tool_errors: Vec<String>,
}

/// An approval callback's answer to a call of a tool in `needs_approval`.
#[derive(Debug, Clone)]
pub enum Answer {
    Run,
    /// Not run, with the person's words if any.
    Reject(Option<String>),
    /// Run this call instead (None keeps the tool).
    Edit(Option<String>, Value),
}

/// The loop's own error (the model's errors pass through as they are).
#[derive(Debug)]
pub struct LoopError(pub String);

impl fmt::Display for LoopError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for LoopError {}

pub type Model = Arc<dyn Fn(&[Value], &[Value]) -> Result<Reply, Error> + Send + Sync>;
pub type Approve = Arc<dyn Fn(&str, &Value, &str) -> Answer + Send + Sync>;
pub type Observer = Arc<dyn Fn(&str, &str) -> String + Send + Sync>;

/// The loop.
#[derive(Clone)]
pub struct Agent {
    pub tools: Vec<Tool>,
    pub model: Model,
    pub observer: Option<Observer>,
    pub needs_approval: Vec<String>,
    pub approve: Option<Approve>,
    pub max_steps: usize,
    pub instructions: String,
}

struct Executed {
    observation: String,
    args: Value,
    failure: Option<ToolFailure>,
    ran: bool,
}

impl Agent {
    fn declarations(&self) -> Vec<Value> {
        self.tools
            .iter()
            .map(|t| json!({"type": "function", "function": {"name": t.name, "description": t.description, "parameters": t.schema}}))
            .collect()
    }

    /// The async form: the run on a thread of the loop's own.
    pub fn run_async(&self, user: String, max_steps: usize) -> Receiver<Result<RunResult, Error>> {
        let (done, result) = mpsc::channel();
        let agent = self.clone();
        thread::Builder::new()
            .stack_size(react_conformance_protocol::STACK_BYTES)
            .spawn(move || {
                let _ = done.send(agent.run(&user, max_steps));
            })
            .expect("a thread for the run");
        result
    }

    /// One call with its own budget (max_steps 0: the agent's).
    pub fn run(&self, user: &str, max_steps: usize) -> Result<RunResult, Error> {
        let limit = if max_steps == 0 { self.max_steps } else { max_steps };
        if limit < 1 {
            return Err(Box::new(LoopError(format!("max_steps must be at least 1, not {limit}"))));
        }
        // A library that prints to stdout, as many do: the protocol module keeps it off the wire.
        println!("tinyloop: a run with a cap of {limit} steps");
        let mut messages = Vec::new();
        if !self.instructions.is_empty() {
            messages.push(json!({"role": "system", "content": self.instructions}));
        }
        messages.push(json!({"role": "user", "content": user}));
        let mut steps = Vec::new();
        let mut tried: HashMap<String, usize> = HashMap::new();
        let mut order: Vec<String> = Vec::new();
        let mut errors: Vec<[String; 3]> = Vec::new();
        let mut streak: Vec<(String, String)> = Vec::new();
        let mut completed = 0;
        for step in 1..=limit {
            let reply = (self.model)(&messages, &self.declarations())?;
            let calls: Vec<Value> = reply
                .tool_calls
                .iter()
                .map(|c| json!({"id": c.id, "name": c.name, "arguments": c.arguments}))
                .collect();
            messages.push(json!({"role": "assistant", "content": reply.content, "tool_calls": calls}));
            if reply.tool_calls.is_empty() {
                return Ok(RunResult {
                    output: Some(reply.content),
                    stop_reason: "finish".into(),
                    steps_used: step,
                    steps,
                    message: None,
                    tool_errors: texts(&errors),
                });
            }
            for call in &reply.tool_calls {
                let mut done = self.execute(call, false);
                if let Some(observer) = &self.observer {
                    done.observation = observer(&call.name, &done.observation);
                }
                if done.ran {
                    if !tried.contains_key(&call.name) {
                        order.push(call.name.clone());
                    }
                    *tried.entry(call.name.clone()).or_default() += 1;
                }
                if done.failure.is_none() {
                    completed += 1;
                    streak.clear();
                }
                steps.push(Step {
                    thought: reply.content.clone(),
                    tool_name: call.name.clone(),
                    tool_args: done.args,
                    observation: done.observation.clone(),
                    failed: done.failure.is_some(),
                    call_id: call.id.clone(),
                });
                messages.push(json!({"role": "tool", "tool_call_id": call.id, "content": done.observation}));
                let Some(failure) = done.failure.filter(|_| done.ran) else { continue };
                errors.push([call.name.clone(), failure.kind.clone(), failure.message.clone()]);
                let kind = (call.name.clone(), failure.kind.clone());
                if streak.last() == Some(&kind) {
                    streak.push(kind);
                } else {
                    streak = vec![kind];
                }
                if streak.len() < REPEATED_ERRORS {
                    continue;
                }
                let message = format!(
                    "I stopped: the tool {} failed {} times in a row ({}). Please check its input, or try rephrasing the request.",
                    call.name,
                    streak.len(),
                    failure.message
                );
                return Ok(RunResult {
                    output: None,
                    stop_reason: "repeated_tool_errors".into(),
                    steps_used: step,
                    steps,
                    message: Some(message),
                    tool_errors: texts(&errors),
                });
            }
        }
        let summary: Vec<String> = order.iter().map(|name| format!("ran {name} {}×", tried[name])).collect();
        let ran = if summary.is_empty() { "ran no tool".to_string() } else { summary.join(", ") };
        let mut message = format!("I reached the step cap ({limit} steps) without an answer: {ran}.");
        if let Some(last) = errors.last() {
            message += &format!(" The last tool error: {}.", last[2]);
        }
        if completed == 0 {
            message += " No tool completed.";
        }
        Ok(RunResult {
            output: None,
            stop_reason: "max_steps".into(),
            steps_used: limit,
            steps,
            message: Some(message),
            tool_errors: texts(&errors),
        })
    }

    fn execute(&self, call: &ToolCall, approved: bool) -> Executed {
        let refused = |observation: String, args: Value| Executed {
            observation: observation.clone(),
            args,
            failure: Some(ToolFailure { kind: "ArgsError".into(), message: observation }),
            ran: false,
        };
        let Some(tool) = self.tools.iter().find(|t| t.name == call.name) else {
            let mut names: Vec<&str> = self.tools.iter().map(|t| t.name.as_str()).collect();
            names.sort();
            let text = format!("Error: unknown tool {:?}; the tools are {names:?}", call.name);
            return refused(text, Value::String(call.arguments.clone()));
        };
        let args = match parse_args(tool, &call.arguments) {
            Ok(args) => args,
            Err(why) => {
                let text = format!("Error: invalid arguments for {}: {why}", tool.name);
                return refused(text, Value::String(call.arguments.clone()));
            }
        };
        if !approved && self.needs_approval.contains(&tool.name) {
            let Some(approve) = &self.approve else {
                return refused(format!("the tool {} needs approval, and no one approves calls", tool.name), args);
            };
            match approve(&tool.name, &args, &call.id) {
                Answer::Run => {}
                Answer::Edit(name, edited) => {
                    let name = name.unwrap_or_else(|| tool.name.clone());
                    let edited = ToolCall { id: call.id.clone(), name, arguments: edited.to_string() };
                    return self.execute(&edited, true);
                }
                Answer::Reject(said) => {
                    let said = said.map(|text| format!(": {text}")).unwrap_or_default();
                    let text = format!("Error: the person rejected the call of {}; it did not run{said}", tool.name);
                    return refused(text, args);
                }
            }
        }
        match (tool.function)(&args) {
            Ok(Value::String(text)) => Executed { observation: text, args, failure: None, ran: true },
            Ok(result) => Executed { observation: result.to_string(), args, failure: None, ran: true },
            Err(failure) => Executed {
                observation: format!("Error executing {}: {}", tool.name, failure.message),
                args,
                failure: Some(failure),
                ran: true,
            },
        }
    }
}

fn texts(errors: &[[String; 3]]) -> Vec<String> {
    errors[errors.len().saturating_sub(10)..].iter().map(|e| format!("{}: {}: {}", e[0], e[1], e[2])).collect()
}

fn parse_args(tool: &Tool, text: &str) -> Result<Value, String> {
    // Arguments nested thousands of levels deep reach the tool.
    let parsed = react_conformance_protocol::parse_deep(text).map_err(|error| {
        let message: String = error.to_string().chars().take(200).collect();
        format!("the arguments are not valid JSON ({message})")
    })?;
    let Value::Object(args) = &parsed else {
        return Err(format!("the arguments must be a JSON object, not {parsed}"));
    };
    let properties = tool.schema["properties"].as_object().cloned().unwrap_or_default();
    for name in tool.schema["required"].as_array().into_iter().flatten().filter_map(Value::as_str) {
        if !args.contains_key(name) {
            return Err(format!("the field {name:?} is missing"));
        }
    }
    for (name, value) in args {
        let Some(property) = properties.get(name) else {
            return Err(format!("the field {name:?} is not an argument of {}", tool.name));
        };
        let expected = property["type"].as_str().unwrap_or_default();
        let fits = match expected {
            "string" => value.is_string(),
            "integer" => value.as_i64().is_some(),
            "number" => value.is_number(),
            "boolean" => value.is_boolean(),
            "array" => value.is_array(),
            "object" => value.is_object(),
            _ => true,
        };
        if !fits {
            return Err(format!("the field {name:?} must be of type {expected}"));
        }
    }
    Ok(parsed)
}
