"""The benchmark's latency proxy (bench/latency_proxy.py) forwards bytes whole and in
order both ways, and counts the client's turns to speak: the round trips it carried."""

from __future__ import annotations

import socket
import socketserver
import threading
from collections.abc import Iterator
from types import ModuleType

import pytest

from tests.support.scripts import bench_script


class _Echo(socketserver.BaseRequestHandler):
    def handle(self) -> None:
        while data := self.request.recv(65536):
            self.request.sendall(data.upper())


@pytest.fixture
def echo() -> Iterator[int]:
    server = socketserver.ThreadingTCPServer(("127.0.0.1", 0), _Echo)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield int(server.server_address[1])
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture(scope="module")
def proxy_module() -> Iterator[ModuleType]:
    with bench_script("latency_proxy.py") as module:
        yield module


def _receive(sock: socket.socket, size: int) -> bytes:
    got = b""
    while len(got) < size:
        chunk = sock.recv(size - len(got))
        assert chunk, "the proxy closed the connection"
        got += chunk
    return got


def test_the_proxy_forwards_whole_and_counts_round_trips(
    proxy_module: ModuleType, echo: int
) -> None:
    proxy = proxy_module.LatencyProxy("127.0.0.1", echo, delay_ms=20.0).start()
    try:
        assert proxy.url("postgresql+psycopg://u@db.example:5432/x") == (
            f"postgresql+psycopg://u@127.0.0.1:{proxy.listen_port}/x"
        )
        with socket.create_connection(("127.0.0.1", proxy.listen_port)) as sock:
            big = bytes(range(97, 123)) * 4_000  # ~100 KB: maybe read in chunks
            for payload in (b"select 1", big, b"commit"):
                sock.sendall(payload)
                assert _receive(sock, len(payload)) == payload.upper()
        assert proxy.round_trips == 3
    finally:
        proxy.stop()
