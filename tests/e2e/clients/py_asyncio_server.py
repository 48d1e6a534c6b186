#!/usr/bin/python3
"""Usage: py_asyncio_server.py ADDR CERT KEY    (ADDR: 127.0.0.1:8443, [::1]:8443)

An HTTPS/1.1 server for the e2e tests on plain asyncio (standard library only):
asyncio.start_server with an SSL context runs OpenSSL on memory BIOs
(ssl.MemoryBIO/SSLObject) and the event loop moves the ciphertext. A minimal
keep-alive responder: /ok (any query) answers 200 "ok\\n", anything else 404
"not found\\n", each response in one write. Prints "listening" once it accepts
connections; SIGTERM or SIGINT stops it (exit 0).
"""
import asyncio
import re
import ssl
import sys

from py_loop_common import serve_until_signalled

IDLE_TIMEOUT = 60  # an idle keep-alive connection is closed after this many seconds


async def handle(reader, writer):
    try:
        while True:
            try:
                head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), IDLE_TIMEOUT)
            except (asyncio.IncompleteReadError, asyncio.TimeoutError):
                break  # the client closed (or went quiet) between requests
            lines = head.decode("latin-1").split("\r\n")
            parts = lines[0].split()
            if len(parts) != 3:
                break
            headers = {}
            for line in lines[1:]:
                if ":" in line:
                    k, v = line.split(":", 1)
                    headers[k.strip().lower()] = v.strip()
            if "content-length" in headers:
                await reader.readexactly(int(headers["content-length"]))
            ok = parts[1].split("?")[0] == "/ok"
            body = b"ok\n" if ok else b"not found\n"
            close = headers.get("connection", "").lower() == "close"
            writer.write(b"HTTP/1.1 %s\r\nContent-Type: text/plain\r\nContent-Length: %d\r\n"
                         b"Connection: %s\r\n\r\n%s" % (b"200 OK" if ok else b"404 Not Found",
                                                        len(body), b"close" if close else b"keep-alive", body))
            await writer.drain()
            if close:
                break
    except (OSError, ValueError, asyncio.IncompleteReadError, asyncio.LimitOverrunError):
        pass
    finally:
        writer.close()


async def main(addr, cert, key):
    m = re.fullmatch(r"\[?([^\]]*)\]?:(\d+)", addr)
    if not m:
        print(f"bad ADDR {addr}", file=sys.stderr)
        return 2
    ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    ctx.load_cert_chain(cert, key)
    server = await asyncio.start_server(handle, m.group(1), int(m.group(2)), ssl=ctx)
    async with server:
        await serve_until_signalled()
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 4:
        print(__doc__.splitlines()[0], file=sys.stderr)
        sys.exit(2)
    sys.exit(asyncio.run(main(*sys.argv[1:])))
