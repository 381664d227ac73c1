"""A local HTTP server on 127.0.0.1 that serves trace files, or fails on purpose, for download tests.

The server runs in a daemon thread, answers only 127.0.0.1, and stops itself after
``lifetime_s`` even if a test forgets to stop it. Its behaviour per file is set by ``mode``:

- ``ok``: the file's bytes;
- ``corrupt``: the bytes with one appended newline (a sha256 mismatch);
- ``404``: Not Found;
- ``slow``: waits ``delay_s`` before answering (longer than the client's timeout).
"""

from __future__ import annotations

import http.server
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path


@dataclass
class TraceServer:
    """What the tests see of a running server."""

    root: Path
    port: int
    modes: dict[str, str] = field(default_factory=dict)  # file name -> mode (default "ok")
    delay_s: float = 3.0
    requests: list[str] = field(default_factory=list)

    @property
    def base(self) -> str:
        """Base URL (the file name is appended)."""
        return f"http://127.0.0.1:{self.port}"

    def url(self, name: str) -> str:
        """URL of one file."""
        return f"{self.base}/{name}"


def _handler(server: TraceServer) -> type[http.server.BaseHTTPRequestHandler]:
    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            name = self.path.rsplit("/", 1)[-1]
            server.requests.append(name)
            mode = server.modes.get(name, "ok")
            path = server.root / name
            if mode == "404" or not path.is_file():
                self.send_error(404, "Not Found")
                return
            if mode == "slow":
                time.sleep(server.delay_s)
            data = path.read_bytes() + (b"\n" if mode == "corrupt" else b"")
            try:
                self.send_response(200)
                self.send_header("Content-Type", "text/csv")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)
            except (BrokenPipeError, ConnectionResetError):  # the client gave up (timeout test)
                pass

        def log_message(self, format: str, *args: object) -> None:
            """Keep the test output quiet."""

    return Handler


@contextmanager
def serve_traces(root: Path, lifetime_s: float = 120.0) -> Iterator[TraceServer]:
    """Serve the files of ``root`` on 127.0.0.1 (a free port) until the block ends or ``lifetime_s``."""
    state = TraceServer(root=root, port=0)
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _handler(state))
    httpd.daemon_threads = True
    state.port = httpd.server_address[1]
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    stopper = threading.Timer(lifetime_s, httpd.shutdown)
    stopper.daemon = True
    stopper.start()
    try:
        yield state
    finally:
        stopper.cancel()
        httpd.shutdown()
        httpd.server_close()
        thread.join(timeout=5)


def refused_port() -> int:
    """A port on 127.0.0.1 where nothing listens (bound, then released)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])
