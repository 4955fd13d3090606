//! Each known failure the rig harness lists, checked against rig itself: rig's Agent over its own
//! OpenAI Chat Completions client, whose HTTP client here answers from a fixed list of
//! chat.completion replies (no suite, no protocol). `cargo test --locked` runs them
//! (tests/suite/test_rust_harnesses.py does in CI).

use std::collections::VecDeque;
use std::future::Future;
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use rig::completion::message::ToolName;
use rig::completion::PromptError;
use rig::http_client::{self, HttpClientExt, LazyBody, MultipartForm, Request, Response, StreamingResponse};
use rig::providers::openai::OpenAIConfig;
use rig::serde_json::{self, json, Value};
use rig::tool::{DynamicTool, ToolExecutionError, ToolOutput};
use rig::wasm_compat::WasmCompatSend;
use rig::AgentBuilder;

/// An HTTP client that answers each request with the next reply of its list, and keeps the bodies.
#[derive(Clone, Default)]
struct Replies {
    replies: Arc<Mutex<VecDeque<Value>>>,
    requests: Arc<Mutex<Vec<Value>>>,
}

impl HttpClientExt for Replies {
    fn send<T, U>(
        &self,
        req: Request<T>,
    ) -> impl Future<Output = http_client::Result<Response<LazyBody<U>>>> + WasmCompatSend + 'static
    where
        T: Into<Bytes> + WasmCompatSend,
        U: From<Bytes> + WasmCompatSend + 'static,
    {
        let body: Bytes = req.into_body().into();
        self.requests.lock().unwrap().push(serde_json::from_slice(&body).unwrap());
        let reply = self.replies.lock().unwrap().pop_front().expect("a reply for every request");
        async move {
            if let Some(status) = reply["status"].as_u64() {
                let status = http::StatusCode::from_u16(status as u16).unwrap();
                return Err(http_client::Error::non_success_with_details(
                    status,
                    http::HeaderMap::new(),
                    String::new(),
                ));
            }
            let text = Bytes::from(reply.to_string());
            let body: LazyBody<U> = Box::pin(async move { Ok(U::from(text)) });
            Response::builder().status(200).body(body).map_err(http_client::Error::Protocol)
        }
    }

    fn send_multipart<U>(
        &self,
        _req: Request<MultipartForm>,
    ) -> impl Future<Output = http_client::Result<Response<LazyBody<U>>>> + WasmCompatSend + 'static
    where
        U: From<Bytes> + WasmCompatSend + 'static,
    {
        std::future::ready(Err(http_client::Error::instance(std::io::Error::other("no multipart"))))
    }

    fn send_streaming<T>(
        &self,
        _req: Request<T>,
    ) -> impl Future<Output = http_client::Result<StreamingResponse>> + WasmCompatSend
    where
        T: Into<Bytes> + WasmCompatSend,
    {
        std::future::ready(Err(http_client::Error::instance(std::io::Error::other("no streaming"))))
    }
}

fn completion(message: Value) -> Value {
    let finish = if message.get("tool_calls").is_some() { "tool_calls" } else { "stop" };
    json!({"id": "chatcmpl-1", "object": "chat.completion", "created": 0, "model": "m",
           "choices": [{"index": 0, "message": message, "finish_reason": finish}],
           "usage": {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0}})
}

/// A reply calling `name` with the argument text `arguments`.
fn calls(name: &str, arguments: &str) -> Value {
    completion(json!({"role": "assistant", "content": null, "tool_calls": [
        {"id": "call_1", "type": "function", "function": {"name": name, "arguments": arguments}}]}))
}

fn answers(text: &str) -> Value {
    completion(json!({"role": "assistant", "content": text}))
}

/// The tool `transfer(amount: integer, recipient: string)`, as the harness declares a suite tool:
/// a DynamicTool whose parameters are the JSON schema, keeping the arguments it receives; it raises
/// with `raises` when given.
fn transfer(received: Arc<Mutex<Vec<Value>>>, raises: Option<&'static str>) -> DynamicTool {
    let schema = json!({"type": "object", "additionalProperties": false, "required": ["amount", "recipient"],
                        "properties": {"amount": {"type": "integer"}, "recipient": {"type": "string"}}});
    DynamicTool::new(ToolName::new("transfer").unwrap(), "Send money", schema, move |args: Value| {
        received.lock().unwrap().push(args);
        Box::pin(async move {
            match raises {
                Some(message) => Err(ToolExecutionError::from_error(std::io::Error::other(message))),
                None => Ok(ToolOutput::text("sent")),
            }
        })
    })
}

/// Runs rig's Agent with `transfer` on the replies; the run's result, what the tool received and
/// the request bodies rig sent.
fn run(replies: Vec<Value>, raises: Option<&'static str>) -> (Result<String, PromptError>, Vec<Value>, Vec<Value>) {
    let http = Replies { replies: Arc::new(Mutex::new(replies.into())), ..Replies::default() };
    let model = OpenAIConfig::new("key").with_base_url("http://local.invalid/v1").connect(http.clone()).chat("m");
    let received = Arc::new(Mutex::new(Vec::new()));
    let agent = AgentBuilder::new(model).dynamic_tool(transfer(received.clone(), raises)).default_max_turns(3).build();
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let result = runtime.block_on(agent.prompt("Pay Ann").run()).map(|response| response.output());
    let received = received.lock().unwrap().clone();
    let requests = http.requests.lock().unwrap().clone();
    (result, received, requests)
}

/// The tool message rig sent the model in its second request.
fn tool_message(requests: &[Value]) -> String {
    let messages = requests[1]["messages"].as_array().unwrap();
    let tool = messages.iter().find(|m| m["role"] == "tool").expect("a tool message");
    tool["content"].to_string()
}

#[test]
fn a_server_error_is_not_retried() {
    // lm-retry, not claimed: rig classifies a 503 as retryable (rig-core error.rs) and sends it once.
    let (result, received, requests) = run(vec![json!({"status": 503}), answers("done")], None);
    let error = result.unwrap_err();
    assert!(error.to_string().contains("503"), "{error}");
    assert!(received.is_empty());
    assert_eq!(requests.len(), 1);
}

#[test]
fn an_unknown_tool_name_fails_the_run() {
    // LOOP-5: UnhandledInvalidToolCall::Fail is the default (rig-agent run/spec.rs).
    let (result, received, requests) = run(vec![calls("delete_everything", "{}"), answers("done")], None);
    assert!(
        matches!(result, Err(PromptError::UnknownToolCall { ref tool_name, .. }) if tool_name == "delete_everything")
    );
    assert!(received.is_empty());
    assert_eq!(requests.len(), 1, "the model is never told");
}

#[test]
fn arguments_null_reach_the_tool_as_an_empty_object() {
    // ARGS-2: ToolFunction::parse reads `null` as {} (rig-core completion/message.rs).
    let (result, received, _) = run(vec![calls("transfer", "null"), answers("done")], None);
    assert_eq!(result.unwrap(), "done");
    assert_eq!(received, vec![json!({})]);
}

#[test]
fn arguments_against_the_schema_reach_the_tool() {
    // ARGS-4, ARGS-6: the parameters schema is only declared to the model; nothing checks it.
    for args in [
        json!({"amount": "fifty", "recipient": "Ann"}),
        json!({"amount": 50}),
        json!({"amount": 50, "recipient": "Ann", "memo": "rent"}),
    ] {
        let (result, received, _) = run(vec![calls("transfer", &args.to_string()), answers("done")], None);
        assert_eq!(result.unwrap(), "done");
        assert_eq!(received, vec![args]);
    }
}

#[test]
fn a_tool_error_reaches_the_model_without_its_message() {
    // ERR-4: ToolExecutionError::from_error (rig-core tool/result.rs, what Tool::map_error does by
    // default) keeps the message for operators and shows the model fixed feedback for its kind.
    let (result, received, requests) = run(
        vec![calls("transfer", r#"{"amount": 5, "recipient": "Ann"}"#), answers("done")],
        Some("the disk is on fire"),
    );
    assert_eq!(result.unwrap(), "done");
    assert_eq!(received.len(), 1);
    let shown = tool_message(&requests);
    assert!(!shown.contains("the disk is on fire"), "{shown}");
}

#[test]
fn arguments_nested_past_serde_json_s_limit_are_called_no_json_object() {
    // ARGS-5: serde_json's recursion limit (128) refuses the arguments; ToolFunction::parse keeps
    // them as invalid_arguments, and the model is told they are "not a JSON object"
    // (rig-core transcript.rs), not that they are nested too deep.
    let deep = format!("{{\"data\":{}1{}}}", "{\"a\":".repeat(5000), "}".repeat(5000));
    let (result, received, requests) = run(vec![calls("transfer", &deep), answers("done")], None);
    assert_eq!(result.unwrap(), "done");
    assert!(received.is_empty());
    let shown = tool_message(&requests);
    assert!(shown.contains("are not a JSON object"), "{}", &shown[..200]);
    assert!(!["deep", "depth", "nest", "recursion", "limit"].iter().any(|word| shown.contains(word)));
}
