"""A socket out: the engine side of ``DataStream.write_to_socket``.

Each subtask sends each record's serialized bytes, with nothing added between
records, over a TCP connection to ``host:port`` (Flink's ``SocketClientSink``). The
connection lasts one micro-batch: a subtask connects with its batch's first records
and closes at the end of the batch, so no worker keeps a connection open after the
subtask has moved to another worker. Records are sent before their batch commits: at
least once across a failure, as in Flink.
"""
import socket
from typing import Any, Callable, Optional

from engine.errors import RecordWriteError
from engine.io.sinks import Committer, Sink, SinkWriter, WriterContext


class SocketSink(Sink):
    def __init__(self, host: str, port: int, serialize: Callable[[Any], bytes]):
        self.host = host
        self.port = port
        self.serialize = serialize

    def create_writer(self, context: WriterContext) -> SinkWriter:
        return _SocketWriter(self)

    def create_committer(self) -> Committer:
        return Committer()


class _SocketWriter(SinkWriter):
    def __init__(self, sink: SocketSink):
        self.sink = sink
        self.connection: Optional[socket.socket] = None

    def write(self, values: list) -> None:
        sink = self.sink
        serialize = sink.serialize
        data = []
        value = None
        try:
            for value in values:
                data.append(serialize(value))
        except Exception as e:
            raise RecordWriteError(value, e) from None
        try:
            if self.connection is None:
                self.connection = socket.create_connection((sink.host, sink.port))
            self.connection.sendall(b"".join(data))
        except OSError as e:
            raise RecordWriteError(values[0], ConnectionError(
                f"cannot write to socket {sink.host}:{sink.port}: {e}")) from None

    def prepare_commit(self) -> None:
        if self.connection is not None:
            self.connection.close()
            self.connection = None
        return None
