"""Test support: scrape ``/metrics`` and read its samples with prometheus_client's own parser."""

from prometheus_client.parser import text_string_to_metric_families


class Scrape:
    """The samples of one scrape: ``scrape.value("stash_items", stash="audit", status="accepted")``."""

    def __init__(self, text):
        self.text = text
        self.samples = {}
        for family in text_string_to_metric_families(text):
            for sample in family.samples:
                self.samples[(sample.name, frozenset(sample.labels.items()))] = sample.value

    def value(self, name, **labels):
        """The value of the sample ``name`` with exactly these labels; KeyError if there is none."""
        key = (name, frozenset((label, str(value)) for label, value in labels.items()))
        if key not in self.samples:
            raise KeyError(f"no sample {name}{labels} in the scrape")
        return self.samples[key]

    def names(self):
        return {name for name, _labels in self.samples}


def scrape(client, **extra):
    """GET /metrics (asserting 200) and parse it."""
    response = client.get("/metrics", **extra)
    assert response.status_code == 200, response.content
    return Scrape(response.content.decode())
