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
PAGE_PASSWORD = "fixture page password"


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


def _call(method, path, body=None):
    """The fixture key's request to the server; the answer's `data`."""
    req = urllib.request.Request(
        f"{os.environ['UPSTATE_FIXTURE_BASE']}{path}",
        method=method,
        data=None if body is None else json.dumps(body).encode(),
        headers={
            "Authorization": f"Bearer {os.environ['UPSTATE_FIXTURE_KEY']}",
            "Content-Type": "application/json",
        },
    )
    with urllib.request.urlopen(req, timeout=10) as answer:
        return json.load(answer)["data"]


def _later(hours):
    return (datetime.utcnow() + timedelta(hours=hours)).strftime("%Y-%m-%dT%H:%M:%SZ")


def _incident():
    return _call("POST", "/api/v1/incidents", {
        "title": "Made for one request", "statusPageId": F["page"], "message": "Looking"})["id"]


def _window():
    return _call("POST", "/api/v1/maintenance", {
        "title": "Made for one request", "statusPageId": F["page"],
        "scheduledStartTime": _later(24), "scheduledEndTime": _later(25)})["id"]


def _started_window():
    w = _window()
    _call("POST", f"/api/v1/maintenance/{w}/start", {})
    return w


def _component():
    return _call("POST", "/api/v1/components", {
        "name": f"c-{uuid.uuid4().hex[:8]}", "statusPageId": F["page"]})["id"]


def _update():
    incident = _incident()
    _call("POST", f"/api/v1/incidents/{incident}/updates", {"message": "More"})
    updates = _call("GET", f"/api/v1/incidents/{incident}")["updates"]
    return updates[0]["id"]


# A row made for one request, by what the operation does to it: deleting,
# resolving, starting, completing or cancelling uses a row up once, and the
# same row is reachable through several operations (the management API
# and the application routes), so each such request gets its own.
def _integration(incident="draft"):
    """An Alertmanager integration on the fixture page: (id, receiver path)."""
    made = _call("POST", "/api/integrations", {
        "kind": "alertmanager", "name": "Made for one request", "statusPageId": F["page"],
        "rules": [{"componentIds": [F["component"]], "status": "degraded", "incident": incident}]})
    url = made["receiverUrl"]
    return made["id"], url[url.index("/api/integrations/"):]


def _draft():
    """A drafted incident waiting for approval: an alert posted, as
    Alertmanager would, to an integration of its own."""
    _, path = _integration()
    alert = {"version": "4", "groupKey": uuid.uuid4().hex, "status": "firing", "alerts": [
        {"status": "firing", "labels": {"alertname": "Fixture"}, "fingerprint": uuid.uuid4().hex}]}
    req = urllib.request.Request(
        f"{os.environ['UPSTATE_FIXTURE_BASE']}{path}", method="POST",
        data=json.dumps(alert).encode(), headers={"Content-Type": "application/json"})
    urllib.request.urlopen(req, timeout=10).close()
    return _call("GET", "/api/alert-drafts")[0]["id"]


FRESH = [
    ("GET", ("/api/alert-drafts/{id}",), _draft),
    ("POST", ("/api/alert-drafts/{id}/approve", "/api/alert-drafts/{id}/dismiss"), _draft),
    ("DELETE", ("/api/integrations/{id}", "/api/integrations/{id}/rules/{index}"),
     lambda: _integration()[0]),
    ("DELETE", ("/api/v1/incidents/{id}", "/api/incidents/{id}"), _incident),
    ("DELETE", ("/api/v1/maintenance/{id}", "/api/maintenance/{id}"), _window),
    ("DELETE", ("/api/v1/components/{id}", "/api/components/{id}"), _component),
    ("DELETE", ("/api/v1/component-groups/{id}", "/api/component-groups/{id}", "/api/groups/{id}"),
     lambda: _call("POST", "/api/v1/component-groups", {
         "name": f"g-{uuid.uuid4().hex[:8]}", "statusPageId": F["page"]})["id"]),
    ("DELETE", ("/api/v1/statuspages/{id}", "/api/statuspages/{id}"),
     lambda: _call("POST", "/api/v1/statuspages", {
         "name": "Made for one request", "slug": f"d-{uuid.uuid4().hex[:12]}"})["id"]),
    ("DELETE", ("/api/incident-updates/{id}",), _update),
    ("DELETE", ("/api/notifications/{id}",),
     lambda: _call("POST", "/api/notifications", {
         "name": "Made for one request", "kind": "webhook",
         "target": "https://hooks.example.com/once"})["id"]),
    ("DELETE", ("/api/third-party/{id}",),
     lambda: _call("POST", "/api/third-party", {
         "componentId": _component(), "url": "https://vendor.example"})["id"]),
    ("DELETE", ("/api/monitors/{id}",),
     lambda: _call("POST", "/api/monitors", {
         "componentId": _component(), "kind": "heartbeat", "intervalSeconds": 60})["id"]),
    ("POST", ("/api/v1/incidents/{id}/resolve", "/api/incidents/{id}/resolve"), _incident),
    ("POST", ("/api/v1/maintenance/{id}/start", "/api/maintenance/{id}/start",
              "/api/v1/maintenance/{id}/cancel", "/api/maintenance/{id}/cancel"), _window),
    ("POST", ("/api/v1/maintenance/{id}/complete", "/api/maintenance/{id}/complete"),
     _started_window),
]


def _channel(kind):
    """A channel of `kind` (a change may name the kind, which must be the
    channel's own)."""
    body = {"name": "Made for one request", "kind": kind}
    if kind == "telegram":
        body.update(target="-1001234567890", token="123456:ABC-DEF")
    elif kind == "email":
        body.update(target="ops@example.com")
    else:
        body.update(target=f"https://hooks.example.com/{kind}")
    return _call("POST", "/api/notifications", body)["id"]


def _fresh(op):
    for method, paths, make in FRESH:
        if op.method.upper() == method and op.path in paths:
            return make
    return None


def _listed(what):
    """The fixture page's components or groups, as they are now."""
    req = urllib.request.Request(
        f"{os.environ['UPSTATE_FIXTURE_BASE']}/api/v1/{what}?statusPageId={F['page']}",
        headers={"Authorization": f"Bearer {os.environ['UPSTATE_FIXTURE_KEY']}"},
    )
    with urllib.request.urlopen(req, timeout=10) as answer:
        return json.load(answer)["data"]


def _audience_room():
    """Clears the fixture page's audiences before it holds 50."""
    try:
        listed = _call("GET", f"/api/v1/statuspages/{F['page']}/audiences")
        if len(listed) >= 40:
            for a in listed:
                try:
                    _call("DELETE", f"/api/v1/statuspages/{F['page']}/audiences/{a['id']}")
                except KeyError:
                    pass  # a deletion answers a message, not data
    except OSError:
        pass  # the server is busy: the case may meet a full page


def _body(ctx, body):
    if not isinstance(body, dict):
        return body
    # Who signs in and proves it again is the owner the test made: a
    # generated password is a wrong one (and wrong ones lock people out).
    path = ctx.operation.path if ctx.operation is not None else ""
    method = ctx.operation.method.upper() if ctx.operation is not None else ""
    if path in ("/api/auth/login", "/api/admin/step-up/verify-password"):
        if isinstance(body.get("email"), str):
            body["email"] = os.environ.get("UPSTATE_FIXTURE_EMAIL", "")
        if isinstance(body.get("password"), str):
            body["password"] = os.environ.get("UPSTATE_FIXTURE_PASSWORD", "")
    if _num(body.get("statusPageId")):
        body["statusPageId"] = F["page"]
    if _num(body.get("incidentId")):
        # Following an incident needs one that is still open (any request
        # may have resolved the fixture's).
        body["incidentId"] = _incident() if path == "/api/subscribers" else F["incident"]
    # An incident told resolved says when it began, not after its end
    # (core's incident rule: resolvedAt needs createdAt, not before it).
    if method == "POST" and path in ("/api/incidents", "/api/v1/incidents", "/api/v2/incidents") \
            and isinstance(body.get("resolvedAt"), str):
        body["createdAt"] = body["resolvedAt"]
    # An update of the past is said when it was said: not in the future and
    # not before the incident's last update (core's rule, which no schema
    # can state); now is both.
    if method == "POST" and path.endswith("/updates") and isinstance(body.get("createdAt"), str):
        body["createdAt"] = datetime.utcnow().strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"
    # Comments stay offered: other operations read and moderate them.
    if path == "/api/features":
        body["comments"] = True
    # The fixture pages stay published: every public read names them.
    if body.get("isPublic") is False and method in ("PATCH", "PUT"):
        body["isPublic"] = True
    if isinstance(body.get("pageIds"), list):
        body["pageIds"] = [F["page"]] if body["pageIds"] else []
    # One monitor per component: a new one watches a component of its own.
    if path == "/api/monitors" and method == "POST" and _num(body.get("componentId")):
        body["componentId"] = _component()
    # One follow per component, on a component no monitor checks; a
    # follow stays with its component; a feed names no vendor component.
    if path == "/api/third-party" and method == "POST" and _num(body.get("componentId")):
        body["componentId"] = _component()
    if path.startswith("/api/third-party/"):
        body.pop("componentId", None)
    if path.startswith("/api/third-party") and isinstance(body.get("vendorComponent"), str):
        body["vendorComponent"] = ""
    if _num(body.get("groupId")):
        body["groupId"] = F["group"]
    if isinstance(body.get("componentIds"), list):
        body["componentIds"] = [F["component"]] if body["componentIds"] else []
    # An integration's rules name the fixture page's component, and their
    # matchers are ones that read: the document says a matcher's length,
    # not Alertmanager's grammar (nor that a regex must compile).
    if isinstance(body.get("rules"), list):
        body["rules"] = [
            dict(r, when="severity=critical", componentIds=[F["component"]])
            for r in body["rules"] if isinstance(r, dict)
        ]
    if path == "/api/integrations/{id}/rules" and "when" in body:
        body["when"] = "severity=critical"
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
    if "slug" in body and method == "PATCH":
        body["slug"] = F["slug"]
    elif isinstance(body.get("slug"), str) and path in ("/api/v1/statuspages", "/api/statuspages"):
        body["slug"] = f"p-{uuid.uuid4().hex[:12]}"
    # Passwords go on the second page (so the first stays public for every
    # other read), always the one the test knows, which opens it.
    if path.endswith("/password") and isinstance(body.get("password"), str):
        body["password"] = PAGE_PASSWORD
    if path == "/api/verify-page-password":
        if isinstance(body.get("slug"), str):
            body["slug"] = F["slug2"]
        if isinstance(body.get("password"), str):
            body["password"] = PAGE_PASSWORD
    if isinstance(body.get("defaultPage"), str):
        # No default page: a slug names a page only while it keeps it, and
        # fuzzed cases running alongside may rename or remove the fixture
        # (tests/api/settings.rs checks a slug that names no page).
        body["defaultPage"] = None
    # A recurring rule is written (rrule) or picked (repeat, with its days):
    # the document can say each field's shape, not that one of the two must
    # be there, nor which days a pick needs.
    if path.startswith("/api/maintenance/recurring") and method in ("POST", "PUT"):
        if body.get("repeat") in (None, "rule"):
            body.setdefault("rrule", "FREQ=WEEKLY;BYDAY=SU")
        if body.get("repeat") == "weekly" and not body.get("weekdays"):
            body["weekdays"] = ["MO"]
        if body.get("repeat") == "monthly" and not _num(body.get("monthDay")):
            body["monthDay"] = 1
    # Publishing needs somewhere to publish to, and a new bucket key its
    # secret: rules across fields the document states only in words. The
    # copy goes to a folder under the test's own copy root.
    if path == "/api/export-settings" and method == "PUT":
        s3 = body.get("s3")
        if isinstance(s3, dict):
            s3.setdefault("secretAccessKey", "fuzz-secret")
        if body.get("enabled") is True and not body.get("directory") and not isinstance(s3, dict):
            body["directory"] = "copy"
    # Single sign-on turned on needs its provider and a way in for someone:
    # rules across fields. It never becomes the only way in, which would
    # lock out the pass's own password sign-ins.
    if path == "/api/sso-settings" and method == "PUT":
        if body.get("enabled") is True:
            if not body.get("issuer"):
                body["issuer"] = "https://id.example.com"
            if not body.get("clientId"):
                body["clientId"] = "upstate"
            body.setdefault("clientSecret", "fuzz-secret")
            if not (body.get("adminGroups") or body.get("editorGroups")
                    or body.get("viewerGroups") or body.get("defaultRole")):
                body["defaultRole"] = "viewer"
        body["ssoOnly"] = False
    # A page's own provider needs its secret with its first client id.
    if path.endswith("/viewer-provider") and method == "PUT" and not body.get("clientSecret"):
        body["clientSecret"] = "fuzz-secret"
    # Templates' names are unique: a renamed one takes a name nobody has
    # (generated names repeat, and the first template's is taken).
    if path.startswith("/api/incident-templates") and isinstance(body.get("name"), str):
        body["name"] = f"t-{uuid.uuid4().hex[:8]}"
    # An audience's name is unique on its page, and a page holds at most
    # 50: a new one takes a name nobody has, and the page's audiences are
    # cleared before it fills up (generated cases are many).
    # A new viewer is an address nobody invited yet.
    if path.endswith("/viewers") and method == "POST" and isinstance(body.get("email"), str):
        body["email"] = f"v-{uuid.uuid4().hex[:8]}@example.com"
    if "/audiences" in path:
        if isinstance(body.get("name"), str):
            body["name"] = f"a-{uuid.uuid4().hex[:8]}"
        # A component in an audience is hidden from everyone else: one
        # made for it, so the fixture's stays in every public read.
        if body.get("componentIds"):
            body["componentIds"] = [_component()]
        if method == "POST":
            _audience_room()
    # A notice preview is of an incident's change or of a new incident on a
    # page: one of the two names it.
    if path == "/api/incidents/notice-preview" and "incidentId" not in body:
        body["statusPageId"] = F["page"]
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
    if _num(query.get("incidentId")):
        query["incidentId"] = F["incident"]
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


def _path(ctx, params, body=None):
    if not isinstance(params, dict):
        return params
    if isinstance(params.get("slug"), str):
        params["slug"] = F["slug"]
    op = ctx.operation
    if isinstance(params.get("token"), str) and op is not None and op.path.startswith("/api/heartbeat/"):
        params["token"] = F["heartbeat"]
    # A rule's index counts from 0: a fresh integration has one rule.
    if op is not None and op.path == "/api/integrations/{id}/rules/{index}" and "index" in params:
        params["index"] = 0
    # A page's viewer or audience is one made for the request, on the
    # fixture page, so changing and removing it meet a real row.
    for param, what, made in (
        ("audienceId", "audiences", lambda: {"name": f"a-{uuid.uuid4().hex[:8]}"}),
        ("viewerId", "viewers", lambda: {"email": f"v-{uuid.uuid4().hex[:8]}@example.com"}),
    ):
        if op is None or param not in params:
            continue
        if what == "audiences":
            _audience_room()
        try:
            params[param] = _call("POST", f"/api/v1/statuspages/{F['page']}/{what}", made())["id"]
            params["id"] = F["page"]
            return params
        except OSError:
            pass
    # A page's own provider is set on the fixture page before it is read
    # or removed there.
    if op is not None and op.path.endswith("/viewer-provider") and "id" in params:
        if op.method.upper() in ("GET", "DELETE"):
            try:
                _call("PUT", f"/api/v1/statuspages/{F['page']}/viewer-provider",
                      {"issuer": "https://id.example.com", "clientId": "fuzz", "clientSecret": "fuzz-secret"})
            except OSError:
                pass
        params["id"] = F["page"]
        return params
    # A resource's id names the first row the test made of its kind (each
    # kind's first row has id 1), so reads and changes meet a real row; a
    # DELETE takes the second, so the first ones stay for the rest.
    if _num(params.get("id")):
        op = ctx.operation
        # Only the second page has a password: it is set there, and taken
        # off the first (which has none), so it stays for verify-page-password.
        if op is not None and op.path.endswith("/password"):
            params["id"] = F["page"] if op.method.upper() == "DELETE" else F["page2"]
            return params
        # A channel's change that names its kind meets a channel of that kind.
        # A kind no channel can be made of (a boundary value of the coverage
        # walk, `push`, which is no team channel) is refused by the server
        # when the channel is made: the change then names channel 1, and
        # the server answers it as it answers any such change.
        if (op is not None and op.path == "/api/notifications/{id}" and op.method.upper() == "PUT"
                and isinstance(body, dict) and isinstance(body.get("kind"), str)):
            try:
                params["id"] = _channel(body["kind"])
                return params
            except OSError:
                pass
        # Monitor 1 stays the heartbeat whose token the heartbeat routes use.
        if op is not None and op.path == "/api/monitors/{id}" and op.method.upper() == "PUT":
            params["id"] = 2
            return params
        make = _fresh(op) if op is not None else None
        if make is not None:
            try:
                params["id"] = make()
                return params
            except OSError:
                pass  # the server is busy or down: the row named below
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
    case.path_parameters = _path(ctx, case.path_parameters, case.body)
    return case


@schemathesis.hook
def before_add_examples(ctx, examples):
    """The document's own examples (the examples phase, which does not pass
    through `map_case`) get the same fixtures: an example may name an
    incident that is resolved by now, or unpublish the fixture page."""
    for case in examples:
        map_case(ctx, case)
