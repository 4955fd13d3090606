//! The react-conformance harness for rig (crates rig, rig-core and rig-agent): rig's classic
//! `Agent` (rig-agent's agent module), prompted with `agent.prompt(..).max_turns(n)`.
//!
//!     pytest --impl rig      (or --impl cmd:"harnesses/rig/target/debug/rig-harness")
//!
//! Seam: rig's own OpenAI client, its Chat Completions model (`OpenAIConfig::chat`), connected
//! (`OpenAIConfig::connect`, rig's documented way to give a provider any HTTP client) to an
//! in-process endpoint (endpoint.rs): rig builds each chat-completions request and parses each
//! reply itself. In the `http` profile the same model points at `call.base_url` over rig's bundled
//! reqwest client (rig-reqwest's `ReqwestClient`).
//!
//! Tools: rig's `DynamicTool` (rig-core tool/contextual.rs), the form rig's `Tool` trait documents
//! for a tool whose name is only known at run time (`Tool::NAME` is a compile-time constant; the
//! suite describes its tools at run time), with the suite's JSON schema as its parameters. Its
//! callback turns the suite's result into the tool output and the suite's raised error into a
//! `ToolExecutionError` exactly as a `Tool`'s defaults do (`IntoToolOutput`, `Tool::map_error` =
//! `ToolExecutionError::from_error`).
//!
//! The cap: `max_turns` is rig's total model-call budget ("zero emits no model calls; one permits
//! only the initial call", agent/runner.rs): the suite's cap of N steps is `default_max_turns(N)` on
//! the builder, and a cap for one call is `.max_turns(N)` on that prompt. Past it the run fails
//! with `PromptError::MaxTurns`, which carries the history so far.
//!
//! Approvals: rig's `AgentHook::on_dispatch` (agent/hook.rs), the hook rig runs before every tool
//! dispatch: `DispatchAction::Proceed` runs the call, `DispatchAction::skip(reason)` answers the
//! model with the reason instead, `DispatchAction::patch` edits the call (rig refuses an edit that
//! names another tool).

mod endpoint;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use futures::StreamExt;
use react_conformance_protocol::{self as protocol, json, object, Approval, Error, Object, Run, Value};
use rig::agent::{AgentHook, DispatchAction, DispatchEvent, HookContext};
use rig::agent::{MultiTurnStreamItem, PromptResponse};
use rig::completion::message::{AssistantContent, Message, ToolName, ToolResultContent, UserContent};
use rig::completion::PromptError;
use rig::effect::EffectKind;
use rig::http_client::ReqwestClient;
use rig::providers::openai::OpenAIConfig;
use rig::streaming::{Item, StreamEvent};
use rig::tool::{ContextValue, DynamicTool, IntoToolOutput, ToolContext, ToolExecutionError, ToolOutput};
use rig::wasm_compat::WasmBoxedFuture;
use rig::{Agent, AgentBuilder};
use rig::{AgentRunner, ProviderError};
use serde::{Deserialize, Serialize};

const CLAIMED: [&str; 8] = [
    "max-steps-error",
    "per-call-cap",
    "parallel-tool-calls",
    "tool-approval",
    "approval-edit",
    "async",
    "http",
    "streaming",
];

/// Seconds a run may take before the harness reports the library hung: under the suite's 27 s (0.9
/// of its default --conformance-timeout of 30 s).
const HUNG_AFTER: f64 = 24.0;

fn not_claimed() -> Value {
    json!({
        "signature": "rig's Agent is a native tool-calling loop: messages in, a message out, no signature",
        "adapters": "no pluggable format-and-parse layer: each provider's wire formats and parses its calls (rig-core providers)",
        "max-steps-extract": "past max_turns the run fails with PromptError::MaxTurns (rig-agent agent/runner.rs); no extra call writes the outputs",
        "max-steps-return": "past max_turns the run fails with PromptError::MaxTurns (rig-agent agent/runner.rs); it never returns capped",
        "cap-summary": "past max_turns the run fails with PromptError::MaxTurns: it returns no summary",
        "repeated-error-stop": "a failed tool becomes an error result the model is shown (ToolResult.is_error); nothing counts repeated similar failures (max_consecutive_malformed_tool_calls counts arguments that are no JSON object, and is off by default)",
        "ask-user": "rig's one built-in tool is think (rig-core tool/builtin): none asks the person a question",
        "durable-approvals": "rig approves through the on_dispatch hook, a callback during the run, so no approval pause is kept; a suspended AgentRun resumed with Agent::resume re-executes its pending tool calls and holds no approval answer (rig-agent agent/completion.rs)",
        "lm-retry": "rig classifies a provider failure as retryable (ErrorReport.retryable, rig-core error.rs) but sends each request once: neither the OpenAI client nor the agent retries",
    })
}

fn parity() -> Value {
    json!({
        "stop_reason": "library: a returned PromptResponse is the final answer (the run ends on a reply without tool calls); PromptError::MaxTurns is the cap stop",
        "iterations": "library: PromptResponse::completion_calls, one per completed model call; on an error, the assistant turns of its chat_history",
        "max_iterations": "library: PromptError::MaxTurns.max_turns",
        "partial_run": "library: the chat_history of PromptError::MaxTurns, UnknownToolCall and Cancelled",
        "concurrency": "shared",
    })
}

// Each failure is rig's, checked by driving rig directly (tests/library.rs, cargo test).
const UNKNOWN_TOOL: &str = "a call of a tool the agent lacks fails the run with PromptError::UnknownToolCall: the default policy for a call no on_invalid_tool_call hook resolves is UnhandledInvalidToolCall::Fail (rig-agent run/spec.rs), and its one alternative, Ignore, drops the call unanswered";
const NULL_ARGS: &str = "rig reads the arguments null as an empty object: ToolFunction::parse (rig-core completion/message.rs) maps Ok(Value::Null) to {}, so the tool runs with {}";
const UNCHECKED: &str = "rig checks no parameters schema: a tool's arguments are checked only by deserializing them into its Tool::Args type, and a tool known at run time is a DynamicTool whose arguments are a serde_json::Value (rig-core tool/contextual.rs), so wrong-typed, missing and undeclared values reach it";
const TOO_DEEP: &str = "serde_json's recursion limit (128) refuses the arguments; ToolFunction::parse (rig-core completion/message.rs) keeps them as invalid_arguments and the model is told they are not a JSON object (rig-core transcript.rs), never that they nest too deep";
const REDACTED: &str = "by design rig hides a tool's error message from the model: ToolExecutionError::from_error (rig-core tool/result.rs), what Tool::map_error does by default, keeps the message for operators and shows the model a fixed sentence for its kind";
const QUADRATIC: &str = "on arguments serde_json refuses, ToolFunction::parse (rig-core completion/message.rs) falls back to json_utils::parse_partial_object, which copies its stack of open brackets at each bracket: about 14 GB and 13 s for 100,000 levels in a direct run of an unoptimised build, so the run does not return in time";

fn known_failures() -> Value {
    let mut failures = json!({
        "An unknown tool name is never run, and the loop goes on": UNKNOWN_TOOL,
        "An unknown tool name never crashes the run, also when it is the last step": UNKNOWN_TOOL,
        "The agent is told that the tool it chose does not exist": UNKNOWN_TOOL,
        "test_tool_args_that_are_json_but_not_an_object_never_reach_the_tool[null]": NULL_ARGS,
        "Tool args that break the tool's schema never reach it with a wrong or missing value": UNCHECKED,
        "An argument the schema does not declare is refused, naming it, not dropped": UNCHECKED,
        "The error observation carries the exception's message": REDACTED,
    });
    let deep = "test_tool_args_of_any_size_or_nesting_reach_the_tool_intact_or_are_refused_saying_why[store-";
    for args in [
        "an object nested 5000 levels deep",
        "an object nested 5000 levels deep after an escaped quote",
        "arrays nested 5000 levels deep inside its object",
        "arrays nested 5000 levels deep, each beside an empty one",
    ] {
        failures[format!("{deep}{args}]")] = TOO_DEEP.into();
    }
    failures[format!("{deep}an object nested 100000 levels deep]")] = QUADRATIC.into();
    failures
}

fn text(value: &Value) -> String {
    value.as_str().unwrap_or_default().to_string()
}

fn list(value: &Value) -> &[Value] {
    value.as_array().map(Vec::as_slice).unwrap_or_default()
}

// -- the tools --------------------------------------------------------------------------------------

/// The suite's run a rig run works for, in the run's `ToolContext` (rig clones it into every tool
/// dispatch, and hands it to the dispatch hook): the runs of one agent share its bus, whose driver
/// any of them may poll, so a tool call need not run on its own run's thread.
#[derive(Serialize, Deserialize)]
struct SuiteRun(String);

impl ContextValue for SuiteRun {
    const KEY: &'static str = "react_conformance.run";
}

fn run_of(context: Option<&ToolContext>) -> Option<Run> {
    context.and_then(|context| context.get::<SuiteRun>().ok().flatten()).map(|run| Run::new(run.0))
}

type Called = Result<ToolOutput, ToolExecutionError>;

/// `f` as a DynamicTool's callback (rig's ToolCallback: a future that may borrow the context).
fn for_each_call<F>(f: F) -> impl for<'a> Fn(&'a mut ToolContext, Value) -> WasmBoxedFuture<'a, Called> + Send + Sync
where
    F: Fn(&mut ToolContext, Value) -> WasmBoxedFuture<'static, Called> + Send + Sync,
{
    move |context, args| f(context, args)
}

/// The suite's tools as rig tools; each call goes to the suite for the run its context names.
fn tools(spec: &Value) -> Result<Vec<DynamicTool>, Error> {
    list(&spec["tools"])
        .iter()
        .map(|tool| {
            let name = text(&tool["name"]);
            let called = name.clone();
            let callback = for_each_call(move |context: &mut ToolContext, args: Value| {
                let ran = match run_of(Some(context)) {
                    Some(run) => run.call_tool(&called, &args),
                    None => Err("a tool call outside any run of the suite's".into()),
                };
                Box::pin(async move {
                    match ran {
                        Ok(result) => result.into_tool_output(),
                        Err(error) => match error.downcast::<protocol::ToolError>() {
                            Ok(raised) => Err(ToolExecutionError::from_error(*raised)),
                            Err(other) => Err(ToolExecutionError::from_error(HarnessError(other.to_string()))),
                        },
                    }
                })
            });
            let name = ToolName::new(name)?;
            Ok(DynamicTool::new_with_context(name, text(&tool["description"]), protocol::json_schema(tool), callback))
        })
        .collect()
}

#[derive(Debug)]
struct HarnessError(String);

impl std::fmt::Display for HarnessError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for HarnessError {}

/// The approval callback: rig's dispatch hook asks the person before each call of a tool that
/// needs approval.
struct Approvals {
    needed: Vec<String>,
}

impl AgentHook for Approvals {
    async fn on_dispatch(&self, _ctx: &HookContext, event: DispatchEvent<'_>) -> DispatchAction {
        let Some(name) = event.tool_name().filter(|name| self.needed.iter().any(|needed| needed == name)) else {
            return DispatchAction::proceed();
        };
        let args = protocol::parse_deep(event.tool_args().unwrap_or("{}")).unwrap_or(Value::Null);
        let call_id = event.call_id.map(|id| id.to_string());
        let Some(run) = run_of(event.context) else {
            return DispatchAction::skip("no person to ask: the call came outside any run");
        };
        match run.ask_approval(name, &args, call_id.as_deref()).map(|said| protocol::read_approval(&said)) {
            Ok(Approval::Approve) => DispatchAction::proceed(),
            Ok(Approval::Reject) | Err(_) => DispatchAction::skip("the person rejected this call"),
            Ok(Approval::Message(said)) => DispatchAction::skip(said),
            // The edit as rig's hook expresses it: the call with the person's name and args (rig
            // refuses a patch that changes the tool, agent/hook.rs validate_dispatch_patch).
            Ok(Approval::Edit { name: edited, args }) => DispatchAction::patch(EffectKind::ToolCall {
                name: edited.unwrap_or_else(|| name.to_string()),
                args: protocol::serde_json::to_string(&args).unwrap_or_default(),
            }),
        }
    }
}

// -- the agents -------------------------------------------------------------------------------------

/// rig's OpenAI Chat Completions model: over the in-process endpoint for `run`, or over rig's
/// reqwest client at the suite's `base_url`.
fn model(run: Option<Run>, base_url: Option<&str>) -> rig::Model<rig::providers::openai::wire::Chat> {
    let config = OpenAIConfig::new("placeholder-key");
    match base_url {
        Some(url) => config.with_base_url(url).connect(ReqwestClient::default()).chat("scripted"),
        None => {
            config.with_base_url("http://scripted.invalid/v1").connect(endpoint::Endpoint::new(run)).chat("scripted")
        }
    }
}

/// The agent, built once per `build` and shared by its runs. Its own model serves no run: each run
/// gives the same model, bound to its run, as the run's model (`AgentRunner::using_model_value`).
fn agent(spec: &Value) -> Result<Agent, Error> {
    let mut builder = AgentBuilder::new(model(None, None));
    let instructions = text(&spec["signature"]["instructions"]);
    if !instructions.is_empty() {
        builder = builder.preamble(instructions);
    }
    if let Some(cap) = spec["max_steps"].as_u64() {
        builder = builder.default_max_turns(cap as usize);
    }
    let needed: Vec<String> =
        list(&spec["tools"]).iter().filter(|t| t["interruptible"] == true).map(|t| text(&t["name"])).collect();
    if !needed.is_empty() {
        builder = builder.add_hook(Approvals { needed });
    }
    Ok(builder.dynamic_tools(tools(spec)?).build())
}

/// A tool call's arguments as the model wrote them: JSON data, or the text when it is not JSON.
fn args_of(arguments: &Object, invalid: Option<&str>) -> Value {
    match invalid {
        Some(raw) => protocol::wire(&protocol::parse_deep(raw).unwrap_or_else(|_| Value::String(raw.to_string()))),
        None => protocol::wire(&Value::Object(arguments.clone())),
    }
}

fn result_text(content: &[ToolResultContent]) -> String {
    content
        .iter()
        .map(|item| match item {
            ToolResultContent::Text(text) => text.text.clone(),
            ToolResultContent::Json { value } => value.to_string(),
            _ => String::new(),
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The run's messages as the suite's steps: each tool call of an assistant turn with the tool
/// result of its call id (null where none came), and the number of assistant turns.
fn trajectory(messages: &[Message]) -> (Vec<Value>, usize) {
    let mut results = HashMap::new();
    for message in messages {
        if let Message::User { content } = message {
            for item in content {
                if let UserContent::ToolResult(result) = item {
                    results.insert(result.call.to_string(), (result_text(&result.content), result.is_error));
                }
            }
        }
    }
    let (mut steps, mut replies) = (Vec::new(), 0);
    for message in messages {
        let Message::Assistant(turn) = message else { continue };
        replies += 1;
        let thought: String = turn
            .content
            .iter()
            .filter_map(|item| if let AssistantContent::Text(text) = item { Some(text.text.as_str()) } else { None })
            .collect();
        let thought = if thought.is_empty() { Value::Null } else { Value::String(thought) };
        for item in &turn.content {
            let AssistantContent::ToolCall(call) = item else { continue };
            let id = call.id.to_string();
            let (observation, is_error) = match results.get(&id) {
                Some((observation, failed)) => (Value::String(observation.clone()), Value::Bool(*failed)),
                None => (Value::Null, Value::Null),
            };
            steps.push(json!({"thought": thought, "tool_name": call.function.name.as_str(),
                "tool_args": args_of(&call.function.arguments, call.function.invalid_arguments.as_deref()),
                "observation": observation, "is_error": is_error, "call_id": id}));
        }
    }
    (steps, replies)
}

/// A streamed run (`AgentRunner::stream`), read as it comes: a step event for each tool result,
/// with the call it answers and the text the model wrote beside it, and the run's end.
async fn stream(run: &Run, prompt: AgentRunner) -> (Result<PromptResponse, PromptError>, Vec<Value>) {
    let mut items = prompt.stream();
    let (mut events, mut calls, mut thought) = (Vec::new(), HashMap::new(), String::new());
    let mut ended =
        Err(PromptError::Provider(ProviderError::Response("the stream ended without a final response".into())));
    while let Some(item) = items.next().await {
        match item {
            Ok(MultiTurnStreamItem::StreamAssistantItem(Item::Event(StreamEvent::Text { text, .. }))) => {
                thought.push_str(&text)
            }
            Ok(MultiTurnStreamItem::ToolCall { tool_call }) => {
                calls.insert(tool_call.id.to_string(), (tool_call, thought.clone()));
            }
            Ok(MultiTurnStreamItem::ToolResult { tool_result }) => {
                thought.clear();
                let id = tool_result.call.to_string();
                let Some((call, said)) = calls.get(&id) else { continue };
                let step = json!({"thought": if said.is_empty() { Value::Null } else { said.clone().into() },
                    "tool_name": call.function.name.as_str(),
                    "tool_args": args_of(&call.function.arguments, call.function.invalid_arguments.as_deref()),
                    "observation": result_text(&tool_result.content), "is_error": tool_result.is_error, "call_id": id});
                events.push(json!({"kind": "step", "model_calls": endpoint::model_calls(run), "step": step}));
            }
            Ok(MultiTurnStreamItem::FinalResponse(response)) => ended = Ok(response),
            Ok(_) => {}
            Err(error) => {
                ended = Err(error);
                break;
            }
        }
    }
    (ended, events)
}

/// The partial run beside PromptError::MaxTurns: the history it carries.
fn cap_fields(spec: &Value, done: &[Value], iterations: usize, cap: usize) -> Object {
    let own: Vec<String> = list(&spec["tools"]).iter().map(|t| text(&t["name"])).collect();
    let ran: Vec<&Value> =
        done.iter().filter(|s| own.contains(&text(&s["tool_name"])) && !s["observation"].is_null()).collect();
    object(json!({"iterations": iterations, "max_iterations": cap,
                  "tools_used": ran.iter().map(|s| s["tool_name"].clone()).collect::<Vec<_>>(),
                  "history": done, "last_observation": ran.last().map(|s| s["observation"].clone())}))
}

#[derive(Default)]
struct Built {
    spec: Value,
    agent: Option<Agent>,
    last: Vec<Message>,
}

#[derive(Default)]
struct Harness {
    agents: Mutex<HashMap<String, Arc<Mutex<Built>>>>,
}

impl Harness {
    fn entry(&self, id: &str) -> Result<Arc<Mutex<Built>>, Error> {
        let agents = self.agents.lock().expect("the agents");
        agents.get(id).cloned().ok_or_else(|| format!("no agent {id} was built").into())
    }
}

fn outcome(spec: &Value, result: Result<PromptResponse, PromptError>) -> (Value, Vec<Message>) {
    match result {
        Ok(response) => {
            let (done, _) = trajectory(response.messages());
            let outputs = protocol::reply_outputs(&spec["signature"], &response.output());
            let outcome = json!({"outputs": outputs, "trajectory": done, "stop_reason": "finish",
                                 "iterations": response.completion_calls().len()});
            (outcome, response.messages().to_vec())
        }
        Err(error) => {
            let history = match &error {
                PromptError::MaxTurns { chat_history, .. }
                | PromptError::UnknownToolCall { chat_history, .. }
                | PromptError::Cancelled { chat_history, .. } => chat_history.clone(),
                _ => Vec::new(),
            };
            let (done, iterations) = trajectory(&history);
            let mut outcome = json!({"trajectory": done, "iterations": iterations});
            let variant = match &error {
                PromptError::Provider(_) => "Provider",
                PromptError::Report(_) => "Report",
                PromptError::Memory(_) => "Memory",
                PromptError::MaxTurns { .. } => "MaxTurns",
                PromptError::Cancelled { .. } => "Cancelled",
                PromptError::UnknownToolCall { .. } => "UnknownToolCall",
                _ => "PromptError",
            };
            let info = if let PromptError::MaxTurns { max_turns, .. } = &error {
                outcome["stop_reason"] = "max_steps".into();
                let fields = cap_fields(spec, &done, iterations, *max_turns);
                protocol::error_info(&error, "MaxTurns", Some("max-iterations"), fields)
            } else {
                protocol::error_info(&error, variant, None, Object::new())
            };
            let mut info = info;
            info["type"] = format!("PromptError::{variant}").into();
            outcome["error"] = info;
            (outcome, history)
        }
    }
}

impl protocol::Handlers for Harness {
    fn hello(&self, _cmd: &Object) -> Result<Object, Error> {
        let lock = include_str!("../Cargo.lock");
        let dependencies = protocol::dependencies("[dependencies]\nrig = 1\nrig-core = 1\nrig-agent = 1\n", lock);
        Ok(object(json!({"name": "rig", "version": dependencies["rig"], "capabilities": CLAIMED,
                         "not_claimed": not_claimed(), "known_failures": known_failures(), "parity": parity(),
                         "approval_form": "callback", "dependencies": dependencies})))
    }

    fn configure(&self, _cmd: &Object) -> Result<Object, Error> {
        Ok(Object::new())
    }

    fn build(&self, cmd: &Object) -> Result<Object, Error> {
        let spec = cmd.get("spec").cloned().unwrap_or_default();
        let built = Built { agent: Some(agent(&spec)?), spec, last: Vec::new() };
        self.agents.lock().expect("the agents").insert(text(&cmd["agent"]), Arc::new(Mutex::new(built)));
        Ok(object(json!({"error": null})))
    }

    fn run(&self, run: &Run, cmd: &Object) -> Result<Object, Error> {
        let entry = self.entry(&text(&cmd["agent"]))?;
        let (spec, agent) = {
            let built = entry.lock().expect("an agent");
            (built.spec.clone(), built.agent.clone().ok_or("the agent was not built")?)
        };
        let call = &cmd["call"];
        let user = protocol::user_message(call["inputs"].as_object().unwrap_or(&Object::new()));
        let mut context = ToolContext::new();
        context.insert(SuiteRun(run.id().to_string()))?;
        let mut prompt = agent
            .prompt(user)
            .using_model_value(model(Some(run.clone()), call["base_url"].as_str()))
            .tool_context(context);
        if let Some(cap) = call["max_steps"].as_u64() {
            prompt = prompt.max_turns(cap as usize);
        }
        let mode = text(&call["mode"]);
        let streamed = run.clone();
        // Each run on a runtime of its own, on a thread with the protocol module's stack (deep
        // enough for tool args nested 100,000 levels), watched: a library that does not return is
        // reported hung, not left to the suite's timeout.
        let (result, events) = protocol::within(run, HUNG_AFTER, move || -> Result<_, Error> {
            let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
            Ok(match mode.as_str() {
                // The async form an async application uses: the run as a task of its own, awaited.
                "async" => (runtime.block_on(async move { tokio::spawn(prompt.run()).await })?, None),
                "stream" => {
                    let (result, events) = runtime.block_on(stream(&streamed, prompt));
                    (result, Some(events))
                }
                _ => (runtime.block_on(prompt.run()), None),
            })
        })??;
        let (mut outcome, messages) = outcome(&spec, result);
        if let Some(mut events) = events {
            events.push(json!({"kind": "done", "model_calls": endpoint::model_calls(run),
                               "stop_reason": outcome["stop_reason"], "outputs": outcome["outputs"]}));
            outcome["events"] = events.into();
        }
        entry.lock().expect("an agent").last = messages;
        Ok(object(json!({"outcome": outcome})))
    }

    fn mutate_last_result(&self, cmd: &Object) -> Result<Object, Error> {
        let entry = self.entry(&text(&cmd["agent"]))?;
        let mut built = entry.lock().expect("an agent");
        let marker = text(&cmd["marker"]);
        let held = built.last.len();
        for message in &mut built.last {
            match message {
                Message::Assistant(turn) => {
                    for item in &mut turn.content {
                        if let AssistantContent::Text(text) = item {
                            text.text.clone_from(&marker);
                        }
                    }
                }
                Message::User { content } => {
                    for item in content {
                        if let UserContent::ToolResult(result) = item {
                            for part in &mut result.content {
                                if let ToolResultContent::Text(text) = part {
                                    text.text.clone_from(&marker);
                                }
                            }
                        }
                    }
                }
                _ => {}
            }
        }
        Ok(object(json!({"changed": [format!("PromptResponse.messages ({held} messages)")]})))
    }
}

fn main() {
    protocol::serve(Harness::default())
}
