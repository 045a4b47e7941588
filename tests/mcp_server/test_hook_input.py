"""A hook input cut at the hook's read limit keeps what came before the cut, and says what it lost."""

from __future__ import annotations

import json

import pytest

from mcp_server.clients import hook_input

EVENT = {"session_id": "s-1", "cwd": "/p", "stop_hook_active": False, "n": [1, {"a": 2}],
         "last_assistant_message": "caf\u00e9 \"quoted\" \\ back\nslash \U0001f600 end"}


@pytest.mark.parametrize("ascii_only", [True, False])
def test_an_input_cut_anywhere_keeps_its_whole_members_and_the_head_of_the_string_it_was_cut_in(ascii_only):
    text = json.dumps(EVENT, ensure_ascii=ascii_only)
    for cut in range(len(text)):
        fields, member = hook_input.head_fields(text[:cut])
        whole = {k: v for k, v in fields.items() if k != member}
        assert whole == {k: EVENT[k] for k in whole} and list(fields) == list(EVENT)[:len(fields)]
        if member in fields:
            assert EVENT[member].startswith(fields[member])


def test_a_stop_over_the_limit_keeps_its_session_and_the_head_of_its_answer_marked_as_cut(capsys):
    raw = json.dumps({"session_id": "s-1", "last_assistant_message": "the answer " * 100, "after": 1}).encode()
    data = hook_input.parse(raw[:601], 600)
    assert data["session_id"] == "s-1" and "after" not in data
    assert data["last_assistant_message"].startswith("the answer the answer")
    assert data["last_assistant_message"].endswith("[… cut by memdir: the hook input was over 600 bytes]")
    assert "'last_assistant_message' was cut to its first" in capsys.readouterr().err


def test_bytes_that_are_not_utf8_are_replaced_and_named(capsys):
    raw = b'{"session_id": "s", "prompt": "a \xff b"}'
    assert hook_input.parse(raw, 1000)["prompt"] == "a \ufffd b"
    assert f"hook input is not UTF-8 at byte {raw.index(255)}" in capsys.readouterr().err


def test_a_character_the_limit_cut_in_two_is_not_called_bad_utf8(capsys):
    raw = json.dumps({"session_id": "s", "prompt": "\u00e9" * 50}, ensure_ascii=False).encode()
    assert hook_input.parse(raw[:41], 40)["prompt"].startswith("\u00e9" * 4)
    assert "not UTF-8" not in capsys.readouterr().err


@pytest.mark.parametrize("depth", [600, 900])
def test_a_request_nested_hundreds_deep_with_a_lone_surrogate_is_read_not_a_server_error(depth):
    # Lone surrogates are replaced after the JSON is read (s21): the walk over what was read recursed a frame or two a
    # level, so a body json itself reads (it nests up to ~1,000 deep) failed the server with a RecursionError (a 500,
    # logged as a server bug) and a hook with such an input dropped its event. The walk keeps no stack of frames now.
    import anyio
    from starlette.requests import Request

    from mcp_server.plain_json import loads, without_lone_surrogates
    from mcp_server.server.served import json_body

    raw = ('{"session_id": "s-\\ud83d", "deep": ' + "[" * depth + '"x\\udc00"' + "]" * depth + "}").encode()
    cleaned = without_lone_surrogates(loads(raw))
    inner = cleaned["deep"]
    for _ in range(depth):
        inner = inner[0]
    assert cleaned["session_id"] == "s-\ufffd" and inner == "x\ufffd"

    async def read() -> object:
        async def receive() -> dict:
            return {"type": "http.request", "body": raw, "more_body": False}
        return await json_body(Request({"type": "http", "method": "POST", "headers": []}, receive))

    body = anyio.run(read)
    assert isinstance(body, dict) and body["session_id"] == "s-\ufffd"
    assert without_lone_surrogates({"k\ud800": ["a\udfff", {"\udc00": 1}], "ok": "\U0001f600"}) == \
        {"k\ufffd": ["a\ufffd", {"\ufffd": 1}], "ok": "\U0001f600"}
