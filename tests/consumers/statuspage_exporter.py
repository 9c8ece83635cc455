"""Runs statuspage-prometheus-exporter's own Statuspage check against a URL
and prints what it concluded, as JSON (tests/api/consumers.rs reads it)."""
import json
import os
import sys
import tempfile

# The exporter caches responses in its working directory.
os.chdir(tempfile.mkdtemp())
from statuspage_prometheus_exporter.service_checker import check_status_page_service  # noqa: E402

print(json.dumps(check_status_page_service("upstate", {"url": sys.argv[1], "name": "Upstate"}), default=str))
