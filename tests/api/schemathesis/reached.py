"""Which operations schemathesis reached with a success (a 2xx answer),
read from the ndjson reports it wrote (tests/api/contract.rs).

    python reached.py OPENAPI_JSON REPORT_DIR...

Prints `reached N of M, run R` (R: the operations any request was sent
for, within the passes' time budgets), the requests each pass sent
(`requests DIR: N`), and then each operation no answer succeeded for, with
the statuses it got instead.
"""

import glob
import json
import sys
from collections import Counter, defaultdict


def main():
    document, *dirs = sys.argv[1:]
    with open(document) as f:
        paths = json.load(f)["paths"]
    operations = {
        f"{method.upper()} {path}"
        for path, item in paths.items()
        for method in item
        if method in ("get", "put", "post", "delete", "patch")
    }
    reached = set()
    seen = defaultdict(Counter)
    # Requests per pass: how deep each went in its time.
    depth = {}
    for d in dirs:
        depth[d] = 0
        for report in glob.glob(f"{d}/*.ndjson"):
            with open(report) as f:
                for line in f:
                    event = json.loads(line).get("ScenarioFinished")
                    if not event:
                        continue
                    recorder = event["recorder"]
                    for interaction in (recorder.get("interactions") or {}).values():
                        response = interaction.get("response") or {}
                        status = response.get("status_code", 0)
                        seen[recorder["label"]][status] += 1
                        depth[d] += 1
                        if 200 <= status < 300:
                            reached.add(recorder["label"])
    missing = sorted(operations - reached)
    run = len([o for o in operations if seen[o]])
    print(f"reached {len(operations) - len(missing)} of {len(operations)}, run {run}")
    for d, n in sorted(depth.items()):
        print(f"requests {d.rstrip('/').rsplit('/', 1)[-1]}: {n}")
    for label in missing:
        statuses = ", ".join(f"{s}x{n}" for s, n in sorted(seen[label].items()))
        print(f"{label}  ({statuses or 'not run'})")


main()
