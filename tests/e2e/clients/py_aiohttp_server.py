#!/usr/bin/python3
"""Usage: py_aiohttp_server.py ADDR CERT KEY    (ADDR: 127.0.0.1:8443, [::1]:8443)

An HTTPS/1.1 server for the e2e tests on aiohttp (Debian's python3-aiohttp), over
asyncio's SSL transport: OpenSSL on memory BIOs, the event loop moves the
ciphertext. /ok (any query) answers 200 "ok\\n", anything else 404 "not found\\n";
connections are kept alive. Prints "listening" once it accepts connections;
SIGTERM or SIGINT stops it (exit 0).
"""
import asyncio
import re
import ssl
import sys

from py_loop_common import serve_until_signalled

from aiohttp import web


async def ok(request):
    return web.Response(text="ok\n")


async def not_found(request):
    return web.Response(status=404, text="not found\n")


async def main(addr, cert, key):
    m = re.fullmatch(r"\[?([^\]]*)\]?:(\d+)", addr)
    if not m:
        print(f"bad ADDR {addr}", file=sys.stderr)
        return 2
    ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    ctx.load_cert_chain(cert, key)
    app = web.Application()
    app.router.add_get("/ok", ok)
    app.router.add_route("*", "/{tail:.*}", not_found)
    # keepalive_timeout: a test's idle connections must not close under it.
    runner = web.AppRunner(app, access_log=None, keepalive_timeout=60)
    await runner.setup()
    await web.TCPSite(runner, m.group(1), int(m.group(2)), ssl_context=ctx).start()
    await serve_until_signalled()
    await runner.cleanup()
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 4:
        print(__doc__.splitlines()[0], file=sys.stderr)
        sys.exit(2)
    sys.exit(asyncio.run(main(*sys.argv[1:])))
