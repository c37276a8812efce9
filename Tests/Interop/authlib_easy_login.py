"""Easy Login driven by Authlib, a standard OAuth 2.0 client library, instead of Latchkey's SDK.

Run by Server/Tests/LatchkeyServerTests/InteropTests.swift against a live server and emulator. Only the
"browser" part (following redirects and picking an account on the emulator's dialog) is written
by hand; everything OAuth is Authlib's: PKCE, the authorization URL, state checking, the code
exchange, bearer calls, refresh. Prints one JSON object with what it saw.
"""
import json
import os
import sys
from urllib.parse import parse_qs, urlparse

import requests
from authlib.common.security import generate_token
from authlib.integrations.base_client import OAuthError
from authlib.integrations.requests_client import OAuth2Session

server = os.environ["LATCHKEY_SERVER"]
client_id = os.environ["LATCHKEY_CLIENT_ID"]
redirect_uri = os.environ.get("LATCHKEY_REDIRECT_URI", "http://127.0.0.1:47123/callback")
person = os.environ.get("EMULATOR_USER", "alice")

metadata = requests.get(server + "/.well-known/oauth-authorization-server", timeout=10).json()
client = OAuth2Session(
    client_id=client_id,
    redirect_uri=redirect_uri,
    scope="email",
    code_challenge_method="S256",
    token_endpoint_auth_method="none",
)
verifier = generate_token(64)
authorization_url, state = client.create_authorization_url(
    metadata["authorization_endpoint"], code_verifier=verifier
)

# The browser: Latchkey -> the emulator's dialog -> Latchkey's callback -> the app.
browser = requests.Session()
dialog = browser.get(authorization_url, allow_redirects=False, timeout=10).headers["Location"]
callback = browser.get(dialog + "&emulator_user=" + person, allow_redirects=False, timeout=10).headers["Location"]
answer = browser.get(callback, allow_redirects=False, timeout=10).headers["Location"]

token = client.fetch_token(
    metadata["token_endpoint"], authorization_response=answer, code_verifier=verifier, state=state
)
me = client.get(server + "/v1/users/me", timeout=10).json()
refreshed = client.refresh_token(metadata["token_endpoint"])

replay_error = None
code = parse_qs(urlparse(answer).query)["code"][0]
try:
    OAuth2Session(client_id=client_id, redirect_uri=redirect_uri, token_endpoint_auth_method="none").fetch_token(
        metadata["token_endpoint"], code=code, code_verifier=verifier
    )
except OAuthError as error:
    replay_error = error.error

json.dump(
    {
        "answer_has_iss": "iss" in parse_qs(urlparse(answer).query),
        "token_type": token.get("token_type"),
        "scope": token.get("scope"),
        "expires_in": token.get("expires_in"),
        "email": me.get("properties", {}).get("email"),
        "refreshed": refreshed.get("access_token") != token.get("access_token"),
        "replay_error": replay_error,
    },
    sys.stdout,
)
