#!/usr/bin/env python3
"""Writes crypto-vectors.json: test vectors for the Facebook and JOSE primitives, and the JWT attack
corpus, made with an implementation independent of ours (Python's hmac/hashlib and the
`cryptography` package), so the Swift module is checked against someone else's arithmetic.

Run it by hand when a vector is added (`python3 Tests/Vectors/generate.py`); the output is committed
and the keys in it are test keys, generated here on the first run (kept in the two .pem files) and
used nowhere else. RS256 and HMAC output is deterministic; ECDSA is not, so each run writes new
ES256 signatures (any run's output is valid).
"""
import base64, hashlib, hmac, json, os, pathlib

from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, padding, rsa
from cryptography.hazmat.primitives.asymmetric.utils import decode_dss_signature, encode_dss_signature

HERE = pathlib.Path(__file__).resolve().parent
NOW = 1_800_000_000  # the clock every id-token vector is checked at
APP = "1234567890"
OTHER_APP = "999000999"
ISSUER = "https://www.facebook.com"
NONCE = "n-0S6_WzA2Mj"
# What an app following the SDK (and Firebase's convention) gives Facebook: the SHA-256 hex of the raw
# nonce it keeps and later sends. The server's default (LATCHKEY_LIMITED_LOGIN_NONCE=hashed) takes only this.
NONCE_CLAIM = hashlib.sha256(NONCE.encode()).hexdigest()
P256_ORDER = 0xFFFFFFFF00000000FFFFFFFFFFFFFFFFBCE6FAADA7179E84F3B9CAC2FC632551


def b64u(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def compact_json(value) -> bytes:
    return json.dumps(value, separators=(",", ":"), sort_keys=True).encode()


def pem_or_reuse(name: str, make):
    """Keys are kept across runs so the committed vectors only change where a case changes."""
    path = HERE / name
    if path.exists():
        return serialization.load_pem_private_key(path.read_bytes(), password=None)
    key = make()
    path.write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                       serialization.NoEncryption()))
    return key


rsa_key = pem_or_reuse("rsa-test-key.pem", lambda: rsa.generate_private_key(public_exponent=65537, key_size=2048))
rsa_public = rsa_key.public_key()
spki = rsa_public.public_bytes(serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo)
public_pem = rsa_public.public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
numbers = rsa_public.public_numbers()
KID = hashlib.sha256(spki).hexdigest()[:40]  # as the emulator names its keys
jwk = {"kid": KID, "kty": "RSA", "alg": "RS256", "use": "sig",
       "n": b64u(numbers.n.to_bytes(256, "big")), "e": b64u(numbers.e.to_bytes(3, "big"))}

ec_key = pem_or_reuse("p256-test-key.pem", lambda: ec.generate_private_key(ec.SECP256R1()))
ec_raw = ec_key.private_numbers().private_value.to_bytes(32, "big")


def rs256(input_: bytes) -> bytes:
    return rsa_key.sign(input_, padding.PKCS1v15(), hashes.SHA256())


def es256(input_: bytes, high_s=False) -> bytes:
    r, s = decode_dss_signature(ec_key.sign(input_, ec.ECDSA(hashes.SHA256())))
    low = min(s, P256_ORDER - s)
    s = P256_ORDER - low if high_s else low
    return r.to_bytes(32, "big") + s.to_bytes(32, "big")


def token(header: dict, claims, sign=rs256, raw_claims: bytes = None, raw_header: bytes = None) -> str:
    h = b64u(raw_header if raw_header is not None else compact_json(header))
    c = b64u(raw_claims if raw_claims is not None else (claims if isinstance(claims, bytes) else compact_json(claims)))
    signing_input = f"{h}.{c}".encode()
    return f"{h}.{c}.{b64u(sign(signing_input))}"


JTI = iter(range(1, 10_000))


def std_token(header: dict, claims_: dict) -> str:
    """Segments in standard base64 (`+`, `/`) and signed as sent, so only the alphabet is wrong."""
    to_std = lambda text: text.replace("-", "+").replace("_", "/")
    h, c = to_std(b64u(compact_json(header))), to_std(b64u(compact_json(claims_)))
    assert "+" in c or "/" in c
    return f"{h}.{c}.{b64u(rs256(f'{h}.{c}'.encode()))}"


def claims(**overrides):
    """Each token gets its own jti, so the server's single-use check never decides a case."""
    base = {"iss": ISSUER, "aud": APP, "sub": "10000001", "iat": NOW - 60, "exp": NOW - 60 + 3600,
            "jti": f"abcd.{next(JTI):064x}", "nonce": NONCE_CLAIM, "name": "Vector Person"}
    base.update(overrides)
    return {k: v for k, v in base.items() if v is not None}


H = {"alg": "RS256", "typ": "JWT", "kid": KID}
hs_with_pem = lambda i: hmac.new(public_pem, i, hashlib.sha256).digest()
flip = lambda sig: bytes([sig[0] ^ 1]) + sig[1:]

# Each id-token case: what the server (policy: exactly ISSUER, app APP) and the device
# (policy: any *.facebook.com issuer) must answer: "ok" or the error code.
id_cases = [
    ("valid, nonce is the SHA-256 hex of the one sent", token(H, claims()), NONCE, "ok", "ok"),
    ("nonce echoed raw: the device takes it, the server's default (hashed) does not", token(H, claims(nonce=NONCE)), NONCE, "nonce_mismatch", "ok"),
    ("intercepted token sent with its own claim as the nonce", token(H, claims()), NONCE_CLAIM, "nonce_mismatch", "ok"),
    ("valid, aud an array holding the app", token(H, claims(aud=[OTHER_APP, APP])), NONCE, "ok", "ok"),
    ("issuer limited.facebook.com: device rule takes it, server list does not", token(H, claims(iss="https://limited.facebook.com")), NONCE, "id_token_wrong_issuer", "ok"),
    ("issuer a look-alike host", token(H, claims(iss="https://facebook.com.evil.example")), NONCE, "id_token_wrong_issuer", "id_token_wrong_issuer"),
    ("issuer over http", token(H, claims(iss="http://www.facebook.com")), NONCE, "id_token_wrong_issuer", "id_token_wrong_issuer"),
    ("another app's token", token(H, claims(aud=OTHER_APP)), NONCE, "id_token_wrong_audience", "id_token_wrong_audience"),
    ("expired", token(H, claims(iat=NOW - 7200, exp=NOW - 3600)), NONCE, "id_token_expired", "id_token_expired"),
    ("issued an hour ago", token(H, claims(iat=NOW - 3600, exp=NOW + 600)), NONCE, "id_token_iat_invalid", "id_token_iat_invalid"),
    ("issued in the future", token(H, claims(iat=NOW + 3600, exp=NOW + 7200)), NONCE, "id_token_iat_invalid", "id_token_iat_invalid"),
    ("no exp", token(H, claims(exp=None)), NONCE, "id_token_invalid", "id_token_invalid"),
    ("no sub", token(H, claims(sub=None)), NONCE, "id_token_invalid", "id_token_invalid"),
    ("nonce of another login", token(H, claims(nonce="someone-else")), NONCE, "nonce_mismatch", "nonce_mismatch"),
    ("empty nonce claim", token(H, claims(nonce="")), NONCE, "nonce_mismatch", "nonce_mismatch"),
    # The attack corpus.
    ("alg none, empty signature", token({"alg": "none", "typ": "JWT", "kid": KID}, claims(), sign=lambda i: b""), NONCE, "id_token_invalid", "id_token_invalid"),
    ("alg None, RS256 signature kept", token({"alg": "None", "typ": "JWT", "kid": KID}, claims()), NONCE, "id_token_invalid", "id_token_invalid"),
    ("HS256 keyed with the public key PEM", token({"alg": "HS256", "typ": "JWT", "kid": KID}, claims(), sign=hs_with_pem), NONCE, "id_token_invalid", "id_token_invalid"),
    ("RS256 signature, one bit flipped", token(H, claims(), sign=lambda i: flip(rs256(i))), NONCE, "id_token_invalid", "id_token_invalid"),
    ("RS256 signature with a leading zero byte", token(H, claims(), sign=lambda i: b"\0" + rs256(i)), NONCE, "id_token_invalid", "id_token_invalid"),
    ("RS256 signature truncated", token(H, claims(), sign=lambda i: rs256(i)[:-1]), NONCE, "id_token_invalid", "id_token_invalid"),
    ("kid path traversal", token({**H, "kid": "../../../../etc/passwd"}, claims()), NONCE, "id_token_invalid", "id_token_invalid"),
    ("kid SQL injection", token({**H, "kid": "x' UNION SELECT 'key"}, claims()), NONCE, "id_token_invalid", "id_token_invalid"),
    ("kid missing", token({"alg": "RS256", "typ": "JWT"}, claims()), NONCE, "id_token_invalid", "id_token_invalid"),
    ("kid unknown but well formed", token({**H, "kid": "f" * 40}, claims()), NONCE, "id_token_unknown_key", "id_token_unknown_key"),
    ("jku names an attacker's key set", token({**H, "jku": "https://attacker.example/jwks"}, claims()), NONCE, "id_token_invalid", "id_token_invalid"),
    ("x5u names an attacker's certificate", token({**H, "x5u": "https://attacker.example/cert.pem"}, claims()), NONCE, "id_token_invalid", "id_token_invalid"),
    ("jwk embeds the signing key", token({**H, "jwk": jwk}, claims()), NONCE, "id_token_invalid", "id_token_invalid"),
    ("x5c embeds a certificate chain", token({**H, "x5c": ["MIIB"]}, claims()), NONCE, "id_token_invalid", "id_token_invalid"),
    ("crit names an unknown extension", token({**H, "crit": ["exp"]}, claims()), NONCE, "id_token_invalid", "id_token_invalid"),
    ("typ is not JWT", token({**H, "typ": "at+jwt"}, claims()), NONCE, "id_token_invalid", "id_token_invalid"),
    ("duplicate sub claim", token(H, None, raw_claims=compact_json(claims())[:-1] + b',"sub":"20000002"}'), NONCE, "id_token_invalid", "id_token_invalid"),
    ("duplicate alg header", token(H, claims(), raw_header=b'{"alg":"none","kid":"' + KID.encode() + b'","alg":"RS256"}'), NONCE, "id_token_invalid", "id_token_invalid"),
    ("nested: payload is a signed JWT", token({**H, "cty": "JWT"}, token(H, claims()).encode()), NONCE, "id_token_invalid", "id_token_invalid"),
    ("nested: cty JWT over ordinary claims", token({**H, "cty": "JWT"}, claims()), NONCE, "id_token_invalid", "id_token_invalid"),
    ("huge: 20 KB of claims", token(H, claims(padding="A" * 20_000)), NONCE, "id_token_invalid", "id_token_invalid"),
    ("four segments", token(H, claims()) + ".AAAA", NONCE, "id_token_invalid", "id_token_invalid"),
    ("claims are an array", token(H, [claims()]), NONCE, "id_token_invalid", "id_token_invalid"),
    ("standard base64 instead of base64url, correctly signed", std_token(H, claims(name="??>>??")), NONCE, "id_token_invalid", "id_token_invalid"),
]

# Latchkey access tokens: ES256 over the P-256 key below, issuer ISSUER_LATCHKEY, aud latchkey.
ISSUER_LATCHKEY = "https://auth.example.com"
ec_pub = ec_key.public_key().public_numbers()
thumb_input = compact_json({"crv": "P-256", "kty": "EC", "x": b64u(ec_pub.x.to_bytes(32, "big")), "y": b64u(ec_pub.y.to_bytes(32, "big"))})
EC_KID = b64u(hashlib.sha256(thumb_input).digest()[:16])
AH = {"alg": "ES256", "typ": "JWT", "kid": EC_KID}
access = lambda **o: {k: v for k, v in {"iss": ISSUER_LATCHKEY, "sub": "user-1", "aud": "latchkey", "sid": "session-1",
                                        "iat": NOW - 60, "exp": NOW + 840, "jti": "j1", **o}.items() if v is not None}
ec_public_der = ec_key.public_key().public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
access_cases = [
    ("valid", token(AH, access(), sign=es256), "ok"),
    ("high-S twin of a valid signature", token(AH, access(), sign=lambda i: es256(i, high_s=True)), "unauthorized"),
    ("alg none", token({**AH, "alg": "none"}, access(), sign=lambda i: b""), "unauthorized"),
    ("HS256 keyed with the public key PEM", token({**AH, "alg": "HS256"}, access(), sign=lambda i: hmac.new(ec_public_der, i, hashlib.sha256).digest()), "unauthorized"),
    ("HS256 keyed with the JWK's x", token({**AH, "alg": "HS256"}, access(), sign=lambda i: hmac.new(ec_pub.x.to_bytes(32, "big"), i, hashlib.sha256).digest()), "unauthorized"),
    ("RS256 signed with a key of the attacker's", token({**AH, "alg": "RS256"}, access(), sign=rs256), "unauthorized"),
    ("kid path traversal", token({**AH, "kid": "../keys/" + EC_KID}, access(), sign=es256), "unauthorized"),
    ("jku", token({**AH, "jku": "https://attacker.example/jwks"}, access(), sign=es256), "unauthorized"),
    ("jwk embedded", token({**AH, "jwk": {"kty": "EC"}}, access(), sign=es256), "unauthorized"),
    ("x5u", token({**AH, "x5u": "https://attacker.example/c"}, access(), sign=es256), "unauthorized"),
    ("crit", token({**AH, "crit": ["b64"], "b64": False}, access(), sign=es256), "unauthorized"),
    ("duplicate sub", token(AH, None, sign=es256, raw_claims=compact_json(access())[:-1] + b',"sub":"user-2"}'), "unauthorized"),
    ("nested JWT payload", token({**AH, "cty": "JWT"}, token(AH, access(), sign=es256).encode(), sign=es256), "unauthorized"),
    ("huge", token(AH, access(padding="A" * 8000), sign=es256), "unauthorized"),
    ("signature padded with '='", token(AH, access(), sign=es256) + "=", "unauthorized"),
    ("expired", token(AH, access(iat=NOW - 3600, exp=NOW - 60), sign=es256), "unauthorized"),
    ("another issuer", token(AH, access(iss="https://evil.example"), sign=es256), "unauthorized"),
    ("another audience", token(AH, access(aud="someone-else"), sign=es256), "unauthorized"),
]

appsecret = [
    {"access_token": t, "app_secret": s, "proof": hmac.new(s.encode(), t.encode(), hashlib.sha256).hexdigest()}
    for t, s in [("EAAvector", "0123456789abcdef0123456789abcdef"), ("EAA" + "x" * 180, "s3cr3t")]
]
bk_rs = "Mf_s6nTb38UYqioBmPqu0Ewm9souPZB9I2fIGwV729U.eyJ1c2VyX2lkIjoiMCIsImFsZ29yaXRobSI6IkhNQUMtU0hBMjU2IiwiaXNzdWVkX2F0IjoxNjI0MjQ0MTU2fQ"
def signed(payload, secret, alter=lambda s: s):
    p = b64u(compact_json(payload))
    return alter(b64u(hmac.new(secret.encode(), p.encode(), hashlib.sha256).digest()) + "." + p)
signed_requests = [
    {"name": "published vector (bk-rs)", "signed_request": bk_rs, "secret": "key", "expect": "ok",
     "payload": {"user_id": "0", "algorithm": "HMAC-SHA256", "issued_at": 1624244156}},
    {"name": "signature padded with '='", "signed_request": bk_rs.replace(".", "=.", 1), "secret": "key", "expect": "ok",
     "payload": {"user_id": "0", "algorithm": "HMAC-SHA256", "issued_at": 1624244156}},
    {"name": "another secret", "signed_request": bk_rs, "secret": "other", "expect": "signature"},
    {"name": "HMAC-SHA1 announced", "signed_request": signed({"algorithm": "HMAC-SHA1", "user_id": "1"}, "key"), "secret": "key", "expect": "algorithm"},
    {"name": "no algorithm", "signed_request": signed({"user_id": "1"}, "key"), "secret": "key", "expect": "algorithm"},
    {"name": "payload swapped under a valid signature", "signed_request": bk_rs.split(".")[0] + "." + b64u(b'{"user_id":"1","algorithm":"HMAC-SHA256"}'), "secret": "key", "expect": "signature"},
    {"name": "three segments", "signed_request": bk_rs + ".x", "secret": "key", "expect": "malformed"},
    {"name": "no dot", "signed_request": bk_rs.replace(".", ""), "secret": "key", "expect": "malformed"},
]
pkce = [
    {"name": "RFC 7636 Appendix B", "verifier": "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk",
     "challenge": "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"},
    {"name": "128 characters with every unreserved symbol", "verifier": ("aZ09-._~" * 16),
     "challenge": b64u(hashlib.sha256(("aZ09-._~" * 16).encode()).digest())},
]
nonces = [{"raw": r, "sha256": hashlib.sha256(r.encode()).hexdigest()} for r in [NONCE, "ÜnïcødeNonce"]]

out = {
    "comment": "Generated by Tests/Vectors/generate.py with Python's hmac/hashlib and cryptography; test keys only.",
    "now": NOW, "app_id": APP, "issuer": ISSUER, "nonce": NONCE,
    "rsa": {"private_key_pem": (HERE / "rsa-test-key.pem").read_text(), "jwk": jwk},
    "p256": {"raw_private_key": b64u(ec_raw), "kid": EC_KID, "issuer": ISSUER_LATCHKEY},
    "id_tokens": [{"name": n, "token": t, "nonce": no, "server": s, "device": d} for n, t, no, s, d in id_cases],
    "access_tokens": [{"name": n, "token": t, "expect": e} for n, t, e in access_cases],
    "appsecret_proof": appsecret, "signed_requests": signed_requests, "pkce": pkce, "nonces": nonces,
}
(HERE / "crypto-vectors.json").write_text(json.dumps(out, indent=1) + "\n")
print(f"{len(id_cases)} id-token cases, {len(access_cases)} access-token cases")
