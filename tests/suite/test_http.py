"""The http profile end to end: recording, offline replay, a changed request, and no secrets."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any, Literal

import httpx
import pytest

from conformance import ExtractTurn, FinalTurn, ScriptedModel, StepTurn, _cassettes, _http
from conformance._cassettes import bundled_dir, cassette_path, secrets_in
from conformance.server import ScriptedServer
from tests.suite.conftest import ROOT, RunSuite, SuiteRun
from tests.test_peers import peer_python

HTTP = ("-k", "over_http")
#: A 32-hex-digit credential, as Azure OpenAI keys are written.
HEX = "3f9a1c0be27d4856a0c1f2e3d4b5a697"
CHOSEN = "over_http_the_chosen_tool_runs_with_exactly_the_chosen_args.yaml"


def _copy(tmp_path: Path) -> Path:
    root = tmp_path / "cassettes"
    shutil.copytree(bundled_dir(), root)
    return root


def _verdicts(run: SuiteRun) -> dict[str, str]:
    assert run.report is not None, run.output[-3000:]
    return {s["id"]: s["verdict"] for s in run.report["scenarios"]}


def test_the_bundled_cassettes_are_found_in_the_checkout() -> None:
    assert bundled_dir() == ROOT / "cassettes"
    assert (bundled_dir() / "reference" / "http" / CHOSEN).is_file()


#: Every binding with committed cassettes: each must replay all of them (a new recording format, or
#: a change to what a cassette keeps, must leave them replayable).
_RECORDED = sorted(p.name for p in (ROOT / "cassettes").iterdir() if p.is_dir())


@pytest.mark.parametrize("name", _RECORDED)
def test_every_http_scenario_replays_with_no_server_and_no_network(
    name: str, run_suite: RunSuite, tmp_path: Path
) -> None:
    root = _copy(tmp_path)
    before = {p: p.read_bytes() for p in root.rglob("*.yaml")}
    run = run_suite(name, *HTTP, "-p", "tests.suite.no_network", "--conformance-cassettes=replay",
                    f"--conformance-cassette-dir={root}", python=peer_python(name))
    verdicts = _verdicts(run)
    assert len(verdicts) >= 8, run.output[-3000:]
    assert set(verdicts.values()) <= {"passed", "known-failure", "not-claimed"}, run.output[-3000:]
    assert "passed" in verdicts.values()
    assert {p: p.read_bytes() for p in root.rglob("*.yaml")} == before, "replay wrote a cassette"


def test_a_changed_prompt_fails_replay_naming_the_request(run_suite: RunSuite, tmp_path: Path) -> None:
    root = _copy(tmp_path)
    cassette = root / "reference" / "http" / CHOSEN
    text = cassette.read_text(encoding="utf-8")
    assert "What is 1234 + 4321?" in text
    recorded = text.replace("What is 1234 + 4321?", "What is 1234 plus 4321?")
    cassette.write_text(recorded, encoding="utf-8")
    run = run_suite("reference", "-k", "over_http_the_chosen_tool", "-p", "tests.suite.no_network",
                    f"--conformance-cassette-dir={root}")
    [scenario] = run.report["scenarios"] if run.report else [None]
    assert scenario is not None, run.output[-3000:]
    assert scenario["verdict"] == "failed"
    message = scenario["message"]
    assert f"the cassette {CHOSEN} does not hold" in message
    assert "Model request #1 of the scenario" in message and "body differs" in message
    assert '+      "content": "[[ ## question ## ]]\\nWhat is 1234 + 4321?' in message
    assert "nox -s cassettes" in message
    assert cassette.read_text(encoding="utf-8") == recorded, "a failed replay rewrote the cassette"


def test_recording_writes_one_clean_cassette_per_scenario_that_then_replays(
    run_suite: RunSuite, tmp_path: Path
) -> None:
    root = tmp_path / "recorded"
    recorded = run_suite("reference", *HTTP, "--conformance-cassettes=record",
                         f"--conformance-cassette-dir={root}")
    assert set(_verdicts(recorded).values()) == {"passed"}, recorded.output[-3000:]
    files = sorted(p.name for p in (root / "reference" / "http").glob("*.yaml"))
    assert files == sorted(p.name for p in (bundled_dir() / "reference" / "http").glob("*.yaml"))
    # The reference sends "Authorization: Bearer placeholder-key": recording must drop it.
    assert list(secrets_in(root)) == []
    assert "placeholder-key" not in "".join(p.read_text() for p in root.rglob("*.yaml"))
    replayed = run_suite("reference", *HTTP, "-p", "tests.suite.no_network",
                         f"--conformance-cassette-dir={root}")
    assert set(_verdicts(replayed).values()) == {"passed"}, replayed.output[-3000:]


def test_replay_without_a_cassette_is_a_clear_error(run_suite: RunSuite, tmp_path: Path) -> None:
    (tmp_path / "empty" / "reference").mkdir(parents=True)
    run = run_suite("reference", "-k", "over_http_the_chosen_tool",
                    f"--conformance-cassette-dir={tmp_path / 'empty'}")
    [scenario] = run.report["scenarios"] if run.report else [None]
    assert scenario is not None and scenario["verdict"] == "errored", run.output[-3000:]
    assert "no cassette for this scenario" in scenario["message"]
    assert "--conformance-cassettes=record" in scenario["message"]
    assert "reference/http/over_http_the_chosen_tool" in scenario["message"]
    assert str(tmp_path) not in scenario["message"], "a report must not carry this machine's paths"


def test_auto_replays_only_where_the_binding_has_cassettes(tmp_path: Path) -> None:
    (tmp_path / "mine").mkdir()
    assert _http.resolve("auto", tmp_path, "mine") == "replay"
    assert _http.resolve("auto", tmp_path, "theirs") == "off"
    assert _http.resolve("record", tmp_path, "mine") == "record"


def test_a_cassette_is_named_by_binding_feature_and_scenario(tmp_path: Path) -> None:
    path = cassette_path(tmp_path, "mine", "http", "test_over_http_a_retry[429 with Retry-After 0]")
    assert path == tmp_path / "mine" / "http" / "over_http_a_retry-429_with_Retry-After_0.yaml"


def test_the_committed_cassettes_hold_no_secret() -> None:
    assert list(bundled_dir().rglob("*.yaml")), "no cassettes committed"
    assert list(secrets_in(bundled_dir())) == []


@pytest.mark.parametrize(
    ("line", "what"),
    [
      ("      Authorization:\n      - Bearer abcdefgh12345678", "an authorization header"),
      ("      authorization: xyz", "an authorization header"),
      ("      Cookie:\n      - session=1", "a cookie header"),
      ("      set-cookie: a=b", "a cookie header"),
      ("      x-api-key: abc", "an API-key header"),
      ("    body: '{\"key\": \"sk-proj-abcdefghijklmnopqrstuv\"}'", "an API key"),
      # A 32-hex-digit key (Azure OpenAI's form) once went undetected: wherever a credential's
      # name introduces it, in a URL, a header or a body.
      (f"    uri: https://llm.example/v1/chat/completions?api-version=1&key={HEX}", "a credential"),
      (f"    uri: https://llm.example/v1/chat/completions?api_key={HEX}", "a credential"),
      (f"    body: '{{\"api_key\": \"{HEX}\"}}'", "a credential"),
      (f"    body: '{{\"content\": \"use {{\\\"access_token\\\": \\\"{HEX}\\\"}}\"}}'",
       "a credential"),
      (f"      api-key:\n      - {HEX}", "an API-key header"),
      (f"      X-Goog-Api-Key: {HEX}", "an API-key header"),
      (f"    body: 'client_secret={HEX}&grant_type=x'", "a credential"),
    ],
)
def test_the_secret_scan_finds_credentials(tmp_path: Path, line: str, what: str) -> None:
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "leak.yaml").write_text(f"interactions:\n- request:\n    headers:\n{line}\n")
    found = list(secrets_in(tmp_path))
    assert any(f.startswith("mine/leak.yaml:") and f.endswith(what) for f in found), found


@pytest.mark.parametrize("line", [
    f'    body: \'{{"id": "chatcmpl-{HEX}", "object": "chat.completion"}}\'',
    f'    body: \'{{"id": "{HEX}", "request_id": "{HEX}", "call_id": "call_{HEX[:24]}"}}\'',
    f'    body: \'{{"interrupt_id": "{HEX}", "idempotency_key": "{HEX}", "key_id": "{HEX}"}}\'',
    "    body: '{\"tool_args\": {\"key\": \"user_theme_preference\", \"token\": \"next\"}}'",
    "    body: '{\"trace\": \"0123456789abcdef0123456789abcdef01234567\"}'",
    "    uri: http://127.0.0.1/v1/chat/completions?api-version=2024-06-01",
    f"    body: '{{\"monkey\": \"{HEX}\", \"turnkey\": \"{HEX}\"}}'",
])
def test_the_secret_scan_leaves_ids_that_are_not_credentials(tmp_path: Path, line: str) -> None:
    (tmp_path / "ids.yaml").write_text(f"interactions:\n- request:\n{line}\n")
    assert list(secrets_in(tmp_path)) == []
    assert _cassettes.scrub(line) == line  # recording keeps them: a reply's ids must replay as sent


#: Credentials only the maintained detector knows by their shape: no credential's name introduces
#: them, so no hand-written pattern sees them.
_PROVIDER_SECRETS = {
    "AWS Access Key": "AKIAIOSFODNN7EXAMPLE",
    "GitHub Token": "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8",
    "Slack Token": "xoxb-" + "123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx",
    "Private Key": "-----BEGIN RSA PRIVATE KEY-----",
}


@pytest.mark.parametrize("what", sorted(_PROVIDER_SECRETS))
def test_the_scan_and_scrubbing_know_the_detectors_provider_secrets(tmp_path: Path, what: str) -> None:
    line = f"    body: '{{\"content\": \"deploy with {_PROVIDER_SECRETS[what]} now\"}}'"
    (tmp_path / "leak.yaml").write_text(f"interactions:\n- request:\n{line}\n")
    found = list(secrets_in(tmp_path))
    assert found == [f"leak.yaml:3: a secret detect-secrets knows ({what})"], found
    scrubbed = _cassettes.scrub(line)
    assert _PROVIDER_SECRETS[what] not in scrubbed and "deploy with" in scrubbed, scrubbed


def test_credential_query_parameters_are_scrubbed_before_recording(tmp_path: Path) -> None:
    # An API key in the request URL's query string was once written to every cassette.
    cassette = tmp_path / "mine" / "http" / "scenario.yaml"
    model = ScriptedModel([ExtractTurn(outputs={"answer": "5"})])
    profile = _http.HttpProfile("record", cassette)
    query = f"api-version=2024-06-01&key={HEX}&Api_Key=k-{HEX}&access_token=t-{HEX}&sig=s-{HEX}"
    reply = profile.run(lambda _: httpx.post(
        f"{profile.base_url}/chat/completions?{query}", timeout=5,
        json={"messages": [{"role": "system", "content": "Reply with a single JSON object."}]}), model)
    profile.close()
    assert reply.status_code == 200
    text = cassette.read_text(encoding="utf-8")
    assert HEX not in text and "api-version=2024-06-01" in text
    assert list(secrets_in(tmp_path)) == []


def _post(profile: _http.HttpProfile, model: ScriptedModel, body: dict[str, Any]) -> httpx.Response:
    return profile.run(lambda _: httpx.post(f"{profile.base_url}/chat/completions", json=body, timeout=5),
                       model)


def test_credentials_in_bodies_are_scrubbed_before_recording_and_still_replay(tmp_path: Path) -> None:
    # A credential in a request or response body once failed the scenario instead of being scrubbed.
    cassette = tmp_path / "mine" / "http" / "scenario.yaml"
    secrets = [HEX, f"tok{HEX}", f"sk-proj-{HEX}", f"live{HEX}"]
    body: dict[str, Any] = {"api_key": HEX, "messages": [
        {"role": "system", "content": "Reply with a single JSON object."},
        {"role": "user", "content": f"Send Authorization: Bearer tok{HEX} with key sk-proj-{HEX}."}]}
    answer = {"answer": "5", "note": f"your access_token=live{HEX} expires"}
    profile = _http.HttpProfile("record", cassette)
    recorded = _post(profile, ScriptedModel([ExtractTurn(outputs=answer)]), body)
    profile.close()
    assert recorded.status_code == 200 and f"live{HEX}" in recorded.text  # the live run is not altered
    text = cassette.read_text(encoding="utf-8")
    assert not [s for s in secrets if s in text], text
    assert list(secrets_in(tmp_path)) == []
    replay = _http.HttpProfile("replay", cassette)
    replayed = _post(replay, ScriptedModel([ExtractTurn(outputs=answer)]), body)  # the same live body
    replay.close()
    assert replayed.status_code == 200, replayed.text
    assert "5" in replayed.text and not [s for s in secrets if s in replayed.text]


def test_a_recorded_cassette_that_holds_a_credential_never_reaches_the_disk(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A credential only the scan knows (so scrubbing leaves it): the cassette was once written and
    # then deleted, so the credential was on disk for a moment, and stayed there if the run died.
    monkeypatch.setitem(_cassettes.SECRET_PATTERNS, "a canary", re.compile(r"canary-\d{6}"))
    cassette = tmp_path / "mine" / "http" / "scenario.yaml"
    opened: list[str] = []
    _watch_writes(cassette, opened)
    unpatched = httpx.HTTPTransport.handle_request
    profile = _http.HttpProfile("record", cassette)
    _post(profile, ScriptedModel([ExtractTurn(outputs={"answer": "5"})]), {"messages": [
        {"role": "system", "content": "Reply with a single JSON object. canary-123456"}]})
    with pytest.raises(AssertionError, match="holds a credential") as info:
        profile.close()
    # vcrpy unpatches only after a save that returned: a refusal raised from the save once left
    # httpx patched, and the garbage collector later unpatched it in the middle of another
    # scenario's recording, which then wrote no cassette.
    assert httpx.HTTPTransport.handle_request is unpatched, "the refused cassette still patches httpx"
    assert "a canary" in str(info.value)
    assert opened == [], "the cassette holding a credential was written to disk"
    assert not cassette.exists()
    assert str(tmp_path) not in str(info.value)  # a report must not carry this machine's paths


#: The paths `_watch_writes` watches, with the list each write is noted in (an audit hook cannot be
#: removed, so one hook serves every test and a test's entry goes when the test does).
_WATCHED: dict[str, list[str]] = {}


def _watch_writes(path: Path, opened: list[str]) -> None:
    if not _WATCHED:
        sys.addaudithook(_note_write)
    _WATCHED.clear()
    _WATCHED[str(path)] = opened


def _note_write(event: str, args: tuple[Any, ...]) -> None:
    if event == "open" and isinstance(args[0], str | Path) and str(args[0]) in _WATCHED:
        mode = args[1] if isinstance(args[1], str) else ""
        flags = args[2] if len(args) > 2 and isinstance(args[2], int) else 0
        if set(mode) & set("wax+") or flags & (os.O_WRONLY | os.O_RDWR):
            _WATCHED[str(args[0])].append(mode or str(flags))


def test_the_real_provider_recipe_records_without_the_key_and_replays_offline(tmp_path: Path) -> None:
    doc = (ROOT / "docs" / "http.md").read_text(encoding="utf-8")
    recipe = re.search(r"```python\n(# tests/test_real_provider\.py\n.*?)```", doc, re.S)
    assert recipe is not None, "docs/http.md has no recipe test"
    (tmp_path / "test_real_provider.py").write_text(recipe.group(1), encoding="utf-8")
    key = "sk-live-abcdefghijklmnopqrstuvwxyz"
    model = ScriptedModel([StepTurn(thought="add", tool_name="add", tool_args={"a": 2, "b": 3}),
                           StepTurn(thought="done", tool_name="finish"),
                           ExtractTurn(outputs={"answer": "5"})])
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_real_provider.py"]
    with ScriptedServer(model) as provider:  # stands in for the real provider
        recorded = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True, timeout=300,
                                  env={**env, "RECORD": "1", "API_KEY": key, "BASE_URL": provider.url})
    assert recorded.returncode == 0, recorded.stdout[-3000:]
    assert provider.received == 3
    cassettes = tmp_path / "cassettes" / "real"
    assert list(secrets_in(cassettes)) == [] and key not in (cassettes / "adds.yaml").read_text()
    replayed = subprocess.run([*command, "-p", "tests.suite.no_network"], cwd=tmp_path, env=env,
                              capture_output=True, text=True, timeout=300)
    assert replayed.returncode == 0, replayed.stdout[-3000:]


@pytest.mark.parametrize(
    ("binding", "scenario"),
    [("RetriesRefusals", "bad_request_or_a_refused_key_is_not_retried"),
     ("AmendsRetries", "rate_limit_or_a_server_error_is_retried")],
)
def test_a_broken_http_client_fails_net_1(run_suite: RunSuite, binding: str, scenario: str) -> None:
    run = run_suite(f"tests.suite.http_bindings:{binding}", "-k", scenario, "--conformance-cassettes=off")
    verdicts = _verdicts(run)
    assert verdicts and set(verdicts.values()) == {"failed"}, run.output[-3000:]
    assert run.requirements("failed") == {"NET-1"}


#: A Messages tool, as Anthropic's SDK declares one.
_MESSAGES_TOOLS = [{"name": "add", "description": "Add.", "input_schema": {
    "type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}}}}]


def _thread(profile: _http.HttpProfile, model: ScriptedModel) -> list[httpx.Response]:
    """A tool runner's two requests: the first creates a message thread (system, tools, the
    question), the second continues it with only the tool's result."""

    def send(_: ScriptedModel) -> list[httpx.Response]:
        url = f"{profile.base_url}/messages"
        first = httpx.post(url, timeout=5, json={
            "model": "m", "max_tokens": 100, "system": "Answer.", "tools": _MESSAGES_TOOLS,
            "thread": {"type": "create"}, "messages": [{"role": "user", "content": "What is 2 + 2?"}]})
        use = first.json()["content"][-1]
        second = httpx.post(url, timeout=5, json={
            "model": "m", "max_tokens": 100, "thread": {"type": "continue", "previous_message_id":
                                                         first.json()["id"]},
            "messages": [{"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": use["id"], "content": "4"}]}]})
        return [first, second]

    return profile.run(send, model)


def test_a_messages_cassette_replays_its_thread_and_the_script_sees_the_whole_conversation(
    tmp_path: Path
) -> None:
    # Replay once read every request as a chat-completions body: a Messages request's blocks and the
    # thread its `continue` stands for were lost, so the script saw a different conversation.
    cassette = tmp_path / "mine" / "http" / "scenario.yaml"
    script = [StepTurn(thought="I will add", tool_name="add", tool_args={"a": 2, "b": 2}),
              FinalTurn(outputs={"answer": "4"})]
    recording = _http.HttpProfile("record", cassette)
    recorded_model = ScriptedModel(script, finish_then_extract=False)
    recorded = _thread(recording, recorded_model)
    recording.close()
    assert [r.status_code for r in recorded] == [200, 200]
    assert list(secrets_in(tmp_path)) == []
    replay = _http.HttpProfile("replay", cassette)
    model = ScriptedModel(script, finish_then_extract=False)
    replayed = _thread(replay, model)
    replay.close()
    assert [r.json() for r in replayed] == [r.json() for r in recorded]
    assert [c.model_dump() for c in model.calls] == [c.model_dump() for c in recorded_model.calls]
    shown = model.calls[1]
    assert [m["role"] for m in shown.messages] == ["system", "user", "assistant", "tool"]
    assert shown.messages[3]["content"] == "4" and shown.kind == "step" and shown.tools
    assert model.violation is None


def test_a_responses_cassette_replays_as_the_endpoint_reads_it(tmp_path: Path) -> None:
    # A Responses request's `instructions` and `input` items, and its tool-less final call
    # (`tool_choice: "none"`), are logged on replay as the endpoint logged them.
    cassette = tmp_path / "mine" / "http" / "scenario.yaml"
    tools = [{"type": "function", "name": "add", "description": "Add.", "parameters": {"type": "object"}}]
    body = {"model": "m", "instructions": "Answer.", "tools": tools, "tool_choice": "none",
            "input": [{"role": "user", "content": "What is 2 + 2?"}]}
    calls = []
    modes: tuple[Literal["record", "replay"], ...] = ("record", "replay")
    for mode in modes:
        profile = _http.HttpProfile(mode, cassette)
        model = ScriptedModel([ExtractTurn(outputs={"answer": "4"})])
        url = f"{profile.base_url}/responses"
        reply = profile.run(lambda _, url=url: httpx.post(url, json=body, timeout=5), model)
        profile.close()
        assert reply.status_code == 200 and reply.json()["output"][0]["content"][0]["text"] == "4"
        calls.append(model.calls)
    assert [c.model_dump() for c in calls[1]] == [c.model_dump() for c in calls[0]]
    [call] = calls[1]
    assert call.kind == "extract" and call.messages[0] == {"role": "system", "content": "Answer."}


def _continued(profile: _http.HttpProfile, model: ScriptedModel) -> list[httpx.Response]:
    """A Responses client that keeps its conversation on the service: the second request names the
    first response as its `previous_response_id` and sends only the tool's output."""

    def send(_: ScriptedModel) -> list[httpx.Response]:
        url = f"{profile.base_url}/responses"
        tools = [{"type": "function", "name": "add", "parameters": {"type": "object"}}]
        first = httpx.post(url, timeout=5, json={"model": "m", "tools": tools, "input": "What is 2 + 2?"})
        call = first.json()["output"][-1]
        second = httpx.post(url, timeout=5, json={
            "model": "m", "tools": tools, "previous_response_id": first.json()["id"],
            "input": [{"type": "function_call_output", "call_id": call["call_id"], "output": "4"}]})
        return [first, second]

    return profile.run(send, model)


def test_a_responses_cassette_replays_a_continuation_of_a_stored_response(tmp_path: Path) -> None:
    cassette = tmp_path / "mine" / "http" / "scenario.yaml"
    script = [StepTurn(thought="", tool_name="add", tool_args={"a": 2, "b": 2}),
              FinalTurn(outputs={"answer": "4"})]
    models = []
    modes: tuple[Literal["record", "replay"], ...] = ("record", "replay")
    for mode in modes:
        profile = _http.HttpProfile(mode, cassette)
        models.append(ScriptedModel(script, finish_then_extract=False))
        replies = _continued(profile, models[-1])
        profile.close()
        assert [r.status_code for r in replies] == [200, 200], replies[-1].text
    recorded, replayed = models
    assert [c.model_dump() for c in replayed.calls] == [c.model_dump() for c in recorded.calls]
    assert [m["role"] for m in replayed.calls[1].messages] == ["user", "assistant", "tool"]
    assert replayed.violation is None
