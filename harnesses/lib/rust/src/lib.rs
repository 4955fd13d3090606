//! The react-conformance harness protocol (version 3) for Rust harnesses: JSON lines on stdio,
//! with serde_json the only dependency. It mirrors harnesses/lib/protocol.mjs; the message shapes
//! are harnesses/protocol.schema.json, and docs/writing-a-harness.md explains them.
//!
//! [`serve`] reads the suite's commands from stdin and writes the replies on the protocol stream.
//! The harness implements [`Handlers`]. Each command runs on a thread of its own; a run's requests
//! go through its [`Run`], a handle that is `Send + Clone`: move it into whatever thread or async
//! task the library calls your model seam or tools on, and concurrent runs need no bookkeeping.
//! On the command's own thread (and inside [`Run::enter`]) [`current_run`] finds it too.

mod output;
mod versions;

use std::cell::RefCell;
use std::collections::HashMap;
use std::fmt;
use std::io::BufRead;
use std::panic::{self, AssertUnwindSafe};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{self, Sender};
use std::sync::{Arc, Mutex, OnceLock};
use std::thread;

pub use serde_json::{self, json, Map, Value};
pub use versions::dependencies;

/// The protocol version: the binding contract's (conformance/binding.py, CONTRACT_VERSION).
pub const PROTOCOL: u64 = 3;

/// How deep a value may nest in a protocol message: the suite's JSON parser refuses a message
/// nested deeper than about 200 levels.
pub const DEEPEST: usize = 150;

/// The stack of every thread the module starts: a value nested a hundred thousand levels deep
/// (ARGS-5) is parsed, written and dropped recursively by serde_json. Untouched pages cost nothing.
pub const STACK_BYTES: usize = 512 << 20;

/// A JSON object as the protocol carries it.
pub type Object = Map<String, Value>;

/// A command's failure: any error, sent as the `failed` reply's message.
pub type Error = Box<dyn std::error::Error + Send + Sync>;

/// Answers the suite's commands; each returns the reply's payload. The optional commands have
/// defaults: `resume` and `configure` fail as commands this harness lacks, `global_adapter` and
/// `step_tool_names` answer null.
pub trait Handlers: Send + Sync + 'static {
    fn hello(&self, cmd: &Object) -> Result<Object, Error>;
    fn build(&self, cmd: &Object) -> Result<Object, Error>;
    /// Runs one call; `run` carries the run id for the library's callbacks.
    fn run(&self, run: &Run, cmd: &Object) -> Result<Object, Error>;
    fn mutate_last_result(&self, cmd: &Object) -> Result<Object, Error>;
    fn resume(&self, _run: &Run, _cmd: &Object) -> Result<Object, Error> {
        Err("this harness has no resume command".into())
    }
    fn configure(&self, _cmd: &Object) -> Result<Object, Error> {
        Err("this harness has no configure command".into())
    }
    fn global_adapter(&self, _cmd: &Object) -> Result<Object, Error> {
        Ok(object(json!({"adapter": null})))
    }
    fn step_tool_names(&self, _cmd: &Object) -> Result<Object, Error> {
        Ok(object(json!({"names": null})))
    }
}

/// A tool's error as the suite sent it: `kind` is the tool's exception name.
#[derive(Debug, Clone)]
pub struct ToolError {
    pub kind: String,
    pub message: String,
}

impl fmt::Display for ToolError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for ToolError {}

/// The library did not return in time: the `failed` reply says `hung`, so the scenario fails as
/// hung (as a Python binding's does under the suite's guard) instead of errored. [`within`] makes it.
#[derive(Debug, Clone)]
pub struct LibraryHung(pub String);

impl fmt::Display for LibraryHung {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for LibraryHung {}

/// `f`'s result if it returns within `seconds`, run on a thread of its own (the module's stack,
/// `run` entered); else [`LibraryHung`]. Give it less than the suite's `--conformance-timeout`
/// (30 s by default, of which a harness has 0.9). A thread cannot be stopped: the library goes on
/// in it, but every request of the abandoned run fails at once, without reaching the suite.
pub fn within<T: Send + 'static>(run: &Run, seconds: f64, f: impl FnOnce() -> T + Send + 'static) -> Result<T, Error> {
    let (done, result) = mpsc::channel();
    let inner = run.clone();
    spawn(move || {
        let _ = done.send(inner.enter(f));
    });
    result.recv_timeout(std::time::Duration::from_secs_f64(seconds)).map_err(|_| {
        abandoned().lock().expect("the abandoned runs").push(run.id.clone());
        Box::new(LibraryHung(format!("the library did not return within {seconds} s"))) as Error
    })
}

fn abandoned() -> &'static Mutex<Vec<String>> {
    static ABANDONED: OnceLock<Mutex<Vec<String>>> = OnceLock::new();
    ABANDONED.get_or_init(Default::default)
}

/// The suite did not expect a model request (its answer had no turn): fail the model call.
#[derive(Debug, Clone)]
pub struct UnexpectedModelCall(pub String);

impl fmt::Display for UnexpectedModelCall {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "unexpected model call: {}", self.0)
    }
}

impl std::error::Error for UnexpectedModelCall {}

thread_local! {
    static CURRENT: RefCell<Option<Run>> = const { RefCell::new(None) };
}

/// The run the calling thread works for: set on a command's thread and inside [`Run::enter`].
pub fn current_run() -> Option<Run> {
    CURRENT.with(|current| current.borrow().clone())
}

/// One run of the suite's: every request the library makes during it goes through this handle.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Run {
    id: String,
}

impl Run {
    pub fn new(id: impl Into<String>) -> Self {
        Run { id: id.into() }
    }

    /// The run's id, as the suite named it.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// `f`, with [`current_run`] this run on the calling thread (a thread the library starts).
    pub fn enter<T>(&self, f: impl FnOnce() -> T) -> T {
        let before = CURRENT.with(|current| current.replace(Some(self.clone())));
        let result = f();
        CURRENT.with(|current| *current.borrow_mut() = before);
        result
    }

    /// The scripted turn answering `call` (an LMCall); [`UnexpectedModelCall`] if the script did
    /// not expect it.
    pub fn ask_model(&self, call: Value) -> Result<Object, Error> {
        let answer = self.ask("model", object(json!({"call": call})))?;
        match (answer.get("turn"), answer.get("error")) {
            (Some(Value::Object(turn)), None | Some(Value::Null)) => Ok(turn.clone()),
            (_, error) => Err(Box::new(UnexpectedModelCall(text_or(error, "no turn")))),
        }
    }

    /// The standing answer to an auxiliary model call (one the harness names in its welcome's
    /// `auxiliary_calls`), `continue`: render it as the library's "go on, unchanged".
    pub fn ask_auxiliary(&self, name: &str, call: Value) -> Result<String, Error> {
        let mut call = object(call);
        call.insert("kind".into(), "auxiliary".into());
        call.insert("auxiliary".into(), name.into());
        let answer = self.ask("model", object(json!({"call": call})))?;
        match (answer.get("auxiliary"), answer.get("error")) {
            (Some(Value::String(text)), None | Some(Value::Null)) => Ok(text.clone()),
            (_, error) => Err(Box::new(UnexpectedModelCall(text_or(error, "no answer")))),
        }
    }

    /// The person's answer to the library's approval callback for the call `name(args)`
    /// (`approval_form: "callback"` in the welcome): yes, no, free text, or an edit as JSON text;
    /// [`read_approval`] reads it.
    pub fn ask_approval(&self, name: &str, args: &Value, call_id: Option<&str>) -> Result<String, Error> {
        let answer = self.ask("approve", object(json!({"name": name, "args": wire(args), "call_id": call_id})))?;
        Ok(answer.get("response").and_then(Value::as_str).unwrap_or_default().to_string())
    }

    /// Runs the suite's tool `name` with `args` and returns its result; a [`ToolError`] when the
    /// tool raised. Args nested deeper than a protocol message may be travel as their JSON text
    /// (`args_json`), which the suite parses to any depth.
    pub fn call_tool(&self, name: &str, args: &Value) -> Result<Value, Error> {
        let fields = if depth(args, DEEPEST) > DEEPEST {
            json!({"name": name, "args": null, "args_json": serde_json::to_string(args)?})
        } else {
            json!({"name": name, "args": args})
        };
        let mut answer = self.ask("tool", object(fields))?;
        if let Some(Value::Object(error)) = answer.get("error") {
            let field = |key: &str| error.get(key).and_then(Value::as_str).unwrap_or_default().to_string();
            return Err(Box::new(ToolError { kind: field("type"), message: field("message") }));
        }
        Ok(answer.remove("result").unwrap_or(Value::Null))
    }

    /// A `hang` fault's notice: the request's own timeout in seconds (None without one), which the
    /// suite passes on the run's model clock. Then fail the request as that timeout would.
    pub fn notify_hang(&self, timeout: Option<f64>) -> Result<(), Error> {
        send(&object(json!({"type": "hang", "run": self.id, "timeout": timeout})))
    }

    /// A retry's wait, on the run's model clock (NET-1), sent instead of sleeping.
    pub fn notify_sleep(&self, seconds: f64) -> Result<(), Error> {
        send(&object(json!({"type": "sleep", "run": self.id, "seconds": seconds})))
    }

    fn ask(&self, kind: &str, fields: Object) -> Result<Object, Error> {
        static NEXT: AtomicU64 = AtomicU64::new(1);
        if abandoned().lock().expect("the abandoned runs").contains(&self.id) {
            return Err(format!("run {} was reported hung: its {kind} request goes nowhere", self.id).into());
        }
        let id = format!("{kind}-{}", NEXT.fetch_add(1, Ordering::Relaxed));
        let (answered, answer) = mpsc::channel();
        waiting().lock().expect("the waiting list").insert(id.clone(), answered);
        let mut message = object(json!({"type": kind, "id": id, "run": self.id}));
        message.extend(fields);
        if let Err(error) = send(&message) {
            waiting().lock().expect("the waiting list").remove(&id);
            return Err(error);
        }
        answer.recv().map_err(|_| format!("the suite never answered {id}").into())
    }
}

/// A person's answer read as the suite means it (conformance.translate.approval).
#[derive(Debug, Clone, PartialEq)]
pub enum Approval {
    Approve,
    Reject,
    /// Free text: the person's message to the model.
    Message(String),
    /// An edited call: its tool name (None if it names none) and args.
    Edit {
        name: Option<String>,
        args: Value,
    },
}

/// A person's answer (an approval's, or a resume's `response`) as an [`Approval`].
pub fn read_approval(response: &str) -> Approval {
    match response.trim().to_lowercase().as_str() {
        "yes" | "y" => return Approval::Approve,
        "no" | "n" => return Approval::Reject,
        _ => {}
    }
    let Ok(Value::Object(mut edit)) = serde_json::from_str::<Value>(response) else {
        return Approval::Message(response.to_string());
    };
    if let Some(Value::Object(inner)) = edit.remove("edit") {
        edit = inner;
    }
    let name = edit.get("name").and_then(Value::as_str).map(str::to_string);
    Approval::Edit { name, args: edit.remove("args").unwrap_or(Value::Null) }
}

/// An HTTP response as the suite's endpoint would give it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FaultResponse {
    pub status: u16,
    /// Lower-case names.
    pub headers: Vec<(String, String)>,
    pub body: String,
}

/// A scripted HTTP fault (a `fault` turn with a status) as the endpoint answers it: the status,
/// its headers (Retry-After) and an error body that says what failed in words, never the status
/// code (as server.py does).
pub fn fault_response(turn: &Object) -> Result<FaultResponse, Error> {
    let fault = turn.get("fault").map(text).unwrap_or_default();
    let status: u16 = fault.parse().map_err(|_| format!("a fault turn without an HTTP status: {fault}"))?;
    let mut headers = vec![("content-type".to_string(), "application/json".to_string())];
    if let Some(after) = turn.get("retry_after").filter(|after| !after.is_null()) {
        headers.push(("retry-after".to_string(), text(after)));
    }
    let reason = match status {
        400 => "Bad Request",
        401 => "Unauthorized",
        403 => "Forbidden",
        404 => "Not Found",
        408 => "Request Timeout",
        409 => "Conflict",
        413 => "Payload Too Large",
        422 => "Unprocessable Entity",
        429 => "Too Many Requests",
        500 => "Internal Server Error",
        502 => "Bad Gateway",
        503 => "Service Unavailable",
        504 => "Gateway Timeout",
        _ if status >= 500 => "server error",
        _ => "client error",
    };
    let body = json!({"error": {"message": format!("scripted fault: {reason}")}});
    Ok(FaultResponse { status, headers, body: body.to_string() })
}

/// An error as the protocol's ErrorInfo: a [`ToolError`]'s own name, else `type_name` (Rust
/// errors carry no class name at run time: give the library's error type). `kind` "other" unless
/// given.
pub fn error_info(
    error: &(dyn std::error::Error + 'static),
    type_name: &str,
    kind: Option<&str>,
    fields: Object,
) -> Value {
    let name = match error.downcast_ref::<ToolError>() {
        Some(tool_error) => tool_error.kind.clone(),
        None => type_name.rsplit("::").next().unwrap_or(type_name).to_string(),
    };
    json!({"type": name, "message": error.to_string(), "kind": kind.unwrap_or("other"), "fields": fields})
}

/// A value as a protocol message may carry it (a step's `tool_args`): nested deeper than the
/// suite parses a message, its JSON text.
pub fn wire(value: &Value) -> Value {
    if depth(value, DEEPEST) <= DEEPEST {
        return value.clone();
    }
    Value::String(serde_json::to_string(value).unwrap_or_else(|error| error.to_string()))
}

/// render.user_message: the one input's text, or `name: value` lines in the order sent.
pub fn user_message(inputs: &Object) -> String {
    if inputs.len() == 1 {
        return inputs.values().map(text).collect();
    }
    inputs.iter().map(|(name, value)| format!("{name}: {}", text(value))).collect::<Vec<_>>().join("\n")
}

/// FinalTurn.reply_text: the one output's text, or a JSON object of them all.
pub fn reply_text(outputs: &Object) -> String {
    if outputs.len() == 1 {
        return outputs.values().map(text).collect();
    }
    Value::Object(outputs.clone()).to_string()
}

/// render.reply_outputs: the reply under the signature's one output name ("answer" when it names
/// none), or the JSON object of several.
pub fn reply_outputs(signature: &Value, reply: &str) -> Object {
    let fields = signature["outputs"].as_array().map(Vec::as_slice).unwrap_or_default();
    let mut names: Vec<String> = fields.iter().map(|f| f["name"].as_str().unwrap_or_default().to_string()).collect();
    if names.is_empty() {
        names.push("answer".into());
    }
    if names.len() > 1 {
        if let Ok(Value::Object(values)) = serde_json::from_str::<Value>(reply) {
            return values;
        }
    }
    object(json!({ names[0].clone(): reply }))
}

/// ToolSpec.json_schema: a suite tool's parameters as a JSON schema, every one required.
pub fn json_schema(tool: &Value) -> Value {
    let (mut properties, mut required) = (Object::new(), Vec::new());
    for param in tool["parameters"].as_array().map(Vec::as_slice).unwrap_or_default() {
        let kind = match param["type"].as_str().unwrap_or_default() {
            "str" => "string",
            "int" => "integer",
            "float" => "number",
            "bool" => "boolean",
            "list" => "array",
            "dict" => "object",
            _ => "",
        };
        let name = param["name"].as_str().unwrap_or_default().to_string();
        properties.insert(name.clone(), json!({"type": kind, "description": param["description"]}));
        required.push(name);
    }
    json!({"type": "object", "properties": properties, "required": required, "additionalProperties": false})
}

/// `value` as an object (an empty one if it is none).
pub fn object(value: Value) -> Object {
    match value {
        Value::Object(map) => map,
        _ => Object::new(),
    }
}

/// Serves the suite until it says stop (or closes stdin), then exits the process.
pub fn serve(handlers: impl Handlers) -> ! {
    output::keep_stdout_off_the_wire();
    let handlers: Arc<dyn Handlers> = Arc::new(handlers);
    let stdin = std::io::stdin();
    let mut lines = stdin.lock();
    let mut line = String::new();
    loop {
        line.clear();
        match lines.read_line(&mut line) {
            Ok(0) | Err(_) => std::process::exit(0),
            Ok(_) if line.trim().is_empty() => continue,
            Ok(_) => {}
        }
        let message = match parse_deep(&line) {
            Ok(Value::Object(message)) => message,
            Ok(other) => exit_on(&format!("a line that is no JSON object: {other}")),
            Err(error) => exit_on(&format!("a line that is not JSON: {error}")),
        };
        dispatch(&handlers, message);
    }
}

/// `text` parsed as one JSON value, at any nesting depth (serde_json stops at 128 levels by
/// default): parse tool args nested thousands of levels deep on a thread of the module's (or one
/// with [`STACK_BYTES`] of stack), as the parse recurses.
pub fn parse_deep(text: &str) -> serde_json::Result<Value> {
    let mut reader = serde_json::Deserializer::from_str(text);
    reader.disable_recursion_limit();
    let mut values = reader.into_iter::<Value>();
    let value = values.next().unwrap_or_else(|| serde_json::from_str(""))?;
    match values.next() {
        None => Ok(value),
        Some(Err(error)) => Err(error),
        Some(Ok(_)) => serde_json::from_str::<Value>("1 2"), // its "trailing characters" error
    }
}

fn exit_on(problem: &str) -> ! {
    eprintln!("protocol: {problem}");
    std::process::exit(2)
}

fn dispatch(handlers: &Arc<dyn Handlers>, message: Object) {
    match message.get("type").and_then(Value::as_str) {
        Some("turn" | "observation" | "approval") => {
            let id = message.get("id").map(text).unwrap_or_default();
            let queue = waiting().lock().expect("the waiting list").remove(&id);
            if let Some(queue) = queue {
                let _ = queue.send(message);
            }
        }
        Some("stop") => {
            let _ = send(&object(json!({"type": "done", "id": message.get("id")})));
            std::process::exit(0) // the library's threads end with the process
        }
        _ => {
            let handlers = Arc::clone(handlers);
            spawn(move || reply(&*handlers, &message));
        }
    }
}

fn spawn(f: impl FnOnce() + Send + 'static) {
    thread::Builder::new().stack_size(STACK_BYTES).spawn(f).expect("a thread for a command");
}

fn reply(handlers: &dyn Handlers, cmd: &Object) {
    let kind = cmd.get("type").and_then(Value::as_str).unwrap_or_default();
    let reply_type = match kind {
        "hello" => "welcome",
        "configure" | "mutate_last_result" => "done",
        "global_adapter" => "adapter",
        "build" => "built",
        "run" | "resume" => "ran",
        "run_concurrently" => "ran_all",
        "step_tool_names" => "names",
        _ => "failed",
    };
    let sent = caught(|| carry_out(handlers, kind, cmd)).and_then(|payload| {
        let mut message = object(json!({"type": reply_type, "id": cmd.get("id")}));
        message.extend(payload);
        send(&message)
    });
    if let Err(error) = sent {
        let mut failed = object(json!({"type": "failed", "id": cmd.get("id"), "message": error.to_string()}));
        if error.is::<LibraryHung>() {
            failed.insert("hung".into(), true.into());
        }
        let _ = send(&failed);
    }
}

fn carry_out(handlers: &dyn Handlers, kind: &str, cmd: &Object) -> Result<Object, Error> {
    let run = Run::new(cmd.get("run").and_then(Value::as_str).unwrap_or_default());
    match kind {
        "hello" => {
            let mut payload = handlers.hello(cmd)?;
            payload.insert("protocol".into(), PROTOCOL.into());
            Ok(payload)
        }
        "build" => handlers.build(cmd),
        "run" => run.enter(|| handlers.run(&run, cmd)),
        "resume" => run.enter(|| handlers.resume(&run, cmd)),
        "mutate_last_result" => handlers.mutate_last_result(cmd),
        "configure" => handlers.configure(cmd),
        "global_adapter" => handlers.global_adapter(cmd),
        "step_tool_names" => handlers.step_tool_names(cmd),
        "run_concurrently" => run_concurrently(handlers, cmd),
        _ => Err(format!("this harness has no {kind} command").into()),
    }
}

/// Each of the command's runs on a thread of its own, all at once; a run that fails or panics
/// fails the command.
fn run_concurrently(handlers: &dyn Handlers, cmd: &Object) -> Result<Object, Error> {
    let entries = cmd.get("runs").and_then(Value::as_array).cloned().unwrap_or_default();
    let results: Vec<Result<Value, Error>> = thread::scope(|scope| {
        let started: Vec<_> = entries
            .iter()
            .map(|entry| {
                let entry = object(entry.clone());
                thread::Builder::new()
                    .stack_size(STACK_BYTES)
                    .spawn_scoped(scope, move || {
                        let run = Run::new(entry.get("run").and_then(Value::as_str).unwrap_or_default());
                        caught(|| run.enter(|| handlers.run(&run, &entry)))
                            .map(|mut payload| payload.remove("outcome").unwrap_or(Value::Null))
                    })
                    .expect("a thread for a run")
            })
            .collect();
        started.into_iter().map(|run| run.join().expect("a run's thread")).collect()
    });
    let mut outcomes = Vec::new();
    let mut failures = Vec::new();
    for result in results {
        match result {
            Ok(outcome) => outcomes.push(outcome),
            Err(error) => failures.push(error.to_string()),
        }
    }
    if !failures.is_empty() {
        return Err(failures.join("\n").into());
    }
    Ok(object(json!({"outcomes": outcomes})))
}

/// `f`'s result; a panic in the harness is its failure, with the panic's message.
fn caught<T>(f: impl FnOnce() -> Result<T, Error>) -> Result<T, Error> {
    panic::catch_unwind(AssertUnwindSafe(f)).unwrap_or_else(|panicked| {
        let what = panicked
            .downcast_ref::<&str>()
            .map(|text| text.to_string())
            .or_else(|| panicked.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "a panic without a message".into());
        Err(format!("the harness panicked: {what}").into())
    })
}

fn waiting() -> &'static Mutex<HashMap<String, Sender<Object>>> {
    static WAITING: OnceLock<Mutex<HashMap<String, Sender<Object>>>> = OnceLock::new();
    WAITING.get_or_init(Default::default)
}

fn send(message: &Object) -> Result<(), Error> {
    let mut line = serde_json::to_string(message).map_err(|error| format!("a message that is not JSON: {error}"))?;
    line.push('\n');
    output::write_line(&line)?;
    Ok(())
}

fn depth(value: &Value, limit: usize) -> usize {
    let children: Box<dyn Iterator<Item = &Value>> = match value {
        Value::Object(map) => Box::new(map.values()),
        Value::Array(items) => Box::new(items.iter()),
        _ => return 0,
    };
    if limit == 0 {
        return 1;
    }
    1 + children.map(|child| depth(child, limit - 1)).max().unwrap_or(0)
}

/// A value as the text a message shows: a string as it is, anything else as JSON (an id, a
/// status, a Retry-After, a rendered input).
pub fn text(value: &Value) -> String {
    match value {
        Value::String(text) => text.clone(),
        other => other.to_string(),
    }
}

fn text_or(value: Option<&Value>, otherwise: &str) -> String {
    match value {
        None | Some(Value::Null) => otherwise.to_string(),
        Some(value) => text(value),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_call_that_returns_in_time_gives_its_result() {
        assert_eq!(within(&Run::new("quick"), 5.0, || 42).ok(), Some(42));
    }

    #[test]
    fn a_call_that_does_not_return_in_time_is_hung_and_its_run_asks_the_suite_nothing_more() {
        let run = Run::new("stuck");
        let (release, held) = mpsc::channel::<()>();
        let result = within(&run, 0.05, move || held.recv().is_ok());
        assert!(result.is_err_and(|error| error.is::<LibraryHung>()));
        // Refused before it is sent: the suite, which has moved on, would never answer it.
        let asked =
            within(&Run::new("asker"), 5.0, move || run.ask_model(json!({"kind": "step"})).map_err(|e| e.to_string()));
        assert!(matches!(asked, Ok(Err(message)) if message.contains("run stuck was reported hung")));
        release.send(()).expect("the held call");
    }
}
