"""Traced, items judged together (a pipeline with a batched hook) each get their own spans."""

from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from stash import hooks
from stash.core.pipeline import Item, Pipeline, Step
from stash.db import tracing


class Model(hooks.Filter):
    def filter_many(self, items):
        return [self.drop("bad", "bad") if item.payload.get("bad") else self.keep() for item in items]


class Check(hooks.Filter):
    def filter(self, item):
        return self.keep()


def test_each_item_of_a_batch_gets_an_item_span_with_its_hooks(monkeypatch):
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    monkeypatch.setattr(tracing, "_tracer", provider.get_tracer("test"))
    runner = Pipeline(
        [
            Step(hook=Model(), name="model", config_id=1, position=1),
            Step(hook=Check(), name="check", config_id=2, position=2),
        ]
    )
    steps = []

    results = tracing.run_many(runner, [Item(payload={}, id="a"), Item(payload={"bad": True}, id="b")], steps.append)

    assert [r.verdict for r in results] == ["accepted", "rejected"]
    assert [step.name for step in steps] == ["model", "check"]  # on_step still called, once a step
    spans = exporter.get_finished_spans()
    items = {span.attributes["stash.item"]: span for span in spans if span.name == "stash.item"}
    assert {pk: span.attributes["stash.verdict"] for pk, span in items.items()} == {"a": "accepted", "b": "rejected"}
    under = {
        pk: [(s.attributes["stash.hook"], s.attributes["stash.outcome"]) for s in spans if s.parent == item.context]
        for pk, item in items.items()
    }
    assert under == {"a": [("model", "kept"), ("check", "kept")], "b": [("model", "dropped")]}
    assert all(s.attributes["stash.hook.kind"] == "filter" for s in spans if s.name == "stash.hook")
    assert tracing.continuing("b") is not tracing._NOTHING  # its deliveries go on in its trace
