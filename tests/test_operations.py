"""The typed contract (mcp_server/service/operations.py): one request model per operation, matching the service."""

from __future__ import annotations

import inspect

import pytest

from mcp_server.service import operations as ops
from mcp_server.service.memory_service import MemoryService
from mcp_server.views.view import MemoryView
from vault.errors import ValidationError


@pytest.mark.parametrize("name", sorted(ops.REQUESTS))
def test_each_service_method_takes_its_operations_request_model_and_nothing_else(name: str):
    """The arguments and their defaults are stated once, in the model: the method restates none of them."""
    import mcp_server.service.memory_service as module

    model = ops.REQUESTS[name]
    parameters = [p for p in inspect.signature(getattr(MemoryService, name)).parameters.values() if p.name != "self"]
    assert len(parameters) == 1, f"{name} takes {[p.name for p in parameters]}"
    assert eval(parameters[0].annotation, vars(module)) is model, name
    if parameters[0].default is not inspect.Parameter.empty:  # `service.stats()`: the request with every default
        assert parameters[0].default == model(), name


def test_the_service_takes_a_request_checked_when_it_was_built():
    with pytest.raises(ValidationError, match=r"bad arguments for search: argument `days_back` should be greater than 0"):
        ops.Search(days_back=0)


def test_an_unknown_argument_is_refused_by_name_with_the_known_ones_listed():
    with pytest.raises(ValidationError, match=r"bad arguments for search: no argument `limt`; its arguments are query,"):
        ops.parse("search", {"query": "celery", "limt": 3})


def test_a_mistyped_argument_is_named_with_what_was_sent_not_a_type_error():
    with pytest.raises(ValidationError, match=r"bad arguments for search: argument `limit` should be a valid "
                                              r"integer.*\(got 'three'\)"):
        ops.Search(query="celery", limit="three")  # type: ignore[arg-type]
    with pytest.raises(ValidationError, match=r"bad arguments for score: argument `memory_scores` is required"):
        ops.parse("score", {})
    with pytest.raises(ValidationError, match=r"bad arguments for read: the arguments must be a JSON object"):
        ops.parse("read", ["m-1"])


def test_an_unknown_operation_is_refused():
    with pytest.raises(ValidationError, match="unknown operation 'drop_everything'"):
        ops.parse("drop_everything", {})
    with pytest.raises(ValidationError, match="unknown operation 'app'"):
        ops.parse("app", {})  # a MemoryService attribute that is no operation


def test_only_the_arguments_given_are_sent_so_the_models_defaults_stand():
    request = ops.parse("search", {"query": "celery", "limit": 3})
    assert request.wire() == {"query": "celery", "limit": 3}


def test_a_result_reads_back_into_its_type_and_out_as_the_same_json():
    shape = {"results": [{"id": "m-1", "collection": "working", "type": "context", "title": "T", "content": "c",
                          "path": "working/t.md", "created_at": None, "age": "", "score": 0.5, "wilson_score": 0.0,
                          "uses": 0, "success_count": 0.0, "outcomes": [], "outcome_history": "", "last_outcome": None,
                          "last_used_at": None, "tags": [], "aliases": [], "status": "active", "supersedes": [],
                          "privacy": "shared", "source": "project", "relevance": 0.9}],
             "window": {"source": "days_back", "use": "filter"}}
    found = ops.Search(query="t").result_of(shape)
    assert isinstance(found.results[0], MemoryView) and found.results[0].relevance == 0.9 and found.as_of is None
    assert ops.as_json(found) == shape


@pytest.mark.parametrize("name", sorted(ops.REQUESTS))
def test_every_operation_answers_a_typed_result_not_a_bare_dict(name: str):
    kind = ops.REQUESTS[name].result
    item = kind.__args__[0] if getattr(kind, "__origin__", None) is list else kind
    assert isinstance(item, type) and issubclass(item, ops.BaseModel), f"{name} answers {kind}"


@pytest.mark.parametrize("name", sorted(ops.REQUESTS))
def test_the_service_method_returns_the_result_its_operation_declares(name: str):
    """`run` hands the method's answer on as the operation's result without checking it: the annotation must agree."""
    import mcp_server.service.memory_service as module

    returns = inspect.signature(getattr(MemoryService, name)).return_annotation
    assert eval(returns, vars(module), {"list": list}) == ops.REQUESTS[name].result, name


def test_a_typed_result_keeps_the_services_keys_in_order_for_json_output():
    shape = {"id": "m-1", "title": "T", "path": "patterns/t.md", "successor": None, "supersedes_chain": [],
             "outgoing": [{"relation": "depends_on", "id": "m-2", "title": "U", "context": "", "origin": "body"}],
             "backlinks": [], "ghosts": [], "changed": True}
    linked = ops.Link(source="m-1", target="m-2").result_of(shape)
    assert linked.changed is True and linked.outgoing[0]["id"] == "m-2"
    assert list(ops.as_json(linked)) == list(shape) and ops.as_json(linked) == shape
    related = ops.Relationships(memory_id="m-1").result_of({k: v for k, v in shape.items() if k != "changed"})
    assert "changed" not in ops.as_json(related)
