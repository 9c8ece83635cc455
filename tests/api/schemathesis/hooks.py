"""Fixtures for schemathesis (tests/api/contract.rs): generated requests
name the rows the test made instead of random ids, so a request the document
allows meets real data and can succeed. What these hooks change is only
what JSON Schema cannot say: that an id must name an existing row, that a
window ends after it starts, that a reorder lists the page's components.

UPSTATE_FIXTURES holds the ids ({"page", "slug", "component", "group"}; the
test makes two rows of each kind, ids 1 and 2),
UPSTATE_FIXTURE_BASE and UPSTATE_FIXTURE_KEY let a hook read the page's
current components.
"""

import json
import os
import uuid
import urllib.request
from datetime import datetime, timedelta

import schemathesis

F = json.loads(os.environ.get("UPSTATE_FIXTURES", "{}"))


def _num(v):
    """Whether `v` is a number, as JSON or as query/path text."""
    if isinstance(v, str):
        return v.isdigit()
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _time(v):
    try:
        return datetime.fromisoformat(str(v).replace("Z", "+00:00"))
    except ValueError:
        return None


def _listed(what):
    """The fixture page's components or groups, as they are now."""
    req = urllib.request.Request(
        f"{os.environ['UPSTATE_FIXTURE_BASE']}/api/v1/{what}?statusPageId={F['page']}",
        headers={"Authorization": f"Bearer {os.environ['UPSTATE_FIXTURE_KEY']}"},
    )
    with urllib.request.urlopen(req, timeout=10) as answer:
        return json.load(answer)["data"]


def _body(ctx, body):
    if not isinstance(body, dict):
        return body
    if _num(body.get("statusPageId")):
        body["statusPageId"] = F["page"]
    if _num(body.get("groupId")):
        body["groupId"] = F["group"]
    if isinstance(body.get("componentIds"), list):
        body["componentIds"] = [F["component"]] if body["componentIds"] else []
    statuses = body.get("componentStatuses")
    if isinstance(statuses, list) and statuses and isinstance(statuses[0], dict):
        body["componentStatuses"] = [dict(statuses[0], componentId=F["component"])]
    if isinstance(body.get("groupIds"), list):
        body["groupIds"] = [g["id"] for g in _listed("component-groups")]
    if isinstance(body.get("components"), list):
        body["components"] = [
            {"id": c["id"], "groupId": c.get("groupId")} for c in _listed("components")
        ]
    # The fixture page keeps its address: other pages and settings name it;
    # a new page takes one nobody has (the document says how a slug looks,
    # not which are taken).
    method = ctx.operation.method.upper() if ctx.operation is not None else ""
    if "slug" in body and method == "PATCH":
        body["slug"] = F["slug"]
    elif isinstance(body.get("slug"), str) and method == "POST":
        body["slug"] = f"p-{uuid.uuid4().hex[:12]}"
    if isinstance(body.get("defaultPage"), str):
        body["defaultPage"] = F["slug"]
    start = _time(body.get("scheduledStartTime") or "")
    end = _time(body.get("scheduledEndTime") or "")
    if start and end and end <= start:
        body["scheduledEndTime"] = (start + timedelta(hours=1)).isoformat()
    elif start and "scheduledEndTime" not in body:
        body["scheduledEndTime"] = (start + timedelta(hours=1)).isoformat()
    elif end and "scheduledStartTime" not in body:
        body["scheduledStartTime"] = (end - timedelta(hours=1)).isoformat()
    return body


def _declares(ctx, name):
    """Whether the operation takes the query parameter `name`."""
    raw = getattr(getattr(ctx.operation, "definition", None), "raw", None) or {}
    return any(p.get("name") == name and p.get("in") == "query" for p in raw.get("parameters", []))


def _query(ctx, query):
    if not isinstance(query, dict):
        return query
    if _num(query.get("component")):
        query["component"] = F["component"]
        # The component is the fixture page's: name that page, not whichever
        # is the default by then.
        if _declares(ctx, "page"):
            query["page"] = F["slug"]
    if isinstance(query.get("page"), str):
        query["page"] = F["slug"]
    # `to` defaults to now: a range ends after it starts.
    start, end = _time(query.get("from") or ""), _time(query.get("to") or "")
    if start and (not end or end <= start):
        query["to"] = (start + timedelta(hours=1)).isoformat()
    return query


def _path(ctx, params):
    if not isinstance(params, dict):
        return params
    if isinstance(params.get("slug"), str):
        params["slug"] = F["slug"]
    # A resource's id names the first row the test made of its kind (each
    # kind's first row has id 1), so reads and changes meet a real row; a
    # DELETE takes the second, so the first ones stay for the rest.
    if _num(params.get("id")):
        op = ctx.operation
        delete = op is not None and op.method.upper() == "DELETE"
        # Users and keys start at 2: user 1 and key 1 run the passes.
        people = op is not None and op.path.startswith(("/api/admin/users", "/api/api-keys"))
        params["id"] = (3 if delete else 2) if people else (2 if delete else 1)
    return params


@schemathesis.hook
def map_case(ctx, case):
    """Every phase's cases (coverage, examples, fuzzing, stateful) pass here."""
    case.body = _body(ctx, case.body)
    case.query = _query(ctx, case.query)
    case.path_parameters = _path(ctx, case.path_parameters)
    return case
