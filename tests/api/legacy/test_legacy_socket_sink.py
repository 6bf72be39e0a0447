"""write_to_socket (the older Python streaming guide, "Data Sinks": "write_to_socket() -
Writes the DataStream to a socket [host:port] as a byte array"), against a server this
test starts on 127.0.0.1."""
import select
import socket
import threading

import pytest

from api.common.serialization import SimpleStringSchema

from tests.conftest import make_env


class Server:
    """Accepts connections and keeps what each one sent until it closed."""

    def __init__(self):
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.received = []   # bytes of each closed connection
        self.readers = []
        self.closing = threading.Event()
        self.accepting = threading.Thread(target=self._accept, daemon=True)
        self.accepting.start()

    def _accept(self):
        # Until closed, and then every connection still waiting to be accepted: a sink's
        # connection may still be queued when the job has ended.
        while select.select([self.listener], [], [], 0.05)[0] or not self.closing.is_set():
            if not select.select([self.listener], [], [], 0)[0]:
                continue
            connection, _ = self.listener.accept()
            reader = threading.Thread(target=self._read, args=(connection,), daemon=True)
            reader.start()  # before close() may join it
            self.readers.append(reader)

    def _read(self, connection):
        data = b""
        with connection:
            while chunk := connection.recv(65536):
                data += chunk
        self.received.append(data)

    def close(self):
        self.closing.set()
        self.accepting.join(timeout=10)
        self.listener.close()
        for reader in self.readers:
            reader.join(timeout=10)


@pytest.fixture
def server():
    server = Server()
    yield server
    server.close()


def test_write_to_socket(server, env_factory):
    env = env_factory(parallelism=2, micro_batch_size=3)
    lines = env.from_collection([f"line {i}" for i in range(10)]).map(lambda s: s + "\n")
    lines.write_to_socket("127.0.0.1", server.port, SimpleStringSchema())
    env.execute()
    server.close()
    # the schema's bytes of each element, nothing added; a connection per subtask and
    # micro-batch, closed at the end of the batch
    assert len(server.received) >= 2
    assert sorted(b"".join(server.received).decode().splitlines()) == \
        sorted(f"line {i}" for i in range(10))


def test_a_socket_nobody_listens_on_fails_the_job():
    with socket.create_server(("127.0.0.1", 0)) as probe:
        port = probe.getsockname()[1]   # free once closed
    env = make_env("local")
    env.from_collection(["a"]).write_to_socket("127.0.0.1", port, SimpleStringSchema())
    with pytest.raises(Exception, match=rf"'a'.*cannot write to socket 127.0.0.1:{port}"):
        env.execute()
    with pytest.raises(TypeError, match="SerializationSchema"):
        env.from_collection(["a"]).write_to_socket("127.0.0.1", port, str.encode)
