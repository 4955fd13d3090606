//! A Rust harness for the suite's own tests: binds the tiny loop of tinyloop.rs through the Rust
//! protocol module (harnesses/lib/rust), as a Rust library's maintainers would bind theirs:
//!
//!     cargo build --release && pytest --impl "cmd:target/release/rust-loop"
//!
//! Only the translation is written here; the protocol module does the wire.

mod tinyloop;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use react_conformance_protocol::{self as protocol, json, object, Approval, Error, Object, Run, Value};
use tinyloop::{Answer, Reply, RunResult, Step, Tool, ToolCall, ToolFailure};

const CLAIMED: [&str; 8] = [
    "max-steps-return",
    "cap-summary",
    "per-call-cap",
    "repeated-error-stop",
    "parallel-tool-calls",
    "tool-approval",
    "approval-edit",
    "async",
];

fn not_claimed() -> Value {
    json!({
        "signature": "a native loop: no signature, adapters or extraction call",
        "adapters": "a native loop: the replies are tool calls, in no adapter format",
        "max-steps-error": "on the cap the run returns; it never raises",
        "max-steps-extract": "on the cap the run returns; no extra call writes the outputs",
        "ask-user": "no built-in tool to ask the user",
        "durable-approvals": "approval is a callback during the run: there is no pause to keep",
        "streaming": "no event stream",
        "lm-retry": "the model is a plain function: no client, no retries",
        "http": "the model is a plain function: no HTTP client",
    })
}

/// With OBSERVER=1 the loop runs its observation processor: an auxiliary model call per tool result.
fn observing() -> bool {
    std::env::var("OBSERVER").as_deref() == Ok("1")
}

fn text(value: &Value) -> String {
    value.as_str().unwrap_or_default().to_string()
}

fn list(value: &Value) -> &[Value] {
    value.as_array().map(Vec::as_slice).unwrap_or_default()
}

/// The suite's tools, declared in the loop's form; each call goes to the suite through `run`.
fn tools(run: &Run, spec: &Value) -> Vec<Tool> {
    list(&spec["tools"])
        .iter()
        .map(|tool| {
            let (name, run) = (text(&tool["name"]), run.clone());
            let called = name.clone();
            Tool {
                name,
                description: text(&tool["description"]),
                schema: protocol::json_schema(tool),
                function: Arc::new(move |args: &Value| {
                    run.call_tool(&called, args).map_err(|error| match error.downcast_ref::<protocol::ToolError>() {
                        Some(raised) => ToolFailure { kind: raised.kind.clone(), message: raised.message.clone() },
                        None => ToolFailure { kind: "ProtocolError".into(), message: error.to_string() },
                    })
                }),
            }
        })
        .collect()
}

/// The loop's model: each request shown as the model saw it, answered from the script.
fn seam(run: Run) -> tinyloop::Model {
    let counter = Arc::new(Mutex::new(0));
    Arc::new(move |messages: &[Value], declared: &[Value]| -> Result<Reply, Error> {
        let shown: Vec<Value> = messages
            .iter()
            .map(|m| {
                let mut parts = vec![text(&m["content"])];
                for call in list(&m["tool_calls"]) {
                    parts.push(format!("call {}({})", text(&call["name"]), text(&call["arguments"])));
                }
                json!({"role": m["role"], "content": parts.join("\n").trim()})
            })
            .collect();
        let turn = run.ask_model(json!({"kind": "step", "adapter": "native", "messages": shown, "tools": declared}))?;
        let turn = Value::Object(turn);
        let mut counter = counter.lock().expect("the reply counter");
        *counter += 1;
        match turn["kind"].as_str() {
            Some("step") => {
                let calls = std::iter::once(&turn).chain(list(&turn["parallel"]));
                let tool_calls = calls
                    .enumerate()
                    .map(|(i, call)| ToolCall {
                        id: format!("call_{}_{i}", *counter),
                        name: text(&call["tool_name"]),
                        arguments: call["raw_tool_args"]
                            .as_str()
                            .map_or_else(|| protocol::text(&call["tool_args"]), str::to_string),
                    })
                    .collect();
                Ok(Reply { content: text(&turn["thought"]), tool_calls })
            }
            Some("final" | "extract") => {
                Ok(Reply { content: protocol::reply_text(&object(turn["outputs"].clone())), tool_calls: vec![] })
            }
            _ => Err(format!("the model's transport failed: {}", turn["fault"]).into()),
        }
    })
}

fn step_of(step: &Step) -> Value {
    let thought = if step.thought.is_empty() { Value::Null } else { step.thought.clone().into() };
    json!({"thought": thought, "tool_name": step.tool_name, "tool_args": protocol::wire(&step.tool_args),
           "observation": step.observation, "is_error": step.failed, "call_id": step.call_id})
}

/// The loop's approval callback: the person's answer, in the loop's terms.
fn approve(run: Run) -> tinyloop::Approve {
    Arc::new(move |name: &str, args: &Value, call_id: &str| match run.ask_approval(name, args, Some(call_id)) {
        Err(_) => Answer::Reject(None),
        Ok(response) => match protocol::read_approval(&response) {
            Approval::Approve => Answer::Run,
            Approval::Reject => Answer::Reject(None),
            Approval::Edit { name, args } => Answer::Edit(name, args),
            Approval::Message(said) => Answer::Reject(Some(said)),
        },
    })
}

/// The observation processor's model call: `continue` keeps the observation as it is.
fn observe(run: Run) -> tinyloop::Observer {
    Arc::new(move |tool: &str, observation: &str| {
        let call = json!({"kind": "auxiliary", "adapter": "other", "tools": null, "messages": [
            {"role": "user", "content": format!("Rewrite the result of {tool}, or say continue: {observation}")}]});
        match run.ask_auxiliary("observation", call) {
            Ok(answer) if answer != "continue" => answer,
            _ => observation.to_string(),
        }
    })
}

#[derive(Default)]
struct Agent {
    spec: Value,
    last: Option<RunResult>,
}

/// The harness: one method per command.
#[derive(Default)]
struct Harness {
    agents: Mutex<HashMap<String, Agent>>,
}

impl protocol::Handlers for Harness {
    fn hello(&self, _cmd: &Object) -> Result<Object, Error> {
        let auxiliary = if observing() {
            json!({"observation": "the loop may rewrite each tool result with a model call"})
        } else {
            json!({})
        };
        Ok(object(json!({"name": "rust-loop", "version": "0", "capabilities": CLAIMED, "not_claimed": not_claimed(),
                         "known_failures": {}, "auxiliary_calls": auxiliary, "approval_form": "callback",
                         "dependencies": protocol::dependencies(include_str!("../Cargo.toml"), include_str!("../Cargo.lock"))})))
    }

    fn build(&self, cmd: &Object) -> Result<Object, Error> {
        let agent = Agent { spec: cmd["spec"].clone(), last: None };
        self.agents.lock().expect("the agents").insert(text(&cmd["agent"]), agent);
        Ok(object(json!({"error": null})))
    }

    fn run(&self, run: &Run, cmd: &Object) -> Result<Object, Error> {
        let id = text(&cmd["agent"]);
        let spec = match self.agents.lock().expect("the agents").get(&id) {
            Some(agent) => agent.spec.clone(),
            None => return Err(format!("no agent {id} was built").into()),
        };
        let call = &cmd["call"];
        let needs =
            list(&spec["tools"]).iter().filter(|t| t["interruptible"] == true).map(|t| text(&t["name"])).collect();
        // Each run its own loop: its callbacks carry the run's handle, on whatever thread they run.
        let loop_ = tinyloop::Agent {
            tools: tools(run, &spec),
            model: seam(run.clone()),
            observer: observing().then(|| observe(run.clone())),
            needs_approval: needs,
            approve: Some(approve(run.clone())),
            max_steps: spec["max_steps"].as_u64().unwrap_or(0) as usize,
            instructions: text(&spec["signature"]["instructions"]),
        };
        let per_call = call["max_steps"].as_u64().unwrap_or(0) as usize;
        let user = protocol::user_message(call["inputs"].as_object().unwrap_or(&Object::new()));
        let result =
            if call["mode"] == "async" { loop_.run_async(user, per_call).recv()? } else { loop_.run(&user, per_call) };
        let result = match result {
            Ok(result) => result,
            Err(error) => {
                let name =
                    if error.is::<protocol::UnexpectedModelCall>() { "UnexpectedModelCall" } else { "LoopError" };
                let info = protocol::error_info(error.as_ref(), name, None, Object::new());
                return Ok(object(json!({"outcome": {"error": info}})));
            }
        };
        let outputs =
            result.output.as_deref().map(|reply| Value::Object(protocol::reply_outputs(&spec["signature"], reply)));
        let outcome = json!({"outputs": outputs, "trajectory": result.steps.iter().map(step_of).collect::<Vec<_>>(),
                             "stop_reason": result.stop_reason, "iterations": result.steps_used,
                             "fallback": result.message, "tool_errors": result.tool_errors});
        if let Some(agent) = self.agents.lock().expect("the agents").get_mut(&id) {
            agent.last = Some(result);
        }
        Ok(object(json!({"outcome": outcome})))
    }

    fn mutate_last_result(&self, cmd: &Object) -> Result<Object, Error> {
        let mut agents = self.agents.lock().expect("the agents");
        let Some(last) = agents.get_mut(&text(&cmd["agent"])).and_then(|agent| agent.last.as_mut()) else {
            return Ok(object(json!({"changed": []})));
        };
        let (marker, held) = (text(&cmd["marker"]), last.steps.len());
        for step in &mut last.steps {
            step.thought.clone_from(&marker);
            step.observation.clone_from(&marker);
        }
        last.steps.push(Step {
            thought: marker.clone(),
            tool_name: marker.clone(),
            tool_args: json!({}),
            observation: marker,
            failed: false,
            call_id: String::new(),
        });
        Ok(object(json!({"changed": [format!("result.steps ({held} steps)")]})))
    }
}

fn main() {
    protocol::serve(Harness::default())
}
