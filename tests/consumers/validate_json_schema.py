"""Validates a document against a JSON Schema (draft 2020-12) with the
reference Python implementation (jsonschema), formats checked.

Usage: validate_json_schema.py  (reads {"schema": ..., "document": ...} on stdin)
Prints {"errors": ["<path>: <message>", ...]} as JSON (empty when valid).
"""
import json
import sys

from jsonschema import Draft202012Validator, FormatChecker

given = json.load(sys.stdin)
Draft202012Validator.check_schema(given["schema"])
validator = Draft202012Validator(given["schema"], format_checker=FormatChecker())
errors = [
    "/" + "/".join(str(p) for p in e.absolute_path) + ": " + e.message
    for e in validator.iter_errors(given["document"])
]
print(json.dumps({"errors": errors[:20]}))
