"""A network between client and server: a TCP proxy that delays every byte it forwards.

:class:`LatencyProxy` listens on a local port and forwards each connection to the
database server, holding what it reads ``delay_ms`` before writing it on, in each
direction, order kept: a request and its answer take ``2 * delay_ms`` more, the cost of a
round trip over a network. Every system a benchmark measures connects through the same
proxy (:meth:`LatencyProxy.url`), so each pays the same per round trip, and the proxy
counts the round trips it carries (:attr:`LatencyProxy.round_trips`: the client's turns
to speak, each a burst of bytes sent after an answer). It runs on an event loop in a
thread of its own, so sync and async clients use it alike.

Examples:
    >>> proxy = LatencyProxy("127.0.0.1", 5432, delay_ms=0.5)  # doctest: +SKIP
    >>> url = proxy.start().url("postgresql+psycopg://postgres@127.0.0.1:5432/db")  # doctest: +SKIP
    >>> proxy.measured_round_trip_ms(url)  # doctest: +SKIP
    1.08
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import statistics
import threading
import time
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import make_url
from sqlalchemy.pool import NullPool

__all__ = ["LatencyProxy"]

_CHUNK = 256 * 1024


class LatencyProxy:
    """Forward connections from ``127.0.0.1:<port>`` to ``host:port``, ``delay_ms`` late."""

    def __init__(self, host: str, port: int, delay_ms: float) -> None:
        self.host = host
        self.port = port
        self.delay = delay_ms / 1000.0
        self.listen_port = 0
        self.round_trips = 0
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)
        self._server: asyncio.AbstractServer | None = None
        self._tasks: set[asyncio.Task[Any]] = set()

    def start(self) -> LatencyProxy:
        self._thread.start()
        future = asyncio.run_coroutine_threadsafe(self._listen(), self._loop)
        self.listen_port = future.result(10)
        return self

    def url(self, url: str | sa.URL) -> str:
        """``url`` (a SQLAlchemy URL of the proxied server) through the proxy."""
        through = make_url(url).set(host="127.0.0.1", port=self.listen_port)
        return through.render_as_string(hide_password=False)

    def stop(self) -> None:
        async def close() -> None:
            if self._server is not None:
                self._server.close()
            for task in list(self._tasks):
                task.cancel()

        asyncio.run_coroutine_threadsafe(close(), self._loop).result(10)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)

    def measured_round_trip_ms(self, url: str, reps: int = 50) -> float:
        """The median time of ``SELECT 1`` through the proxy (autocommit, one connection):
        what one round trip costs the clients measured."""
        engine = sa.create_engine(url, poolclass=NullPool, isolation_level="AUTOCOMMIT")
        try:
            with engine.connect() as conn:
                cursor = conn.connection.dbapi_connection.cursor()  # type: ignore[union-attr]
                times = []
                for _ in range(reps):
                    started = time.perf_counter()
                    cursor.execute("SELECT 1")
                    cursor.fetchall()
                    times.append(time.perf_counter() - started)
                return round(statistics.median(times) * 1000, 3)
        finally:
            engine.dispose()

    async def _listen(self) -> int:
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        return int(self._server.sockets[0].getsockname()[1])

    async def _serve(self, client_r: asyncio.StreamReader, client_w: asyncio.StreamWriter) -> None:
        try:
            server_r, server_w = await asyncio.open_connection(self.host, self.port)
        except OSError:
            client_w.close()
            return
        turn = {"server_spoke": True}  # the client's first bytes open its first round trip
        upstream = asyncio.ensure_future(self._pipe(client_r, server_w, turn, from_client=True))
        downstream = asyncio.ensure_future(self._pipe(server_r, client_w, turn, from_client=False))
        for task in (upstream, downstream):
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)
        await asyncio.wait({upstream, downstream}, return_when=asyncio.FIRST_COMPLETED)
        for task in (upstream, downstream):
            task.cancel()
        for writer in (client_w, server_w):
            writer.close()

    async def _pipe(
        self,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        turn: dict[str, bool],
        *,
        from_client: bool,
    ) -> None:
        """Copy ``reader`` to ``writer``, each chunk ``delay`` after it was read."""
        queue: collections.deque[tuple[float, bytes]] = collections.deque()
        ready = asyncio.Event()
        done = False

        async def send() -> None:
            while True:
                while not queue:
                    if done:
                        return
                    ready.clear()
                    await ready.wait()
                due, chunk = queue.popleft()
                wait = due - time.perf_counter()
                if wait > 0:
                    await asyncio.sleep(wait)
                writer.write(chunk)
                await writer.drain()

        sender = asyncio.ensure_future(send())
        try:
            while True:
                chunk = await reader.read(_CHUNK)
                if not chunk:
                    break
                if from_client and turn["server_spoke"]:
                    self.round_trips += 1
                turn["server_spoke"] = not from_client
                queue.append((time.perf_counter() + self.delay, chunk))
                ready.set()
        finally:
            done = True
            ready.set()
            with contextlib.suppress(ConnectionError, asyncio.CancelledError):
                await sender
