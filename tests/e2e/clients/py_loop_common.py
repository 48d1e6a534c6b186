"""What the Python event-loop test clients and servers share: their command lines and the
server's run-until-signalled loop. Imported from the scripts' own directory."""
import asyncio
import re
import signal
import sys


def parse_client_args(argv):
    """[HOST:]PORT [N [C [PATH [STATUS]]]] -> (host, port, n, c, path, status); ValueError if bad."""
    if not 1 <= len(argv) <= 5:
        raise ValueError("wrong number of arguments")
    m = re.fullmatch(r"(?:\[?([^\]]*)\]?:)?(\d+)", argv[0])
    if not m:
        raise ValueError(f"bad address {argv[0]}")
    n = int(argv[1]) if len(argv) > 1 else 200
    c = int(argv[2]) if len(argv) > 2 else 20
    path = argv[3] if len(argv) > 3 else "/ok"
    want = int(argv[4]) if len(argv) > 4 else 200
    if n < 1 or c < 1 or not path.startswith("/"):
        raise ValueError("bad arguments")
    return m.group(1) or "127.0.0.1", int(m.group(2)), n, c, path, want


async def serve_until_signalled():
    """Prints "listening", then returns on SIGTERM or SIGINT."""
    stop = asyncio.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        asyncio.get_running_loop().add_signal_handler(sig, stop.set)
    print("listening", flush=True)
    await stop.wait()


def run_client(main, doc, overall_timeout):
    """A client's entry: parses sys.argv (exit 2 with the usage line if bad), runs main(*args)
    under the overall timeout (exit 3 past it), exits with main's code."""
    try:
        params = parse_client_args(sys.argv[1:])
    except ValueError as e:
        print(f"{e}\n{doc.splitlines()[0]}", file=sys.stderr)
        sys.exit(2)
    try:
        sys.exit(asyncio.run(asyncio.wait_for(main(*params), overall_timeout)))
    except asyncio.TimeoutError:
        print("timeout", file=sys.stderr)
        sys.exit(3)
