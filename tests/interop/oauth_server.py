"""An OAuth-protected MCP server and its authorization server, built with the
official Python SDK's auth support (`mcp.server.auth`, `MCPServer` with an
`OAuthAuthorizationServerProvider` and `AuthSettings`), for tests/oauth.rs.

    python oauth_server.py [--token-lifetime SECONDS] [--no-dcr] [--deny]
        [--step-up] [--no-prm] [--no-metadata] [--cimd] [--client-credentials KEYFILE]
        [--assertion-grants DIR]
        [--dpop]

Listens on 127.0.0.1 on a free port and prints `listening URL` (the MCP
endpoint) on stdout once it accepts connections. The provider approves every
authorization at once (it redirects straight back with a code and the state),
or refuses it with `error=access_denied` under `--deny`. `--no-dcr` turns
dynamic client registration off and pre-registers the public client
`preregistered` for any loopback redirect URI.

`--step-up` adds the tools `write`, which needs the scope `mcp:write` (HTTP 403
`insufficient_scope` until the token has it), and `admin`, which is always
refused with 403 for `mcp:admin` (a step-up that never succeeds).
`--no-prm` hides the protected resource metadata and `--no-metadata` every
`/.well-known/` document (a 2025-03-26 server: clients fall back to the
origin's metadata, then to `/authorize`, `/token`, `/register`). `--cimd`
advertises `client_id_metadata_document_supported` and takes any https URL
as a client id (trusting the document without fetching it).
`--client-credentials KEYFILE` accepts the client-credentials grant for the
client `cc-client`, authenticated by the secret `cc-secret` (Basic or in the
body) or by a `private_key_jwt` assertion signed ES256 with the EC P-256 key
whose PKCS#8 PEM it writes to KEYFILE, or RS256 with the RSA key it writes to
KEYFILE.rsa.

`--assertion-grants DIR` accepts the RFC 7523 JWT bearer grant (no refresh
token is issued) for a workload JWT signed by the server's own key (the
workload identity of SEP-1933: it writes two valid ones, `DIR/workload.jwt`
and `DIR/workload-next.jwt`, audience the issuer) and for an ID-JAG (SEP-990),
which the enterprise identity provider it also plays, at `/idp` (issuer
`BASE/idp`, OpenID metadata, token endpoint `/idp/token`), issues by token
exchange for the ID token it writes to `DIR/id_token.jwt`; the ID-JAG is
taken from the client `xaa-client` authenticated by HTTP Basic with the
secret `xaa-secret`. The events record each grant's form (the ID-JAG
issued, too, for the test to search for).
`--dpop` makes every token DPoP-bound (RFC 9449): the authorization server
advertises `dpop_signing_alg_values_supported: ["ES256"]`, every token
request must carry a valid proof with the authorization server's nonce
(else HTTP 400 `use_dpop_nonce` with a `DPoP-Nonce`), a refresh must prove
the key its refresh token is bound to, and answers say `token_type: DPoP`;
the MCP endpoint takes only `Authorization: DPoP` with a valid proof (`ath`,
the token's key, its own nonce: else 401 `DPoP error="use_dpop_nonce"`),
and refuses a proof's `jti` seen before. Each check is an event
`{"kind": "dpop", "at": "token"|"mcp", "ok": ..., "jkt": ..., "error": ...}`.

What the authorization server and the MCP endpoint saw (discovery requests,
registrations, authorize, token and revocation requests with their
`resource` and PKCE parameters, and every token issued) is served as JSON at `GET /debug/events`
for the test to assert on; `GET /debug/forget-access-tokens` makes every
access token issued so far stop working. Nothing here is meant for anything but tests.
"""

import argparse
import asyncio
import json
import secrets
import socket
import time
from urllib.parse import parse_qs

import uvicorn
from mcp.server.auth.provider import (
    AccessToken,
    AuthorizationCode,
    AuthorizationParams,
    RefreshToken,
    construct_redirect_uri,
)
from mcp.server.auth.settings import AuthSettings, ClientRegistrationOptions, RevocationOptions
from mcp.server.mcpserver import MCPServer
from mcp.shared.auth import OAuthClientInformationFull, OAuthToken

SCOPE = "mcp"
EVENTS: list[dict] = []
PROVIDER = None
ARGS = None
BASE = ""
CC_CLIENT = ("cc-client", "cc-secret")
CC_PUBLIC_KEY = None
XAA_CLIENT = ("xaa-client", "xaa-secret")
# The key signing workload JWTs, ID tokens and ID-JAGs (`--assertion-grants`).
ASSERTION_KEY = None
JWT_BEARER = "urn:ietf:params:oauth:grant-type:jwt-bearer"
# --dpop: the nonces each side wants, every jti seen, the key each token is
# bound to (access and refresh tokens alike), the key of the last proof.
AS_NONCE = "as-nonce-pipewright-test"
RS_NONCE = "rs-nonce-pipewright-test"
DPOP_JTIS: set[str] = set()
DPOP_BOUND: dict[str, str] = {}


SCOPES = [SCOPE, "mcp:write", "mcp:admin"]


class AnyLoopback(OAuthClientInformationFull):
    """A client registered out of band; RFC 8252 loopback redirects may use
    any port, which the SDK compares exactly, so accept whatever it sends."""

    def validate_redirect_uri(self, redirect_uri):
        return redirect_uri


class Provider:
    """An in-memory authorization server that approves at once."""

    def __init__(self, lifetime: int, deny: bool):
        self.lifetime = lifetime
        self.deny = deny
        self.clients: dict[str, OAuthClientInformationFull] = {}
        self.codes: dict[str, AuthorizationCode] = {}
        self.access: dict[str, AccessToken] = {}
        self.refresh: dict[str, RefreshToken] = {}

    async def get_client(self, client_id: str) -> OAuthClientInformationFull | None:
        if ARGS.cimd and client_id.startswith("https://") and client_id not in self.clients:
            # A Client ID Metadata Document client: a real server fetches
            # the document; this one trusts it.
            self.clients[client_id] = AnyLoopback(
                client_id=client_id,
                redirect_uris=["http://127.0.0.1/callback"],
                token_endpoint_auth_method="none",
                grant_types=["authorization_code", "refresh_token"],
                scope=" ".join(SCOPES),
            )
        return self.clients.get(client_id)

    async def register_client(self, client_info: OAuthClientInformationFull) -> None:
        EVENTS.append(
            {
                "kind": "register",
                "client_id": client_info.client_id,
                "redirect_uris": [str(u) for u in client_info.redirect_uris or []],
                "token_endpoint_auth_method": client_info.token_endpoint_auth_method,
            }
        )
        self.clients[client_info.client_id] = client_info

    async def authorize(self, client: OAuthClientInformationFull, params: AuthorizationParams) -> str:
        EVENTS.append(
            {
                "kind": "authorize",
                "client_id": client.client_id,
                "code_challenge": params.code_challenge,
                "resource": params.resource,
                "scopes": params.scopes,
                "state": params.state,
                "redirect_uri": str(params.redirect_uri),
            }
        )
        if self.deny:
            return construct_redirect_uri(
                str(params.redirect_uri),
                error="access_denied",
                error_description="the user said no",
                state=params.state,
            )
        code = secrets.token_urlsafe(32)
        self.codes[code] = AuthorizationCode(
            code=code,
            scopes=params.scopes or [SCOPE],
            expires_at=time.time() + 300,
            client_id=client.client_id,
            code_challenge=params.code_challenge,
            redirect_uri=params.redirect_uri,
            redirect_uri_provided_explicitly=params.redirect_uri_provided_explicitly,
            resource=params.resource,
        )
        return construct_redirect_uri(str(params.redirect_uri), code=code, state=params.state)

    async def load_authorization_code(self, client, authorization_code: str):
        return self.codes.get(authorization_code)

    def _issue(self, client_id: str, scopes: list[str], resource: str | None, grant: str) -> OAuthToken:
        access = "at-" + secrets.token_urlsafe(24)
        refresh = "rt-" + secrets.token_urlsafe(24)
        self.access[access] = AccessToken(
            token=access,
            client_id=client_id,
            scopes=scopes,
            expires_at=int(time.time()) + self.lifetime,
            resource=resource,
        )
        self.refresh[refresh] = RefreshToken(token=refresh, client_id=client_id, scopes=scopes, resource=resource)
        EVENTS.append({"kind": "issued", "grant": grant, "access_token": access, "refresh_token": refresh})
        return OAuthToken(
            access_token=access,
            expires_in=self.lifetime,
            scope=" ".join(scopes),
            refresh_token=refresh,
        )

    async def exchange_authorization_code(self, client, authorization_code: AuthorizationCode) -> OAuthToken:
        self.codes.pop(authorization_code.code, None)
        return self._issue(
            client.client_id, authorization_code.scopes, authorization_code.resource, "authorization_code"
        )

    async def load_refresh_token(self, client, refresh_token: str):
        return self.refresh.get(refresh_token)

    async def exchange_refresh_token(self, client, refresh_token: RefreshToken, scopes: list[str]) -> OAuthToken:
        self.refresh.pop(refresh_token.token, None)
        return self._issue(client.client_id, scopes, refresh_token.resource, "refresh_token")

    async def load_access_token(self, token: str) -> AccessToken | None:
        found = self.access.get(token)
        if found is None or (found.expires_at is not None and found.expires_at <= time.time()):
            return None
        return found

    async def revoke_token(self, token) -> None:
        EVENTS.append({"kind": "revoke"})
        self.access.pop(token.token, None)
        self.refresh.pop(token.token, None)


class Recorder:
    """ASGI wrapper: records what reached the token, discovery and MCP
    endpoints, and serves the record at /debug/events."""

    def __init__(self, app):
        self.app = app

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        path = scope["path"]
        if path == "/debug/events":
            body = json.dumps(EVENTS).encode()
            await send(
                {
                    "type": "http.response.start",
                    "status": 200,
                    "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())],
                }
            )
            await send({"type": "http.response.body", "body": body})
            return
        if path == "/debug/forget-access-tokens":
            # Access tokens stop working before their time (as when an
            # authorization server restarts); refresh tokens still work.
            PROVIDER.access.clear()
            await send({"type": "http.response.start", "status": 204, "headers": []})
            await send({"type": "http.response.body", "body": b""})
            return
        if path.startswith("/.well-known/"):
            EVENTS.append({"kind": "discovery", "path": path})
            hidden = ARGS.no_metadata or (ARGS.no_prm and path.startswith("/.well-known/oauth-protected-resource"))
            if hidden:
                return await respond(send, 404, {"error": "not_found"})
            if (ARGS.cimd or ARGS.dpop) and path == "/.well-known/oauth-authorization-server":
                status, body = await capture(self.app, scope, receive)
                metadata = json.loads(body)
                if ARGS.cimd:
                    metadata["client_id_metadata_document_supported"] = True
                if ARGS.dpop:
                    metadata["dpop_signing_alg_values_supported"] = ["ES256"]
                return await respond(send, status, metadata)
        if path == "/idp/.well-known/openid-configuration" and ARGS.assertion_grants:
            EVENTS.append({"kind": "idp_discovery"})
            return await respond(
                send, 200, {"issuer": f"{BASE}/idp", "token_endpoint": f"{BASE}/idp/token", "jwks_uri": f"{BASE}/idp/jwks"}
            )
        if path == "/idp/token" and scope["method"] == "POST" and ARGS.assertion_grants:
            form = {k: v[0] for k, v in parse_qs((await read_body(receive)).decode()).items()}
            return await token_exchange(send, form)
        if path == "/token" and scope["method"] == "POST" and ARGS.assertion_grants:
            body = await read_body(receive)
            form = {k: v[0] for k, v in parse_qs(body.decode()).items()}
            if form.get("grant_type") == JWT_BEARER:
                return await jwt_bearer(send, form, dict(scope["headers"]))
            receive = replay_of(body, receive)
        if ARGS.dpop and path == "/token" and scope["method"] == "POST":
            return await dpop_token(self.app, scope, receive, send)
        if ARGS.dpop and path == "/mcp":
            refusal, scope = dpop_resource(scope)
            if refusal is not None:
                return await respond(send, 401, {"error": "invalid_token"}, refusal)
        if path == "/token" and scope["method"] == "POST" and ARGS.client_credentials:
            body = await read_body(receive)
            form = {k: v[0] for k, v in parse_qs(body.decode()).items()}
            if form.get("grant_type") == "client_credentials":
                return await client_credentials(send, form, dict(scope["headers"]))
            receive = replay_of(body, receive)
        if path == "/mcp" and scope["method"] == "POST" and ARGS.step_up:
            body = await read_body(receive)
            receive = replay_of(body, receive)
            refusal = step_up_refusal(body, dict(scope["headers"]))
            if refusal:
                EVENTS.append({"kind": "mcp", "method": "POST", "refused": refusal})
                header = (
                    f'Bearer error="insufficient_scope", scope="{refusal}", '
                    f'resource_metadata="{BASE}/.well-known/oauth-protected-resource/mcp"'
                )
                return await respond(send, 403, {"error": "insufficient_scope"}, [(b"www-authenticate", header.encode())])
        if path == "/mcp":
            headers = dict(scope["headers"])
            auth = headers.get(b"authorization", b"").decode()
            EVENTS.append({"kind": "mcp", "method": scope["method"], "authorization": auth or None})
        if path in ("/token", "/revoke") and scope["method"] == "POST":
            body = b""
            more = True
            while more:
                message = await receive()
                body += message.get("body", b"")
                more = message.get("more_body", False)
            form = parse_qs(body.decode())
            EVENTS.append(
                {
                    "kind": path[1:] + "_request",
                    "grant_type": form.get("grant_type", [None])[0],
                    "resource": form.get("resource", [None])[0],
                    "code_verifier": "code_verifier" in form,
                    "token_type_hint": form.get("token_type_hint", [None])[0],
                    "client_id": form.get("client_id", [None])[0],
                }
            )
            replayed = False

            async def replay():
                nonlocal replayed
                if not replayed:
                    replayed = True
                    return {"type": "http.request", "body": body, "more_body": False}
                return await receive()

            return await self.app(scope, replay, send)
        return await self.app(scope, receive, send)


async def read_body(receive) -> bytes:
    body = b""
    more = True
    while more:
        message = await receive()
        body += message.get("body", b"")
        more = message.get("more_body", False)
    return body


def replay_of(body: bytes, receive):
    replayed = False

    async def replay():
        nonlocal replayed
        if not replayed:
            replayed = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return replay


async def respond(send, status: int, payload, headers=()):
    body = json.dumps(payload).encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()), *headers],
        }
    )
    await send({"type": "http.response.body", "body": body})


async def capture(app, scope, receive):
    """The status and body the wrapped app answers."""
    status, body = 500, b""

    async def send(message):
        nonlocal status, body
        if message["type"] == "http.response.start":
            status = message["status"]
        else:
            body += message.get("body", b"")

    await app(scope, receive, send)
    return status, body


def token_scopes(headers) -> list[str]:
    auth = headers.get(b"authorization", b"").decode()
    found = PROVIDER.access.get(auth.removeprefix("Bearer "))
    return list(found.scopes) if found else []


def step_up_refusal(body: bytes, headers) -> str | None:
    """The scope a `--step-up` tool call lacks, or None."""
    try:
        message = json.loads(body)
    except ValueError:
        return None
    if not isinstance(message, dict) or message.get("method") != "tools/call":
        return None
    name = (message.get("params") or {}).get("name")
    if not headers.get(b"authorization"):
        return None  # the SDK's 401 comes first
    if name == "admin":
        return "mcp mcp:admin"
    if name == "write" and "mcp:write" not in token_scopes(headers):
        return "mcp mcp:write"
    return None


async def client_credentials(send, form: dict, headers):
    """The client-credentials grant for `cc-client` (Basic, post or JWT)."""
    import base64

    import jwt

    event = {"kind": "client_credentials", "scope": form.get("scope"), "resource": form.get("resource")}
    basic = headers.get(b"authorization", b"").decode()
    if basic.startswith("Basic "):
        client_id, _, secret = base64.b64decode(basic[6:]).decode().partition(":")
        event["auth"] = "basic"
        ok = (client_id, secret) == CC_CLIENT
    elif "client_assertion" in form:
        event["auth"] = "private_key_jwt"
        event["assertion_type"] = form.get("client_assertion_type")
        try:
            alg = jwt.get_unverified_header(form["client_assertion"]).get("alg")
            event["alg"] = alg
            claims = jwt.decode(
                form["client_assertion"],
                CC_PUBLIC_KEY.get(alg),
                algorithms=[alg] if alg in CC_PUBLIC_KEY else [],
                audience=[BASE, BASE + "/"],
                options={"require": ["exp", "iat", "jti"]},
            )
            ok = claims.get("iss") == claims.get("sub") == CC_CLIENT[0]
        except jwt.PyJWTError as e:
            event["error"] = str(e)
            ok = False
    else:
        event["auth"] = "post"
        ok = (form.get("client_id"), form.get("client_secret")) == CC_CLIENT
    event["ok"] = ok
    EVENTS.append(event)
    if not ok:
        return await respond(send, 401, {"error": "invalid_client"})
    scopes = (form.get("scope") or SCOPE).split()
    token = PROVIDER._issue(CC_CLIENT[0], scopes, form.get("resource"), "client_credentials")
    return await respond(
        send,
        200,
        {"access_token": token.access_token, "token_type": "Bearer", "expires_in": token.expires_in, "scope": token.scope},
    )


def signed(claims: dict, typ: str = "JWT") -> str:
    import jwt

    now = int(time.time())
    claims = {"iat": now, "exp": now + 300, "jti": secrets.token_hex(8), **claims}
    return jwt.encode(claims, ASSERTION_KEY, algorithm="ES256", headers={"typ": typ})


async def token_exchange(send, form: dict):
    """The identity provider's RFC 8693 token exchange: an ID-JAG for its ID token."""
    import jwt

    event = {"kind": "token_exchange", **{k: form.get(k) for k in (
        "grant_type", "requested_token_type", "subject_token_type", "audience", "resource", "scope", "client_id")}}
    try:
        claims = jwt.decode(
            form.get("subject_token", ""), ASSERTION_KEY.public_key(), algorithms=["ES256"],
            audience="idp-client", issuer=f"{BASE}/idp",
        )
        ok = (
            form.get("grant_type") == "urn:ietf:params:oauth:grant-type:token-exchange"
            and form.get("requested_token_type") == "urn:ietf:params:oauth:token-type:id-jag"
            and form.get("subject_token_type") == "urn:ietf:params:oauth:token-type:id_token"
            and form.get("audience") == BASE
            and bool(form.get("resource"))
        )
    except jwt.PyJWTError as e:
        event["error"] = str(e)
        ok = False
    event["ok"] = ok
    if not ok:
        EVENTS.append(event)
        return await respond(send, 400, {"error": "invalid_grant"})
    jag = signed(
        {"iss": f"{BASE}/idp", "sub": claims["sub"], "aud": form["audience"], "resource": form["resource"],
         "client_id": XAA_CLIENT[0]},
        typ="oauth-id-jag+jwt",
    )
    event["id_jag"] = jag
    EVENTS.append(event)
    return await respond(
        send, 200,
        {"access_token": jag, "issued_token_type": "urn:ietf:params:oauth:token-type:id-jag", "token_type": "N_A",
         "expires_in": 300},
    )


async def jwt_bearer(send, form: dict, headers):
    """The RFC 7523 grant: a workload JWT, or an ID-JAG with the client's Basic authentication."""
    import base64

    import jwt

    event = {"kind": "jwt_bearer", "scope": form.get("scope"), "resource": form.get("resource"),
             "client_id": form.get("client_id")}
    client_id = form.get("client_id") or "workload"
    try:
        typ = jwt.get_unverified_header(form.get("assertion", "")).get("typ")
        claims = jwt.decode(form["assertion"], ASSERTION_KEY.public_key(), algorithms=["ES256"],
                            audience=[BASE, BASE + "/"])
        event["jti"] = claims.get("jti")
        if typ == "oauth-id-jag+jwt":
            event["assertion"] = "id_jag"
            basic = headers.get(b"authorization", b"").decode()
            client_id, _, secret = base64.b64decode(basic[6:] or "Og==").decode().partition(":")
            event["auth"] = "basic" if basic.startswith("Basic ") else None
            ok = (client_id, secret) == XAA_CLIENT and claims.get("client_id") == client_id \
                and claims.get("resource") == form.get("resource")
        else:
            event["assertion"] = "workload"
            ok = claims.get("sub") == "workload"
    except (jwt.PyJWTError, KeyError) as e:
        event["error"] = str(e)
        ok = False
    event["ok"] = ok
    EVENTS.append(event)
    if not ok:
        return await respond(send, 400, {"error": "invalid_grant"})
    scopes = (form.get("scope") or SCOPE).split()
    token = PROVIDER._issue(client_id, scopes, form.get("resource"), "jwt_bearer")
    return await respond(
        send, 200,
        {"access_token": token.access_token, "token_type": "Bearer", "expires_in": token.expires_in, "scope": token.scope},
    )
def dpop_check(proof: str | None, method: str, url: str, nonce: str, token: str | None = None):
    """The thumbprint of a valid proof, or raises ValueError saying why."""
    import base64
    import hashlib

    import jwt

    if not proof or "," in proof:
        raise ValueError("no proof, or more than one")
    header = jwt.get_unverified_header(proof)
    if header.get("typ") != "dpop+jwt" or header.get("alg") != "ES256":
        raise ValueError(f"bad header {header}")
    jwk = header.get("jwk") or {}
    if "d" in jwk:
        raise ValueError("a private key in the proof")
    key = jwt.PyJWK(jwk, algorithm="ES256")
    claims = jwt.decode(proof, key.key, algorithms=["ES256"], options={"verify_aud": False})
    if claims.get("htm") != method or claims.get("htu") != url:
        raise ValueError(f"htm/htu {claims.get('htm')} {claims.get('htu')} for {method} {url}")
    if abs(time.time() - claims.get("iat", 0)) > 300:
        raise ValueError("iat out of range")
    if claims.get("jti") in DPOP_JTIS:
        raise ValueError("a replayed jti")
    DPOP_JTIS.add(claims.get("jti"))
    if token is not None:
        ath = base64.urlsafe_b64encode(hashlib.sha256(token.encode()).digest()).rstrip(b"=").decode()
        if claims.get("ath") != ath:
            raise ValueError("ath does not match the token")
    canonical = json.dumps({k: jwk.get(k) for k in ("crv", "kty", "x", "y")}, separators=(",", ":"), sort_keys=True)
    jkt = base64.urlsafe_b64encode(hashlib.sha256(canonical.encode()).digest()).rstrip(b"=").decode()
    return jkt, claims.get("nonce") == nonce


async def dpop_token(app, scope, receive, send):
    """A token request under --dpop: the proof checked (and its nonce), then
    the SDK's (or the client-credentials) answer, bound to the proof's key."""
    body = await read_body(receive)
    form = {k: v[0] for k, v in parse_qs(body.decode()).items()}
    headers = dict(scope["headers"])
    proof = headers.get(b"dpop", b"").decode() or None
    event = {"kind": "dpop", "at": "token", "grant_type": form.get("grant_type")}
    try:
        jkt, nonce_ok = dpop_check(proof, "POST", BASE + "/token", AS_NONCE)
    except Exception as e:  # noqa: BLE001 - any failure is a refusal
        event.update(ok=False, error=str(e))
        EVENTS.append(event)
        return await respond(send, 400, {"error": "invalid_dpop_proof"})
    event.update(ok=True, jkt=jkt, nonce=nonce_ok)
    EVENTS.append(event)
    if not nonce_ok:
        return await respond(send, 400, {"error": "use_dpop_nonce"}, [(b"dpop-nonce", AS_NONCE.encode())])
    if form.get("grant_type") == "refresh_token" and DPOP_BOUND.get(form.get("refresh_token")) != jkt:
        event["error"] = "the refresh token is bound to another key"
        return await respond(send, 400, {"error": "invalid_grant"})
    if form.get("grant_type") == "client_credentials" and ARGS.client_credentials:
        status, answer = await capture(lambda s, r, w: client_credentials(w, form, headers), scope, receive)
    else:
        status, answer = await capture(app, scope, replay_of(body, receive))
    payload = json.loads(answer or b"{}")
    if status == 200:
        payload["token_type"] = "DPoP"
        for kind in ("access_token", "refresh_token"):
            if payload.get(kind):
                DPOP_BOUND[payload[kind]] = jkt
    return await respond(send, status, payload, [(b"dpop-nonce", AS_NONCE.encode())])


def dpop_resource(scope):
    """An MCP request under --dpop: a refusal's headers (or None) and the
    scope to pass on, its `DPoP` authorization made the SDK's `Bearer`."""
    headers = dict(scope["headers"])
    auth = headers.get(b"authorization", b"").decode()
    challenge = f'DPoP algs="ES256", resource_metadata="{BASE}/.well-known/oauth-protected-resource/mcp"'
    if not auth:
        return None, scope
    event = {"kind": "dpop", "at": "mcp", "method": scope["method"], "scheme": auth.partition(" ")[0]}
    token = auth.partition(" ")[2]
    try:
        if event["scheme"] != "DPoP":
            raise ValueError("not the DPoP scheme")
        jkt, nonce_ok = dpop_check(headers.get(b"dpop", b"").decode() or None, scope["method"], BASE + "/mcp", RS_NONCE, token)
        if DPOP_BOUND.get(token) != jkt:
            raise ValueError("the proof's key is not the token's")
    except Exception as e:  # noqa: BLE001 - any failure is a refusal
        event.update(ok=False, error=str(e))
        EVENTS.append(event)
        return [(b"www-authenticate", (challenge + ', error="invalid_token"').encode())], scope
    event.update(ok=True, jkt=jkt, nonce=nonce_ok)
    EVENTS.append(event)
    if not nonce_ok:
        return [
            (b"www-authenticate", (challenge + ', error="use_dpop_nonce"').encode()),
            (b"dpop-nonce", RS_NONCE.encode()),
        ], scope
    rest = [(k, v) for k, v in scope["headers"] if k not in (b"authorization", b"dpop")]
    return None, {**scope, "headers": [*rest, (b"authorization", f"Bearer {token}".encode())]}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--token-lifetime", type=int, default=3600)
    parser.add_argument("--no-dcr", action="store_true")
    parser.add_argument("--deny", action="store_true")
    parser.add_argument("--step-up", action="store_true")
    parser.add_argument("--no-prm", action="store_true")
    parser.add_argument("--no-metadata", action="store_true")
    parser.add_argument("--cimd", action="store_true")
    parser.add_argument("--client-credentials", metavar="KEYFILE")
    parser.add_argument("--assertion-grants", metavar="DIR")
    parser.add_argument("--dpop", action="store_true")
    args = parser.parse_args()
    global ARGS, BASE, CC_PUBLIC_KEY, ASSERTION_KEY
    ARGS = args

    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    sock.listen(128)
    base = BASE = f"http://127.0.0.1:{sock.getsockname()[1]}"
    if args.client_credentials:
        from cryptography.hazmat.primitives import serialization
        from cryptography.hazmat.primitives.asymmetric import ec

        from cryptography.hazmat.primitives.asymmetric import rsa

        ec_key = ec.generate_private_key(ec.SECP256R1())
        rsa_key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        CC_PUBLIC_KEY = {"ES256": ec_key.public_key(), "RS256": rsa_key.public_key()}
        for key, path in ((ec_key, args.client_credentials), (rsa_key, args.client_credentials + ".rsa")):
            with open(path, "wb") as f:
                f.write(
                    key.private_bytes(
                        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
                    )
                )

    if args.assertion_grants:
        import os

        from cryptography.hazmat.primitives.asymmetric import ec

        ASSERTION_KEY = ec.generate_private_key(ec.SECP256R1())
        for name, claims in (
            ("workload.jwt", {"iss": "https://k8s.example", "sub": "workload", "aud": base}),
            ("workload-next.jwt", {"iss": "https://k8s.example", "sub": "workload", "aud": base}),
            ("id_token.jwt", {"iss": f"{base}/idp", "sub": "user@example.com", "aud": "idp-client"}),
        ):
            with open(os.path.join(args.assertion_grants, name), "w") as f:
                f.write(signed(claims) + "\n")

    global PROVIDER
    provider = PROVIDER = Provider(args.token_lifetime, args.deny)
    if args.no_dcr:
        provider.clients["preregistered"] = AnyLoopback(
            client_id="preregistered",
            redirect_uris=["http://127.0.0.1/callback"],
            token_endpoint_auth_method="none",
            grant_types=["authorization_code", "refresh_token"],
            scope=SCOPE,
        )
    settings = AuthSettings(
        issuer_url=base,
        resource_server_url=f"{base}/mcp",
        client_registration_options=ClientRegistrationOptions(
            enabled=not args.no_dcr, valid_scopes=SCOPES, default_scopes=[SCOPE]
        ),
        revocation_options=RevocationOptions(enabled=True),
        required_scopes=[SCOPE],
        validate_token_resource=True,
    )
    server = MCPServer("oauth-test", auth_server_provider=provider, auth=settings, log_level="WARNING")

    @server.tool()
    def echo(message: str) -> str:
        """Echoes the message back."""
        return f"echo: {message}"

    if args.step_up:

        @server.tool()
        def write(message: str) -> str:
            """Needs the scope mcp:write."""
            return f"wrote: {message}"

        @server.tool()
        def admin() -> str:
            """Always refused for want of mcp:admin."""
            return "never"

    app = Recorder(server.streamable_http_app(host="127.0.0.1"))
    config = uvicorn.Config(app, log_level="warning", lifespan="on")
    print(f"listening {base}/mcp", flush=True)
    asyncio.run(uvicorn.Server(config).serve(sockets=[sock]))


if __name__ == "__main__":
    main()
