#!/usr/bin/python3
"""Usage: py_asyncio_client.py [HOST:]PORT [N [C [PATH [STATUS]]]]
          (defaults: HOST 127.0.0.1, N 200, C 20, PATH /ok, STATUS 200)

An HTTPS/1.1 client for the e2e tests on plain asyncio (standard library only):
asyncio.open_connection with an SSL context runs OpenSSL on memory BIOs
(ssl.MemoryBIO/SSLObject) and the event loop moves the ciphertext. One process,
one loop: C connections opened concurrently, request i (GET PATH?i=<i>, written
by hand, HTTP/1.1 keep-alive) goes on connection i % C, one request at a time per
connection. Certificates are not checked. Per request, once its response is read
in full, prints "<local_port> <index> <status>". Exits 0 only if every request got
a full response with status STATUS; 1 if some got another status or failed, 2 on
bad usage, 3 on the overall timeout.
"""
import asyncio
import ssl
import sys

from py_loop_common import run_client

REQUEST_TIMEOUT = 15
OVERALL_TIMEOUT = 60


async def read_response(reader):
    """Reads one HTTP/1.1 response; returns (status, keep_alive)."""
    head = await reader.readuntil(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    status = int(lines[0].split()[1])
    headers = {}
    for line in lines[1:]:
        if ":" in line:
            k, v = line.split(":", 1)
            headers[k.strip().lower()] = v.strip()
    if headers.get("transfer-encoding", "").lower() == "chunked":
        while True:
            size = int((await reader.readuntil(b"\r\n")).split(b";")[0], 16)
            await reader.readexactly(size + 2)  # data and its CRLF
            if size == 0:
                break
    elif "content-length" in headers:
        await reader.readexactly(int(headers["content-length"]))
    else:
        await reader.read()  # body until close
        return status, False
    return status, headers.get("connection", "").lower() != "close"


class Client:
    def __init__(self, host, port, path, want):
        self.host, self.port, self.path, self.want = host, port, path, want
        self.ctx = ssl.create_default_context()
        self.ctx.check_hostname = False
        self.ctx.verify_mode = ssl.CERT_NONE
        self.good = 0

    async def connect(self):
        return await asyncio.wait_for(
            asyncio.open_connection(self.host, self.port, ssl=self.ctx, server_hostname=""),
            REQUEST_TIMEOUT)

    async def connection(self, indexes):
        """Sends the requests with these indexes one after the other on one connection
        (a new one only if the server closed it)."""
        reader = writer = None
        try:
            for i in indexes:
                if writer is None:
                    reader, writer = await self.connect()
                local_port = writer.get_extra_info("sockname")[1]
                writer.write(f"GET {self.path}?i={i} HTTP/1.1\r\nHost: {self.host}:{self.port}\r\n"
                             "User-Agent: py_asyncio_client\r\n\r\n".encode())
                status, keep_alive = await asyncio.wait_for(read_response(reader), REQUEST_TIMEOUT)
                print(local_port, i, status, flush=True)
                if status == self.want:
                    self.good += 1
                if not keep_alive:
                    writer.close()
                    reader = writer = None
        except (OSError, asyncio.TimeoutError, asyncio.IncompleteReadError, ValueError,
                IndexError, asyncio.LimitOverrunError) as e:
            print(f"connection for {list(indexes)[:3]}...: {e!r}", file=sys.stderr)
        finally:
            if writer is not None:
                writer.close()
                try:
                    await asyncio.wait_for(writer.wait_closed(), 2)
                except (OSError, asyncio.TimeoutError):
                    pass


async def main(host, port, n, c, path, want):
    client = Client(host, port, path, want)
    await asyncio.gather(*(client.connection(range(k, n, c)) for k in range(min(c, n))))
    return 0 if client.good == n else 1


if __name__ == "__main__":
    run_client(main, __doc__, OVERALL_TIMEOUT)
