"""Keystroke echo while the other pane streams a long reply, in a real pseudo-terminal. Run on demand:

    python bench/tui_streaming.py [--chunks 1500] [--rate 50] [--keys 120] [--profile FILE]

The app runs as `workbench` runs (its own process, a pty of 140x40, TERM=xterm-256color) against
a slow loopback OpenAI-compatible server that streams a long Markdown reply at `--rate` chunks per
second. Keystrokes are written to the pty one at a time; a keystroke's echo time is from the write
to the moment its character appears in what the app writes back to the terminal. The idle figure
is measured first, in the same run, with nothing streaming. Targets (issue 39): echo during streaming
at most 33 ms worst (a frame at 30 fps) and a median at most 1.2x the idle one, over the whole reply
including its end.
"""

from __future__ import annotations

import argparse
import codecs
import fcntl
import json
import os
import pty
import re
import select
import signal
import statistics
import struct
import sys
import termios
import threading
import time
from collections.abc import Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

SIZE = (40, 140)  # rows, columns
# Characters that appear nowhere else on the screen, cycled so each keystroke's echo is unambiguous.
ALPHABET = "абвгдежзийклмнопрстуфхцчшщ"
_CSI = re.compile(r"\x1b\[[0-9;?<>=]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[@-Z\\-_]")


def markdown_pieces(chunks: int) -> list[str]:
    """A long Markdown reply (headings, paragraphs, lists, code), cut into `chunks` small pieces."""
    blocks = []
    for section in range(1, chunks // 40 + 2):
        blocks.append(f"## Section {section}\n\nThe service reads its settings at start and writes logs as it goes. ")
        blocks.append("Check the *recent* entries first, then the **older** ones, and compare them.\n\n")
        blocks.append("- look at the log folder\n- filter by time\n- note every warning\n\n")
        blocks.append("```text\nlevel=warn component=export message=slow query\n```\n\n")
    text = "".join(blocks)
    pieces = re.findall(r"\S+\s*|\s+", text)
    return pieces[:chunks]


class SlowServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, chunks: int, rate: float) -> None:
        super().__init__(("127.0.0.1", 0), SlowHandler)
        self.pieces = markdown_pieces(chunks)
        self.rate = rate
        self.streams_done = threading.Event()
        self.done_at = 0.0  # when the last piece was sent (perf_counter)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/v1"


class SlowHandler(BaseHTTPRequestHandler):
    server: SlowServer

    def log_message(self, *args: object) -> None:
        pass

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        if not body.get("stream"):
            self._json({"facts": []})
            return
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.end_headers()
        start = time.perf_counter()
        for index, piece in enumerate(self.server.pieces):
            delay = start + index / self.server.rate - time.perf_counter()
            if delay > 0:
                time.sleep(delay)
            self._event({"choices": [{"index": 0, "delta": {"content": piece}, "finish_reason": None}]})
        self._event({"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]})
        self.wfile.write(b"data: [DONE]\n\n")
        self.wfile.flush()
        self.server.done_at = time.perf_counter()
        self.server.streams_done.set()

    def _event(self, chunk: dict[str, object]) -> None:
        payload = {"id": "bench", "object": "chat.completion.chunk", "created": 0, "model": "slow", **chunk}
        self.wfile.write(f"data: {json.dumps(payload)}\n\n".encode())
        self.wfile.flush()

    def _json(self, content: dict[str, object]) -> None:
        reply = {
            "id": "bench",
            "object": "chat.completion",
            "created": 0,
            "model": "slow",
            "choices": [
                {"index": 0, "message": {"role": "assistant", "content": json.dumps(content)}, "finish_reason": "stop"}
            ],
        }
        data = json.dumps(reply).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


class Terminal:
    """The app in a pseudo-terminal; everything it writes is read and kept as plain text."""

    def __init__(self, argv: list[str], env: dict[str, str]) -> None:
        self.pid, self.fd = pty.fork()
        if self.pid == 0:
            os.execvpe(argv[0], argv, env)
        fcntl.ioctl(self.fd, termios.TIOCSWINSZ, struct.pack("HHHH", SIZE[0], SIZE[1], 0, 0))
        self.decode = codecs.getincrementaldecoder("utf-8")("replace").decode
        self.text = ""

    def pump(self, seconds: float) -> str:
        """Read for `seconds`; returns the plain text read."""
        got = []
        end = time.perf_counter() + seconds
        while (left := end - time.perf_counter()) > 0:
            ready, _, _ = select.select([self.fd], [], [], left)
            if ready:
                got.append(_CSI.sub("", self.decode(os.read(self.fd, 65536))))
        chunk = "".join(got)
        self.text = (self.text + chunk)[-200_000:]
        return chunk

    def wait_for(self, needle: str, timeout: float) -> float:
        """Seconds until `needle` appears in what the app writes from now on."""
        start = time.perf_counter()
        seen = ""
        while time.perf_counter() - start < timeout:
            ready, _, _ = select.select([self.fd], [], [], 0.05)
            if ready:
                seen += _CSI.sub("", self.decode(os.read(self.fd, 65536)))
                if needle in seen:
                    return time.perf_counter() - start
        raise TimeoutError(f"{needle!r} did not appear within {timeout} s")

    def write(self, data: str) -> None:
        os.write(self.fd, data.encode())

    def close(self) -> None:
        try:
            self.write("\x11")  # Ctrl+Q
            self.pump(1.0)
        except OSError:
            pass  # the app has already left
        finally:
            os.kill(self.pid, signal.SIGTERM)
            os.waitpid(self.pid, 0)


class Echo(float):
    """Milliseconds from writing a key to seeing it drawn, and when the key was written."""

    at: float

    def __new__(cls, ms: float, at: float) -> Echo:
        echo = super().__new__(cls, ms)
        echo.at = at
        return echo


def echo_times(term: Terminal, keys: int, gap: float, until: threading.Event | None = None) -> list[Echo]:
    """Echo times (ms), `gap` seconds between keys. With `until`, goes on after `keys` until the
    event is set (the reply has finished), then a second more."""
    samples: list[Echo] = []
    typed = 0
    stop_at: float | None = None
    while typed < keys or (until is not None and (stop_at is None or time.perf_counter() < stop_at)):
        if until is not None and until.is_set() and stop_at is None:
            stop_at = time.perf_counter() + 1.0
        char = ALPHABET[typed % len(ALPHABET)]
        start = time.perf_counter()
        term.write(char)
        term.wait_for(char, timeout=10)
        samples.append(Echo((time.perf_counter() - start) * 1000, start))
        typed += 1
        if typed % len(ALPHABET) == 0:
            term.write("\x7f" * len(ALPHABET))  # clear the draft so every character is new on screen
            term.pump(0.3)
        term.pump(gap)
    return samples


def describe(name: str, samples: Sequence[float]) -> str:
    ordered = sorted(samples)
    p95 = ordered[int(0.95 * (len(ordered) - 1))]
    return (
        f"{name:<34} n={len(samples):>4}  median {statistics.median(samples):6.1f} ms  "
        f"p95 {p95:6.1f} ms  worst {max(samples):6.1f} ms  over 33 ms: {sum(s > 33 for s in samples)}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--chunks", type=int, default=1500, help="pieces in the streamed reply")
    parser.add_argument("--rate", type=float, default=50.0, help="pieces per second")
    parser.add_argument("--keys", type=int, default=60, help="keystrokes measured idle (and at least while streaming)")
    parser.add_argument("--gap", type=float, default=0.05, help="seconds between keystrokes")
    parser.add_argument("--profile", metavar="FILE", help="run the app under cProfile and write its stats to FILE")
    args = parser.parse_args()

    server = SlowServer(args.chunks, args.rate)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    env = {**os.environ, "TERM": "xterm-256color", "OPENAI_API_KEY": "bench-not-a-key", "TEXTUAL_ANIMATIONS": "none"}
    profile = ["-m", "cProfile", "-o", args.profile] if args.profile else []
    argv = [sys.executable, *profile, "-m", "workbench", "--model", "slow", "--base-url", server.base_url]
    argv += ["--writer", "host"]
    term = Terminal(argv, env)
    try:
        term.wait_for("mode:", timeout=60)  # the header names the mode once the runtime is ready
        term.pump(1.0)
        idle = echo_times(term, args.keys, args.gap)
        term.write("\x7f" * len(ALPHABET))
        term.pump(0.5)
        term.write("Tell me everything about the logs")
        term.pump(0.3)
        term.write("\r")
        term.wait_for("Section", timeout=30)
        term.write("\t")  # to the logs pane's input
        term.pump(0.5)
        streaming = echo_times(term, args.keys, args.gap, until=server.streams_done)
    finally:
        term.close()
        server.shutdown()
    print(
        f"pty {SIZE[1]}x{SIZE[0]}, reply of {args.chunks} pieces at {args.rate:g}/s, "
        f"a key every {args.gap * 1000:.0f} ms"
    )
    print(describe("echo, nothing streaming", idle))
    print(describe("echo, other pane streaming", streaming))
    print(
        f"streaming / idle median: {statistics.median(streaming) / statistics.median(idle):.2f}x "
        "(targets while streaming: median <= 1.2x idle, worst <= 33 ms)"
    )
    slow = sorted(streaming, reverse=True)[:3]
    print(
        "slowest echoes, typed at (s after the last piece was sent; negative: while streaming): "
        + ", ".join(f"{e:.1f} ms at {e.at - server.done_at:+.2f} s" for e in slow)
    )


if __name__ == "__main__":
    main()
