#!/usr/bin/python3
"""Usage: py_aiohttp_client.py [HOST:]PORT [N [C [PATH [STATUS]]]]
          (defaults: HOST 127.0.0.1, N 200, C 20, PATH /ok, STATUS 200)

An HTTPS/1.1 client for the e2e tests on aiohttp (Debian's python3-aiohttp), over
asyncio's SSL transport: OpenSSL on memory BIOs, the event loop moves the
ciphertext. One process, one loop, one ClientSession: N GETs of
https://HOST:PORT/PATH?i=<index>, all started at once and spread by the session's
keep-alive connector over at most C connections (limit=C). Certificates are not
checked. Per request, once its response is read in full, prints
"<local_port> <index> <status>". Exits 0 only if every request got a full response
with status STATUS; 1 if some got another status or failed, 2 on bad usage, 3 on
the overall timeout.
"""
import asyncio
import sys

from py_loop_common import run_client

import aiohttp

REQUEST_TIMEOUT = 15
OVERALL_TIMEOUT = 60


class PortResponse(aiohttp.ClientResponse):
    """A response that remembers its connection's local port: the connection itself is
    handed back to the pool as soon as the body is in (at once for a small one)."""
    local_port = None

    async def start(self, connection):
        self.local_port = connection.transport.get_extra_info("sockname")[1]
        return await super().start(connection)


async def main(host, port, n, c, path, want):
    netloc = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
    connector = aiohttp.TCPConnector(limit=c, ssl=False)  # ssl=False: no certificate check
    timeout = aiohttp.ClientTimeout(total=REQUEST_TIMEOUT)
    good = 0

    async def one(session, i):
        nonlocal good
        try:
            async with session.get(f"https://{netloc}{path}?i={i}") as resp:
                await resp.read()
                print(resp.local_port, i, resp.status, flush=True)
                if resp.status == want:
                    good += 1
        except (aiohttp.ClientError, asyncio.TimeoutError, OSError) as e:
            print(f"request {i}: {e!r}", file=sys.stderr)

    async with aiohttp.ClientSession(connector=connector, timeout=timeout,
                                     response_class=PortResponse) as session:
        await asyncio.gather(*(one(session, i) for i in range(n)))
    return 0 if good == n else 1


if __name__ == "__main__":
    run_client(main, __doc__, OVERALL_TIMEOUT)
