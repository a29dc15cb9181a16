"""The loopback servers' base: a ThreadingHTTPServer whose `shutdown` returns as soon as its serving
loop sees the request, instead of when the loop next wakes by itself.

`serve_forever` waits in `select` for up to its poll interval (0.5 s) between looks at the shutdown
request, so Python's `shutdown` took up to half a second: 208 of a full run's test teardowns (and 46
tests that stop a server mid-test) spent about 0.5 s each in it, some 125 s of the suite's 880. Here
the request is set first, then a connection to the server wakes `select` at once: the loop sees the
request and ends, and `shutdown` waits for that as before."""

from __future__ import annotations

import socket
from http.server import ThreadingHTTPServer


class LoopbackHTTPServer(ThreadingHTTPServer):
    daemon_threads = True

    def shutdown(self) -> None:
        # socketserver.BaseServer keeps the request in a name-mangled attribute; shutdown() sets it
        # too, then waits for the loop to end. Set before the wake-up, the loop cannot miss it.
        setattr(self, "_BaseServer__shutdown_request", True)  # noqa: B010
        try:
            with socket.create_connection(self.socket.getsockname()[:2], timeout=5):
                pass
        except OSError:  # not listening (never served, or closed): nothing to wake
            pass
        super().shutdown()
