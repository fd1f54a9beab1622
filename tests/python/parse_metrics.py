"""Parses a Prometheus text exposition (standard input) with prometheus_client's parser,
as a Prometheus-format scraper would, and prints its families as JSON:
{"name": {"type": ..., "samples": [{"name": ..., "labels": {...}, "value": ...}]}}.
Fails (non-zero exit) on text the parser refuses."""

import json
import sys

from prometheus_client.parser import text_string_to_metric_families

families = {}
for family in text_string_to_metric_families(sys.stdin.read()):
    families[family.name] = {
        "type": family.type,
        "samples": [{"name": s.name, "labels": s.labels, "value": s.value} for s in family.samples],
    }
print(json.dumps(families))
