"""A minimal websocket server for tests (wsproto, one thread per connection): records every
text message it receives and answers ``echo:<message>``."""

from __future__ import annotations

import socket
import threading

from wsproto import ConnectionType, WSConnection
from wsproto.events import AcceptConnection, CloseConnection, Message, Request, TextMessage


class WebSocketServer:
    """Listens on 127.0.0.1 (a free port); ``messages`` holds what clients sent."""

    def __init__(self) -> None:
        self.messages: list[str] = []
        self._sock = socket.socket()
        self._sock.bind(("127.0.0.1", 0))
        self._sock.listen()
        self.port: int = self._sock.getsockname()[1]
        self._closed = False
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while not self._closed:
            try:
                conn, _ = self._sock.accept()
            except OSError:
                return
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def _serve(self, conn: socket.socket) -> None:
        ws = WSConnection(ConnectionType.SERVER)
        with conn:
            while True:
                try:
                    data = conn.recv(65536)
                except OSError:
                    return
                if not data:
                    return
                ws.receive_data(data)
                for event in ws.events():
                    if isinstance(event, Request):
                        conn.sendall(ws.send(AcceptConnection()))
                    elif isinstance(event, TextMessage) and isinstance(event, Message):
                        self.messages.append(event.data)
                        conn.sendall(ws.send(TextMessage(data=f"echo:{event.data}")))
                    elif isinstance(event, CloseConnection):
                        conn.sendall(ws.send(event.response()))
                        return

    def close(self) -> None:
        self._closed = True
        self._sock.close()
