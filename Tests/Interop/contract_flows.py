"""The real flows, successes first, each answer validated against docs/openapi.json by openapi-core.

Run by scripts/fuzz against `latchkey serve --dev` (server + emulator) started with the default
abuse limits, LATCHKEY_USER_WRITABLE_PROPERTIES=nickname and LATCHKEY_REQUIRE_SERVER_NONCE=true.
schemathesis generates requests from the document, so it mostly reaches error answers; this drives what a real app does (classic and
Limited Login sign-in, a server nonce, refresh and a superseded refresh, the user read and written, Easy Login
through the emulator's dialog to a redeemed code, a second factor enrolled, a sign-in held for it and completed, a step-up,
logout) and a few refusals of each kind,
including a limit reached (429 with Retry-After).

openapi-core is a second, independent reading of the document: every answer must be a documented
status with the documented content type, required headers and a body its schema accepts, and
every request sent to succeed must itself be valid by the document. Prints one line per call and
exits non-zero on the first disagreement.

Usage: contract_flows.py SERVER_URL EMULATOR_URL FACEBOOK_APP_ID DOCUMENT
"""
import base64
import hashlib
import hmac
import json
import secrets
import sys
import time
from urllib.parse import parse_qs, urlencode, urlparse

import requests
from openapi_core import OpenAPI
from openapi_core.contrib.requests import RequestsOpenAPIRequest, RequestsOpenAPIResponse

server, emulator, app_id, document_path = sys.argv[1:5]
with open(document_path, encoding="utf-8") as file:
    document_text = file.read()
document = json.loads(document_text)
# The document names no host (`servers: [{"url": "/"}]`), so this run's base URL is its server.
document["servers"] = [{"url": server}]
api = OpenAPI.from_dict(document)
http = requests.Session()
calls = 0


def fail(message):
    print(f"FAIL: {message}", file=sys.stderr)
    sys.exit(1)


def call(method, path, *, status, code=None, json_body=None, form=None, data=None, headers=None,
         bearer=None, url=None, valid_request=None):
    """One request; its answer must be `status` (and carry Latchkey `code`) and match the document."""
    global calls
    calls += 1
    headers = dict(headers or {})
    if bearer:
        headers["Authorization"] = f"Bearer {bearer}"
    if json_body is not None:
        data = json.dumps(json_body)
        headers.setdefault("Content-Type", "application/json")
    elif form is not None:
        data = urlencode(form)
        headers.setdefault("Content-Type", "application/x-www-form-urlencoded")
    response = http.request(method, url or server + path, data=data, headers=headers, allow_redirects=False,
                            timeout=10)
    label = f"{method} {urlparse(response.url).path} -> {response.status_code}"
    if response.status_code != status:
        fail(f"{label}, expected {status}: {response.text[:300]}")
    openapi_request = RequestsOpenAPIRequest(response.request)
    # Requests that should succeed must be ones the document allows; refusals are sent on purpose.
    if valid_request if valid_request is not None else status < 400:
        try:
            api.validate_request(openapi_request)
        except Exception as error:  # openapi-core raises a tree of validation errors
            fail(f"{label}: the request is not valid by the document: {describe(error)}")
    try:
        api.validate_response(openapi_request, RequestsOpenAPIResponse(response))
    except Exception as error:
        fail(f"{label}: the answer is not the document's: {describe(error)}\n{response.headers}\n{response.text[:500]}")
    body = None
    if response.headers.get("Content-Type", "").startswith("application/json"):
        body = response.json()
    if code is not None:
        found = (body or {}).get("error_code") or ((body or {}).get("error") or {}).get("code")
        if found != code:
            fail(f"{label}: code {found!r}, expected {code!r}")
    print(f"   ok {label}" + (f" {code}" if code else ""))
    return response, body


def describe(error):
    causes = [str(error)]
    for cause in getattr(error, "schema_errors", None) or getattr(error, "errors", None) or []:
        causes.append(str(cause)[:300])
    if error.__cause__ is not None:
        causes.append(describe(error.__cause__))
    return " / ".join(causes)


def emulator_post(path, body):
    response = requests.post(emulator + path, json=body, timeout=10)
    response.raise_for_status()
    return response.json()


def facebook_token(user):
    return emulator_post("/_emulator/tokens", {"app_id": app_id, "user": user, "scopes": ["email"]})["access_token"]


def query(location):
    return {key: values[0] for key, values in parse_qs(urlparse(location).query).items()}


# --- Operations and discovery
_, _ = call("GET", "/health", status=200)
_, ready = call("GET", "/ready", status=200)
served, _ = call("GET", "/openapi.json", status=200)
if served.content != document_text.encode("utf-8"):
    fail("GET /openapi.json is not docs/openapi.json byte for byte")
_, keys = call("GET", "/.well-known/jwks.json", status=200)
_, metadata = call("GET", "/.well-known/oauth-authorization-server", status=200)
call("GET", "/.well-known/openid-configuration", status=200)

# --- Classic login, then the session: read, write, refresh, reuse
_, first = call("POST", "/v1/auth/facebook", status=200, json_body={"accessToken": facebook_token("alice")})
_, again = call("POST", "/v1/auth/facebook", status=200,
                json_body={"accessToken": facebook_token("alice"), "fieldsMapping": {"first_name": "firstName"}})
if not first["isNewUser"] or again["isNewUser"] or first["user"]["id"] != again["user"]["id"]:
    fail("the second sign-in of alice did not find the user the first created")
access, refresh = first["session"]["access_token"], first["session"]["refresh_token"]
call("GET", "/v1/users/me", status=200, bearer=access)
_, patched = call("PATCH", "/v1/users/me", status=200, bearer=access, json_body={"properties": {"nickname": "Al"}})
if patched["properties"].get("nickname") != "Al":
    fail("PATCH /v1/users/me did not keep the nickname")
call("PATCH", "/v1/users/me", status=200, bearer=access, json_body={"properties": {"nickname": None}})
call("PATCH", "/v1/users/me", status=403, code="property_not_writable", bearer=access,
     json_body={"properties": {"email": "x@example.com"}})
call("PATCH", "/v1/users/me", status=400, code="invalid_request", bearer=access, json_body={"nickname": "Al"})
_, rotated = call("POST", "/v1/oauth/token", status=200, form={"grant_type": "refresh_token", "refresh_token": refresh})
call("POST", "/v1/oauth/token", status=200,
     json_body={"grant_type": "refresh_token", "refresh_token": rotated["refresh_token"]})
# The first token again, moments after its successor was used: a concurrent refresh that lost the race
# (refused, the session lives). Its reuse after the 10 s window would revoke the session; waiting for it
# is left to SessionTests' injected clock.
call("POST", "/v1/oauth/token", status=400, code="refresh_token_superseded",
     form={"grant_type": "refresh_token", "refresh_token": refresh})
call("GET", "/v1/users/me", status=200, bearer=access)

# --- Limited Login with a server nonce: the app gives Facebook its SHA-256 (LATCHKEY_LIMITED_LOGIN_NONCE=hashed,
# the default) and sends the server the nonce itself.
_, nonce = call("POST", "/v1/auth/nonce", status=200)
call("POST", "/v1/auth/nonce", status=200, json_body={})
nonce_claim = hashlib.sha256(nonce["nonce"].encode()).hexdigest()
id_token = emulator_post("/_emulator/id-tokens",
                         {"app_id": app_id, "user": "bob", "scopes": ["email"], "nonce": nonce_claim})["id_token"]
_, limited = call("POST", "/v1/auth/facebook", status=200, json_body={"idToken": id_token, "nonce": nonce["nonce"]})
call("POST", "/v1/auth/facebook", status=401, code="id_token_replayed",
     json_body={"idToken": id_token, "nonce": nonce["nonce"]})
# A fresh token carrying the spent server nonce.
id_token_again = emulator_post("/_emulator/id-tokens",
                               {"app_id": app_id, "user": "bob", "nonce": nonce_claim})["id_token"]
# The token's own claim sent as the nonce (what an interceptor has) is refused.
call("POST", "/v1/auth/facebook", status=401, code="nonce_mismatch",
     json_body={"idToken": id_token_again, "nonce": nonce_claim})
call("POST", "/v1/auth/facebook", status=401, code="nonce_invalid",
     json_body={"idToken": id_token_again, "nonce": nonce["nonce"]})
call("POST", "/v1/auth/facebook", status=400, code="id_token_sent_as_access_token", json_body={"accessToken": id_token})

# --- Easy Login: authorize -> the emulator's dialog -> callback -> the app -> the token endpoint
verifier = secrets.token_urlsafe(48)
challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
authorize = {"response_type": "code", "client_id": "latchkey-cli", "redirect_uri": "http://127.0.0.1/callback",
             "state": "app-state", "code_challenge": challenge, "code_challenge_method": "S256", "scope": "email"}
to_dialog, _ = call("GET", "/v1/oauth/authorize?" + urlencode(authorize), status=302)
dialog = requests.get(to_dialog.headers["Location"] + "&emulator_user=carol", allow_redirects=False, timeout=10)
callback = dialog.headers.get("Location", "")
if "/v1/oauth/facebook/callback" not in callback:
    fail(f"the emulator's dialog did not send the browser back to the server: {dialog.status_code} {callback}")
to_app, _ = call("GET", "", url=callback, status=302)
answer = query(to_app.headers["Location"])
if answer.get("state") != "app-state" or answer.get("iss") != server or "code" not in answer:
    fail(f"Easy Login's answer to the app lacks code, state or iss: {answer}")
redeem = {"grant_type": "authorization_code", "code": answer["code"], "client_id": "latchkey-cli",
          "redirect_uri": "http://127.0.0.1/callback", "code_verifier": verifier}
_, easy = call("POST", "/v1/oauth/token", status=200, form=redeem)
if "scope" not in easy:
    fail("the redeemed code's session names no scope")
call("POST", "/v1/oauth/token", status=400, code="authorization_code_reused", form=redeem)
# Refusals the browser sees: an unknown app is a page, a bad request a redirect with an error.
call("GET", "/v1/oauth/authorize?" + urlencode({**authorize, "client_id": "nobody"}), status=400, valid_request=True)
refused, _ = call("GET", "/v1/oauth/authorize?" + urlencode({**authorize, "code_challenge": "short"}), status=302,
                  valid_request=False)
if query(refused.headers["Location"]).get("error") != "invalid_request":
    fail("a malformed code_challenge did not come back to the app as invalid_request")
call("GET", "/v1/oauth/facebook/callback?" + urlencode({"state": "never-issued", "code": "x"}), status=400)

# --- The token endpoint's refusals, in RFC 6749's shape
call("POST", "/v1/oauth/token", status=400, code="invalid_request", form={"refresh_token": "x"})
call("POST", "/v1/oauth/token", status=400, code="unsupported_grant_type", form={"grant_type": "password"})
call("POST", "/v1/oauth/token", status=400, code="refresh_token_invalid",
     form={"grant_type": "refresh_token", "refresh_token": "guess"})
call("POST", "/v1/oauth/token", status=401, code="client_unknown", form={**redeem, "client_id": "nobody"})
call("POST", "/v1/oauth/token", status=401, code="client_unknown", form={"grant_type": "refresh_token"},
     headers={"Authorization": "Basic " + base64.b64encode(b"latchkey-cli:secret").decode()})
call("POST", "/v1/oauth/token", status=413, code="request_too_large",
     form={"grant_type": "refresh_token", "refresh_token": "x" * 70_000})

# --- Sign-in refusals
call("POST", "/v1/auth/facebook", status=401, code="facebook_token_invalid", json_body={"accessToken": "EAAmadeup"})
call("POST", "/v1/auth/facebook", status=401, code="id_token_invalid", json_body={"idToken": "a.b.c"})
call("POST", "/v1/auth/facebook", status=400, code="invalid_request", json_body={"accessToken": 5})
call("POST", "/v1/auth/facebook", status=400, code="malformed_request", data="{", headers={
    "Content-Type": "application/json"})
call("POST", "/v1/auth/facebook", status=415, code="malformed_request", data='{"accessToken": "x"}', headers={
    "Content-Type": "application/x-www-form-urlencoded"})
call("POST", "/v1/auth/facebook", status=403, code="property_not_writable",
     json_body={"accessToken": facebook_token("dave"), "fieldsMapping": {"first_name": "role"}})
call("POST", "/v1/auth/facebook", status=413, code="request_too_large", json_body={"accessToken": "x" * 70_000})
call("POST", "/v1/auth/nonce", status=400, code="invalid_request", json_body={"x": 1})

# --- Guests, linking, a conflict and its ticket, unlinking, deleting (serve --dev turns guests on)
_, guest = call("POST", "/v1/auth/anonymous", status=200, json_body={})
if not guest["user"]["isAnonymous"] or guest["user"]["identities"]:
    fail("a guest is not anonymous, or has an identity")
guest_access = guest["session"]["access_token"]
_, linked = call("POST", "/v1/users/me/identities", status=200, bearer=guest_access,
                 json_body={"accessToken": facebook_token("dave")})
if linked["user"]["id"] != guest["user"]["id"] or linked["user"]["isAnonymous"]:
    fail("linking kept neither the guest's id nor made it a full user")
_, conflict = call("POST", "/v1/users/me/identities", status=409, code="identity_already_linked",
                   bearer=guest_access, json_body={"accessToken": facebook_token("carol")})
ticket = conflict["error"]["linkTicket"]
_, carol = call("POST", "/v1/auth/facebook", status=200, json_body={"accessToken": facebook_token("carol")})
_, merged = call("POST", "/v1/users/me/identities/complete", status=200, bearer=carol["session"]["access_token"],
                 json_body={"linkTicket": ticket})
if merged["mergedUserId"] != guest["user"]["id"]:
    fail("completing the ticket did not name the merged account")
call("POST", "/v1/users/me/identities/complete", status=400, code="link_ticket_invalid",
     bearer=carol["session"]["access_token"], json_body={"linkTicket": ticket})
link_challenge = base64.urlsafe_b64encode(hashlib.sha256(b"a-verifier-" * 4).digest()).rstrip(b"=").decode()
_, handle = call("POST", "/v1/users/me/identities/link-requests", status=200, bearer=carol["session"]["access_token"],
                 json_body={"codeChallenge": link_challenge})
call("POST", "/v1/users/me/identities/link-requests", status=400, code="invalid_request",
     bearer=carol["session"]["access_token"], json_body={"codeChallenge": "short"})
if not handle["linkRequest"]:
    fail("a link request without a handle")
subjects = [identity["subject"] for identity in merged["user"]["identities"]]
call("DELETE", f"/v1/users/me/identities/facebook/{subjects[0]}", status=200, bearer=carol["session"]["access_token"])
call("DELETE", f"/v1/users/me/identities/facebook/{subjects[1]}", status=409, code="last_sign_in_method",
     bearer=carol["session"]["access_token"])
call("DELETE", "/v1/users/me/identities/facebook/1", status=404, code="not_found",
     bearer=carol["session"]["access_token"])
call("DELETE", "/v1/users/me", status=204, bearer=carol["session"]["access_token"])
call("GET", "/v1/users/me", status=401, code="session_revoked", bearer=carol["session"]["access_token"])

# --- Sign in with Apple against the emulator's Apple (serve --dev turns it on)
def apple_body(user, nonce="contract-nonce", sent_nonce=None):
    """What the device gets from Apple for `user` (the nonce claim the SHA-256 hex of `nonce`), as a body."""
    credential = emulator_post("/_emulator/apple/authorizations", {
        "user": user, "client_id": "com.example.latchkey", "nonce": hashlib.sha256(nonce.encode()).hexdigest()})
    body = {"idToken": credential["identity_token"], "authorizationCode": credential["authorization_code"],
            "nonce": sent_nonce or nonce}
    for key, name in (("given_name", "givenName"), ("family_name", "familyName")):
        if (credential.get("full_name") or {}).get(key):
            body[name] = credential["full_name"][key]
    return body


bob_apple = apple_body("bob")
_, bob = call("POST", "/v1/auth/apple", status=200, json_body=bob_apple)
if bob["user"]["identities"][0]["provider"] != "apple" or "givenName" not in bob["user"]["properties"]:
    fail("an Apple sign-in kept neither the identity nor the name Apple shared once")
call("POST", "/v1/auth/apple", status=400, code="apple_code_invalid", json_body=bob_apple)
call("POST", "/v1/auth/apple", status=401, code="nonce_mismatch", json_body=apple_body("bob", sent_nonce="another"),
     valid_request=True)
call("POST", "/v1/auth/apple", status=400, code="invalid_request", json_body={"idToken": "x"})
_, alice_again = call("POST", "/v1/auth/facebook", status=200, json_body={"accessToken": facebook_token("alice")})
_, alice_linked = call("POST", "/v1/users/me/identities", status=200, bearer=alice_again["session"]["access_token"],
                       json_body={"provider": "apple", **apple_body("alice")})
if sorted(identity["provider"] for identity in alice_linked["user"]["identities"]) != ["apple", "facebook"]:
    fail("linking Apple to a Facebook user did not add it")
notice = emulator_post("/_emulator/apple/notifications", {"user": "bob", "type": "email-disabled", "deliver": False})
call("POST", "/v1/apple/notifications", status=200, json_body={"payload": notice["payload"]})
# Delivered again (Apple retries until a 2xx): answered 200, applied once.
call("POST", "/v1/apple/notifications", status=200, json_body={"payload": notice["payload"]})
call("POST", "/v1/apple/notifications", status=400, code="apple_notification_invalid",
     json_body={"payload": notice["payload"][:-4] + "AAAA"}, valid_request=True)
delivered = emulator_post("/_emulator/apple/notifications", {"user": "bob", "type": "email-enabled"})
if delivered.get("status") != 200:
    fail(f"the emulator's delivery to the dev server's notification URL answered {delivered.get('status')}")

# --- Where you're signed in, the security history, and Facebook's callbacks
_, dave_first = call("POST", "/v1/auth/facebook", status=200, json_body={"accessToken": facebook_token("dave")})
_, dave_second = call("POST", "/v1/auth/facebook", status=200, json_body={"accessToken": facebook_token("dave")})
dave_access = dave_first["session"]["access_token"]
_, dave_sessions = call("GET", "/v1/users/me/sessions", status=200, bearer=dave_access)
others = [session["id"] for session in dave_sessions["sessions"] if not session["current"]]
if len(dave_sessions["sessions"]) != 2 or len(others) != 1:
    fail(f"two sign-ins listed as {dave_sessions}")
call("DELETE", f"/v1/users/me/sessions/{others[0]}", status=204, bearer=dave_access)
call("DELETE", f"/v1/users/me/sessions/{others[0]}", status=404, code="not_found", bearer=dave_access)
call("GET", "/v1/users/me", status=401, code="session_revoked", bearer=dave_second["session"]["access_token"])
_, page = call("GET", "/v1/users/me/events?limit=2", status=200, bearer=dave_access)
if not page["nextCursor"]:
    fail(f"three events did not fill two pages: {page}")
call("GET", f"/v1/users/me/events?limit=2&cursor={page['nextCursor']}", status=200, bearer=dave_access)
call("GET", "/v1/users/me/events?limit=101", status=400, code="invalid_request", bearer=dave_access)
deletion = emulator_post("/_emulator/callbacks/data-deletion",
                         {"app_id": app_id, "user": "dave", "url": server + "/v1/facebook/data-deletion"})
if not deletion.get("valid_response"):
    fail(f"the data-deletion callback's answer is not Facebook's shape: {deletion}")
_, repeated = call("POST", "/v1/facebook/data-deletion", status=200, form={"signed_request": deletion["signed_request"]})
if repeated["confirmation_code"] != json.loads(deletion["body"])["confirmation_code"]:
    fail("a repeated data-deletion request answered another confirmation code")
call("GET", "", status=200, url=repeated["url"])
call("GET", "/v1/facebook/data-deletion/never-issued", status=404)
removal = emulator_post("/_emulator/callbacks/deauthorize",
                        {"app_id": app_id, "user": "1234567890", "url": server + "/v1/facebook/deauthorize"})
if removal.get("status") != 200:
    fail(f"the deauthorize callback answered {removal}")
call("POST", "/v1/facebook/deauthorize", status=200, form={"signed_request": removal["signed_request"]})
call("POST", "/v1/facebook/deauthorize", status=400, code="signed_request_invalid", form={"signed_request": "x.y"},
     valid_request=True)
tampered = emulator_post("/_emulator/callbacks/data-deletion", {"app_id": app_id, "user": "dave", "tamper": "secret",
                                                                "url": server + "/v1/facebook/data-deletion"})
if tampered.get("status") != 400:
    fail(f"a data-deletion callback signed with another secret answered {tampered.get('status')}")

# --- A second factor: enrol, a sign-in held and completed, a step-up, recovery codes (carol)
def totp(secret, step):
    key = base64.b32decode(secret + "=" * (-len(secret) % 8))
    mac = hmac.new(key, step.to_bytes(8, "big"), hashlib.sha1).digest()
    offset = mac[-1] & 0x0F
    return f"{(int.from_bytes(mac[offset:offset + 4], 'big') & 0x7FFFFFFF) % 1000000:06d}"


_, carol_first = call("POST", "/v1/auth/facebook", status=200, json_body={"accessToken": facebook_token("carol")})
carol_access = carol_first["session"]["access_token"]
_, enrolled = call("POST", "/v1/users/me/factors", status=201, bearer=carol_access,
                   json_body={"type": "totp", "displayName": "Phone"})
if not enrolled["uri"].startswith("otpauth://totp/"):
    fail(f"the enrolment's URI is not an otpauth URI: {enrolled['uri']}")
call("POST", "/v1/users/me/factors", status=400, code="invalid_request", bearer=carol_access, json_body={"type": "sms"},
     valid_request=False)
step = int(time.time()) // 30
call("POST", f"/v1/users/me/factors/{enrolled['id']}/verify", status=400, code="factor_code_invalid", bearer=carol_access,
     json_body={"code": "000000" if totp(enrolled["secret"], step) != "000000" else "111111"})
_, verified = call("POST", f"/v1/users/me/factors/{enrolled['id']}/verify", status=200, bearer=carol_access,
                   json_body={"code": totp(enrolled["secret"], step - 1)})
recovery_codes = verified["recoveryCodes"]
call("GET", "/v1/users/me/factors", status=200, bearer=carol_access)
_, held = call("POST", "/v1/auth/facebook", status=401, code="second_factor_required",
               json_body={"accessToken": facebook_token("carol")})
challenge = held["error"]["challenge"]
call("POST", "/v1/auth/factor", status=400, code="factor_code_invalid", json_body={"challenge": challenge,
                                                                                   "code": totp(enrolled["secret"], step - 1)})
_, completed = call("POST", "/v1/auth/factor", status=200, json_body={"challenge": challenge,
                                                                      "code": totp(enrolled["secret"], step + 1)})
call("POST", "/v1/auth/factor", status=400, code="factor_challenge_invalid",
     json_body={"challenge": challenge, "code": totp(enrolled["secret"], step + 1)})
_, refused = call("DELETE", f"/v1/users/me/factors/{enrolled['id']}", status=403, code="second_factor_required",
                  bearer=carol_access)
_, raised = call("POST", "/v1/auth/factor", status=200,
                 json_body={"challenge": refused["error"]["challenge"], "recoveryCode": recovery_codes[0]})
call("POST", "/v1/users/me/recovery-codes", status=200, bearer=raised["access_token"])
_, step_up = call("POST", "/v1/users/me/factors/challenge", status=200, bearer=completed["session"]["access_token"])
call("DELETE", f"/v1/users/me/factors/{enrolled['id']}", status=204, bearer=raised["access_token"])
call("POST", "/v1/users/me/factors/challenge", status=409, code="second_factor_not_enrolled",
     bearer=raised["access_token"])

# --- Logout, then every session
limited_access = limited["session"]["access_token"]
call("POST", "/v1/auth/logout", status=204, bearer=limited_access)
call("POST", "/v1/auth/logout", status=401, code="session_revoked", bearer=limited_access)
call("GET", "/v1/users/me", status=401, code="unauthorized", bearer="not-a-token")
call("GET", "/v1/users/me", status=401, code="unauthorized")
_, ended = call("POST", "/v1/auth/logout-all", status=200, bearer=again["session"]["access_token"])
if ended["revokedSessions"] < 1:
    fail("logout-all ended no session")

# --- An abuse limit reached: 429 with Retry-After (LATCHKEY_LIMIT_NONCE_PER_ADDRESS, 60 a minute)
for attempt in range(200):
    response = http.post(server + "/v1/auth/nonce", timeout=10)
    if response.status_code == 429:
        break
    if response.status_code != 200:
        fail(f"POST /v1/auth/nonce answered {response.status_code} before its limit")
else:
    fail("200 nonces in a row: the default limit never answered 429 (was it raised?)")
call("POST", "/v1/auth/nonce", status=429, code="rate_limited")

print(f"   {calls} calls, every answer as the document says")
