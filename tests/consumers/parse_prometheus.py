"""Parses a Prometheus text exposition with the official Python client's
parser (prometheus_client), as a scraper would.

Usage: parse_prometheus.py  (reads the exposition on stdin)
Prints [{"name", "type", "labels", "value"}, ...] as JSON; exits non-zero
when the text does not parse.
"""
import json
import sys

from prometheus_client.parser import text_string_to_metric_families

out = []
for family in text_string_to_metric_families(sys.stdin.read()):
    for s in family.samples:
        out.append({"name": s.name, "type": family.type, "labels": s.labels, "value": s.value})
print(json.dumps(out))
