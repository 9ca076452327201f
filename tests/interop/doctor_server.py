"""Servers that `pipewright doctor` diagnoses, for tests/doctor.rs.

    python doctor_server.py log-stdout     an official SDK (mcp 2.3.0) stdio
                                           server that prints a log line to
                                           stdout before it serves
    python doctor_server.py exit-on-init   reads `initialize`, says why on
                                           stderr and exits with status 3
    python doctor_server.py https CERT KEY serves HTTPS on 127.0.0.1 (a port
                                           of its choosing, printed as
                                           `listening URL`) with the
                                           certificate the test made
"""

import sys

from mcp.server.mcpserver import MCPServer


def log_stdout() -> None:
    app = MCPServer(name="chatty", version="1.0.0")

    @app.tool()
    def add(a: int, b: int) -> int:
        """Adds two numbers."""
        return a + b

    print("Starting chatty server v1.0 on stdio", flush=True)
    app.run()


def exit_on_init() -> None:
    sys.stdin.readline()
    print("fatal: CHATTY_API_KEY is not set", file=sys.stderr, flush=True)
    sys.exit(3)


def https(cert: str, key: str) -> None:
    import http.server
    import ssl

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_POST(self):
            self.send_response(200)
            self.send_header("content-type", "application/json")
            self.end_headers()
            self.wfile.write(b'{"jsonrpc":"2.0","id":0,"result":{}}')

        def log_message(self, *args):
            pass

    server = http.server.HTTPServer(("127.0.0.1", 0), Handler)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    server.socket = context.wrap_socket(server.socket, server_side=True)
    print(f"listening https://127.0.0.1:{server.server_port}/mcp", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    mode = sys.argv[1] if len(sys.argv) > 1 else ""
    if mode == "log-stdout":
        log_stdout()
    elif mode == "exit-on-init":
        exit_on_init()
    elif mode == "https":
        https(sys.argv[2], sys.argv[3])
    else:
        sys.exit(f"unknown mode {mode!r}: log-stdout, exit-on-init or https")
