"""An OAuth-protected MCP server and its authorization server, built with the
official Python SDK's auth support (`mcp.server.auth`, `MCPServer` with an
`OAuthAuthorizationServerProvider` and `AuthSettings`), for tests/oauth.rs.

    python oauth_server.py [--token-lifetime SECONDS] [--no-dcr] [--deny]

Listens on 127.0.0.1 on a free port and prints `listening URL` (the MCP
endpoint) on stdout once it accepts connections. The provider approves every
authorization at once (it redirects straight back with a code and the state),
or refuses it with `error=access_denied` under `--deny`. `--no-dcr` turns
dynamic client registration off and pre-registers the public client
`preregistered` for any loopback redirect URI.

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


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--token-lifetime", type=int, default=3600)
    parser.add_argument("--no-dcr", action="store_true")
    parser.add_argument("--deny", action="store_true")
    args = parser.parse_args()

    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    sock.listen(128)
    base = f"http://127.0.0.1:{sock.getsockname()[1]}"

    global PROVIDER
    provider = PROVIDER = Provider(args.token_lifetime, args.deny)
    if args.no_dcr:
        # A public client registered out of band; RFC 8252 loopback
        # redirects may use any port, which the SDK compares exactly, so
        # accept whatever the client sends.
        class AnyLoopback(OAuthClientInformationFull):
            def validate_redirect_uri(self, redirect_uri):
                return redirect_uri

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
            enabled=not args.no_dcr, valid_scopes=[SCOPE], default_scopes=[SCOPE]
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

    app = Recorder(server.streamable_http_app(host="127.0.0.1"))
    config = uvicorn.Config(app, log_level="warning", lifespan="on")
    print(f"listening {base}/mcp", flush=True)
    asyncio.run(uvicorn.Server(config).serve(sockets=[sock]))


if __name__ == "__main__":
    main()
