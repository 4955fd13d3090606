//! An OpenAI chat-completions endpoint in process, as rig's HTTP client (`HttpClientExt`, the trait
//! a provider configuration takes with `connect`): every request rig's OpenAI Chat wire builds goes
//! to the suite as an LMCall of its run, and is answered with the
//! chat.completion JSON, or failed as rig's bundled reqwest transport fails it (rig-reqwest: a
//! non-2xx status is `Error::non_success_with_details`, a failed request `Error::instance`). So
//! rig's own request building and reply parsing run as in a user's run. As harnesses/lib/go's
//! Endpoint (openai.go) does.

use std::collections::HashMap;
use std::future::Future;
use std::io;
use std::sync::{Mutex, OnceLock};

use bytes::Bytes;
use react_conformance_protocol::{self as protocol, json, object, Object, Run, Value};
use rig::http_client::{self, HeaderMap, HeaderValue, HttpClientExt, LazyBody, MultipartForm, Request, Response};
use rig::http_client::{StatusCode, StreamingResponse};
use rig::wasm_compat::WasmCompatSend;

/// Answers each request from the script of its run (None: a model that serves no run).
#[derive(Clone, Debug)]
pub struct Endpoint {
    run: Option<Run>,
}

impl Endpoint {
    pub fn new(run: Option<Run>) -> Self {
        Endpoint { run }
    }

    /// The head of the response to the request `body` (a non-2xx status is rig's transport error,
    /// as rig-reqwest makes it) and its body's text.
    fn answer(&self, body: Bytes) -> Result<(http::response::Builder, String), Failure> {
        let run = self.run.as_ref().ok_or_else(|| failed("a model request outside any run of the suite's"))?;
        let (status, headers, text) = answer(run, &body)?;
        if !status.is_success() {
            return Err(Box::new(http_client::Error::non_success_with_details(status, headers, text)));
        }
        let mut response = Response::builder().status(status);
        if let Some(into) = response.headers_mut() {
            *into = headers;
        }
        Ok((response, text))
    }
}

impl HttpClientExt for Endpoint {
    fn send<T, U>(
        &self,
        req: Request<T>,
    ) -> impl Future<Output = http_client::Result<Response<LazyBody<U>>>> + WasmCompatSend + 'static
    where
        T: Into<Bytes> + WasmCompatSend,
        U: From<Bytes> + WasmCompatSend + 'static,
    {
        let answered = self.answer(req.into_body().into());
        async move {
            let (response, text) = answered.map_err(|error| *error)?;
            let body: LazyBody<U> = Box::pin(async move { Ok(U::from(Bytes::from(text))) });
            response.body(body).map_err(http_client::Error::Protocol)
        }
    }

    fn send_multipart<U>(
        &self,
        _req: Request<MultipartForm>,
    ) -> impl Future<Output = http_client::Result<Response<LazyBody<U>>>> + WasmCompatSend + 'static
    where
        U: From<Bytes> + WasmCompatSend + 'static,
    {
        std::future::ready(Err(*failed("this endpoint serves chat completions only, not a multipart request")))
    }

    fn send_streaming<T>(
        &self,
        req: Request<T>,
    ) -> impl Future<Output = http_client::Result<StreamingResponse>> + WasmCompatSend
    where
        T: Into<Bytes> + WasmCompatSend,
    {
        let answered = self.answer(req.into_body().into());
        async move {
            let (response, text) = answered.map_err(|error| *error)?;
            let events: Vec<http_client::Result<Bytes>> = vec![Ok(Bytes::from(text))];
            let stream: http_client::BoxedStream = Box::pin(futures::stream::iter(events));
            response.body(stream).map_err(http_client::Error::Protocol)
        }
    }
}

/// rig's transport error, boxed while it travels inside this module (it is large).
type Failure = Box<http_client::Error>;

fn failed(what: &str) -> Failure {
    Box::new(http_client::Error::instance(io::Error::other(what.to_string())))
}

type Answer = (StatusCode, HeaderMap, String);

fn json_headers() -> HeaderMap {
    let mut headers = HeaderMap::new();
    headers.insert("content-type", HeaderValue::from_static("application/json"));
    headers
}

/// The reply to one chat-completions request body: the turn the suite scripted, rendered.
fn answer(run: &Run, body: &Bytes) -> Result<Answer, Failure> {
    let request = protocol::parse_deep(&String::from_utf8_lossy(body))
        .map_err(|error| failed(&format!("rig's OpenAI client sent a body that is not JSON: {error}")))?;
    count_request(run);
    let messages: Vec<Value> = list(&request["messages"]).iter().map(shown_message).collect();
    let tools = if list(&request["tools"]).is_empty() { Value::Null } else { request["tools"].clone() };
    let call = json!({"kind": "step", "adapter": "native", "messages": messages, "tools": tools});
    let turn = match run.ask_model(call) {
        Ok(turn) => turn,
        Err(error) if error.is::<protocol::UnexpectedModelCall>() => {
            // Not scripted: answer as the suite's endpoint does, 400 (not transient).
            let text = json!({"error": {"message": error.to_string()}}).to_string();
            return Ok((StatusCode::BAD_REQUEST, json_headers(), text));
        }
        Err(error) => return Err(failed(&error.to_string())),
    };
    if turn.get("kind").and_then(Value::as_str) == Some("fault") {
        return fault(run, &turn);
    }
    let number = next_reply(run);
    let reply = assistant_message(&turn, number);
    let finish = if reply.get("tool_calls").is_some() { "tool_calls" } else { "stop" };
    let usage = json!({"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0});
    let id = format!("chatcmpl-{number}");
    if request["stream"] == true {
        return Ok((StatusCode::OK, event_stream_headers(), chunks(&id, &request["model"], reply, finish, usage)?));
    }
    let text = json!({"id": id, "object": "chat.completion", "created": 0, "model": request["model"],
                      "choices": [{"index": 0, "message": reply, "finish_reason": finish}], "usage": usage});
    let text = serde_json_text(&text)?;
    Ok((StatusCode::OK, json_headers(), text))
}

fn event_stream_headers() -> HeaderMap {
    let mut headers = HeaderMap::new();
    headers.insert("content-type", HeaderValue::from_static("text/event-stream"));
    headers
}

/// The reply as the server-sent events of a streamed chat completion: one chunk with the whole
/// message (its calls indexed), one with the finish reason and the usage, then `[DONE]`.
fn chunks(id: &str, model: &Value, reply: Object, finish: &str, usage: Value) -> Result<String, Failure> {
    let mut delta = reply;
    if let Some(Value::Array(calls)) = delta.get_mut("tool_calls") {
        for (index, call) in calls.iter_mut().enumerate() {
            call["index"] = index.into();
        }
    }
    let chunk = |choice: Value, usage: Value| {
        json!({"id": id, "object": "chat.completion.chunk", "created": 0, "model": model, "choices": [choice],
               "usage": usage})
    };
    let mut text = String::new();
    for event in [
        chunk(json!({"index": 0, "delta": delta, "finish_reason": null}), Value::Null),
        chunk(json!({"index": 0, "delta": {}, "finish_reason": finish}), usage),
    ] {
        text.push_str(&format!("data: {}\n\n", serde_json_text(&event)?));
    }
    text.push_str("data: [DONE]\n\n");
    Ok(text)
}

fn serde_json_text(value: &Value) -> Result<String, Failure> {
    protocol::serde_json::to_string(value).map_err(|error| failed(&error.to_string()))
}

/// A scripted fault as rig's reqwest transport meets it: a request that fails, or an HTTP status.
fn fault(run: &Run, turn: &Object) -> Result<Answer, Failure> {
    match turn.get("fault").and_then(Value::as_str) {
        Some("connection") => Err(Box::new(http_client::Error::instance(io::Error::new(
            io::ErrorKind::ConnectionReset,
            "scripted connection reset: connection reset by peer",
        )))),
        Some(kind @ ("timeout" | "hang")) => {
            // reqwest's default client has no request timeout: a request that gets no answer waits
            // for the caller; the harness fails it as a timeout would.
            if kind == "hang" {
                run.notify_hang(None).map_err(|error| failed(&error.to_string()))?;
            }
            Err(Box::new(http_client::Error::instance(io::Error::new(io::ErrorKind::TimedOut, "operation timed out"))))
        }
        _ => {
            let fault = protocol::fault_response(turn).map_err(|error| failed(&error.to_string()))?;
            let mut headers = HeaderMap::new();
            for (name, value) in &fault.headers {
                if let (Ok(name), Ok(value)) = (name.parse::<http::HeaderName>(), HeaderValue::from_str(value)) {
                    headers.insert(name, value);
                }
            }
            let status = StatusCode::from_u16(fault.status).map_err(|error| failed(&error.to_string()))?;
            Ok((status, headers, fault.body))
        }
    }
}

fn requests() -> &'static Mutex<HashMap<String, u64>> {
    static REQUESTS: OnceLock<Mutex<HashMap<String, u64>>> = OnceLock::new();
    REQUESTS.get_or_init(Default::default)
}

fn count_request(run: &Run) {
    let mut counts = requests().lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    *counts.entry(run.id().to_string()).or_insert(0) += 1;
}

/// How many model requests `run` has sent (a streamed run's `Event.model_calls`).
pub fn model_calls(run: &Run) -> u64 {
    requests().lock().unwrap_or_else(|poisoned| poisoned.into_inner()).get(run.id()).copied().unwrap_or(0)
}

/// The run's next reply number: each run numbers its replies' tool calls from 1.
fn next_reply(run: &Run) -> u64 {
    static REPLIES: OnceLock<Mutex<HashMap<String, u64>>> = OnceLock::new();
    let mut replies = REPLIES.get_or_init(Default::default).lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    let number = replies.entry(run.id().to_string()).or_insert(0);
    *number += 1;
    *number
}

/// A chat-completions message as the model sees it: its text, and an assistant's tool calls as
/// their JSON.
fn shown_message(message: &Value) -> Value {
    let mut parts: Vec<String> = match &message["content"] {
        Value::String(text) => vec![text.clone()],
        Value::Array(items) => items.iter().map(|part| part["text"].as_str().unwrap_or_default().to_string()).collect(),
        _ => vec![],
    };
    if !list(&message["tool_calls"]).is_empty() {
        parts.push(message["tool_calls"].to_string());
    }
    json!({"role": message["role"], "content": parts.join("\n")})
}

/// A turn as the assistant message the endpoint answers with (render.openai_message): a step's
/// calls, in order, or a final turn's reply text.
fn assistant_message(turn: &Object, number: u64) -> Object {
    if turn.get("kind").and_then(Value::as_str) != Some("step") {
        let outputs = object(turn.get("outputs").cloned().unwrap_or_default());
        return object(json!({"role": "assistant", "content": protocol::reply_text(&outputs)}));
    }
    let turn = Value::Object(turn.clone());
    let calls: Vec<Value> = std::iter::once(&turn)
        .chain(list(&turn["parallel"]))
        .enumerate()
        .map(|(i, call)| {
            let args = match call["raw_tool_args"].as_str() {
                Some(raw) => raw.to_string(),
                None => protocol::serde_json::to_string(&call["tool_args"]).unwrap_or_default(),
            };
            let id = if i == 0 { format!("call_{number}") } else { format!("call_{number}_{i}") };
            json!({"id": id, "type": "function", "function": {"name": call["tool_name"], "arguments": args}})
        })
        .collect();
    let content = match turn["thought"].as_str() {
        Some(thought) if !thought.is_empty() => Value::String(thought.to_string()),
        _ => Value::Null,
    };
    object(json!({"role": "assistant", "content": content, "tool_calls": calls}))
}

fn list(value: &Value) -> &[Value] {
    value.as_array().map(Vec::as_slice).unwrap_or_default()
}
