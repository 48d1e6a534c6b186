#!/usr/bin/python3
"""Usage: ssl_order_check.py trace --lib PATH [--lib PATH]... --out TRACE -- CMD [ARG]...
       ssl_order_check.py check TRACE [--ports FILE]... [--verbose]

Checks how a TLS runtime that keeps OpenSSL on memory BIOs (Node.js, Python asyncio)
orders its SSL_read/SSL_write calls and the socket syscalls its event loop makes for
the ciphertext, per thread; a tool for designing and debugging the agent's binding of
an SSL* to its socket, not a test.

trace: runs CMD (e.g. a shell script that starts a server, runs a client and stops
  the server) in a fresh cgroup v2 directory, with bpftrace tracing every process in
  it: uprobes on the SSL functions of each --lib (a libssl.so.3, or an executable with
  OpenSSL linked in such as /usr/bin/node), the read/write-type syscalls on TCP
  sockets (fd, local and remote port, result) and epoll waits. Needs root and
  bpftrace (Debian package).
check: reads TRACE and, per process, finds each SSL*'s true connection: from the
  request index in its plaintext (`?i=N `) and the client output files given with
  --ports (lines "<local_port> <index> <status>", as the clients in this directory
  print), else from a socket syscall made inside its own call (a socket BIO), else
  by majority of the rules below. Then counts, per runtime:
  (R) each SSL_read/SSL_read_ex/SSL_peek* that returned data: was the thread's most
      recent read-type syscall (read/readv/recvfrom/recvmsg) before it on the
      SSL*'s connection? (also: counting only reads that returned data)
  (W) each SSL_write/SSL_write_ex that wrote data: is the thread's next write-type
      syscall (write/writev/sendto/sendmsg/sendmmsg/sendfile) after it on the
      SSL*'s connection?
  and simulates the agent's plan (a socket syscall inside an SSL call binds its SSL*
  as today; else an SSL* with no socket is bound by (R) or (W), one pending SSL_write
  per thread; an SSL* keeps its socket once bound), plus facts:
  functions called, SSL_writes of other SSL*s between an SSL_write and its own
  socket write, writev vectors, epoll waits between an SSL_write and its write.
  It also reports socket syscalls on another connection made inside an SSL call (a
  callback run by the library, e.g. Node's handshake-done handler writing elsewhere)
  and SSL calls nested in another. Exit status 0 if neither rule was violated and the
  simulation bound every SSL* to its own socket, 1 otherwise.

Trace lines (times: bpftrace nsecs, entry and exit):
  S t0 t1 pid tid FN ssl ret nbytes data   (data: plaintext prefix, bpftrace %r)
  Y t0 t1 pid tid SYSCALL fd lport rport ret x0:x1,x2,x3  (writev: count:first 3 lengths;
                                                           write/sendto: first byte)
  E t0 t1 pid tid epoll ret
  N t pid tid ssl comm | F t pid tid ssl | B t pid tid ssl fd   (SSL_new, SSL_free,
                                                                SSL_set_fd: informational)
"""
import argparse
import bisect
import collections
import os
import re
import signal
import subprocess
import sys
import time

READ_FNS = ("SSL_read", "SSL_read_ex", "SSL_peek", "SSL_peek_ex")
WRITE_FNS = ("SSL_write", "SSL_write_ex")
OTHER_FNS = ("SSL_do_handshake", "SSL_connect", "SSL_accept", "SSL_shutdown")
READ_SYSCALLS = ("read", "readv", "recvfrom", "recvmsg")
WRITE_SYSCALLS = ("write", "writev", "sendto", "sendmsg", "sendmmsg", "sendfile64")

# ---------------------------------------------------------------------------- trace

# Sets $ok when fd $fd is a TCP socket (AF_INET/AF_INET6, SOCK_STREAM), with its ports.
SOCK_CHECK = """
  $ok = 0; $lp = 0; $rp = 0;
  $f = (struct file *)*(curtask->files->fdt->fd + $fd);
  if ($f != 0 && ($f->f_inode->i_mode & 0xf000) == 0xc000) {
    $so = (struct socket *)$f->private_data;
    $fam = $so->sk->__sk_common.skc_family;
    if (($fam == 2 || $fam == 10) && $so->type == 1) {
      $ok = 1; $lp = $so->sk->__sk_common.skc_num; $rp = bswap($so->sk->__sk_common.skc_dport);
    }
  }"""


def bpftrace_program(libs, cgroup_path):
    flt = f'cgroup == cgroupid("{cgroup_path}")'
    out = ['BEGIN { printf("READY\\n"); }']
    k = 0
    for lib in libs:
        syms = {w.split("@")[0] for w in subprocess.run(["nm", "-D", "--defined-only", lib],
                                                        capture_output=True, text=True).stdout.split()}
        for fn in READ_FNS + WRITE_FNS + OTHER_FNS:
            if fn not in syms:
                continue
            k += 1
            ex = fn.endswith("_ex")
            count = ("if ((int32)retval == 1) { $n = *(uint64 *)@a3[tid, %d]; }" % k) if ex else \
                "$n = (int32)retval;"
            moves = fn in READ_FNS + WRITE_FNS
            data = "buf(@a1[tid, %d], 48)" % k if moves else '"-"'
            spec = "%r" if moves else "%s"
            out.append(f"""
uprobe:{lib}:{fn} /{flt}/ {{ @e[tid, {k}] = nsecs; @a0[tid, {k}] = arg0; @a1[tid, {k}] = arg1;
  @a3[tid, {k}] = arg3; }}
uretprobe:{lib}:{fn} /{flt} && @e[tid, {k}]/ {{
  $n = (int64)0; {count}
  printf("S %llu %llu %d %d {fn} %llx %d %lld {spec}\\n", @e[tid, {k}], nsecs, pid, tid, @a0[tid, {k}],
         (int32)retval, $n, {data});
  delete(@e[tid, {k}]); delete(@a0[tid, {k}]); delete(@a1[tid, {k}]); delete(@a3[tid, {k}]);
}}""")
        if "SSL_new" in syms:
            out.append(f'uretprobe:{lib}:SSL_new /{flt}/ {{ printf("N %llu %d %d %llx %s\\n", nsecs, pid, tid, retval, comm); }}')
        if "SSL_free" in syms:
            out.append(f'uprobe:{lib}:SSL_free /{flt}/ {{ printf("F %llu %d %d %llx\\n", nsecs, pid, tid, arg0); }}')
        if "SSL_set_fd" in syms:
            out.append(f'uprobe:{lib}:SSL_set_fd /{flt}/ {{ printf("B %llu %d %d %llx %d\\n", nsecs, pid, tid, arg0, arg1); }}')
    # Extra arguments kept at entry: writev's vector count and first iov lengths, the first
    # byte written by write/sendto (0x17: a TLS application data record).
    extras = {
        "write": "@x0[tid] = (int64)*(uint8 *)args->buf;",
        "sendto": "@x0[tid] = (int64)*(uint8 *)args->buff;",
        "writev": "@x0[tid] = (int64)args->vlen; $v = (uint64)args->vec; @x1[tid] = *(uint64 *)($v + 8); "
                  "@x2[tid] = *(uint64 *)($v + 24); @x3[tid] = *(uint64 *)($v + 40);",
        "readv": "@x0[tid] = (int64)args->vlen;",
    }
    for sc in READ_SYSCALLS + WRITE_SYSCALLS:
        fd = "args->out_fd" if sc == "sendfile64" else "args->fd"
        out.append(f"""
tracepoint:syscalls:sys_enter_{sc} /{flt}/ {{
  $fd = (int64){fd};{SOCK_CHECK}
  if ($ok) {{ @st[tid] = nsecs; @sfd[tid] = $fd; @slp[tid] = $lp; @srp[tid] = $rp;
    @x0[tid] = 0; @x1[tid] = 0; @x2[tid] = 0; @x3[tid] = 0; {extras.get(sc, "")} }}
}}
tracepoint:syscalls:sys_exit_{sc} /{flt} && @st[tid]/ {{
  printf("Y %llu %llu %d %d {sc} %d %d %d %lld %lld:%llu,%llu,%llu\\n", @st[tid], nsecs, pid, tid,
         @sfd[tid], @slp[tid], @srp[tid], args->ret, @x0[tid], @x1[tid], @x2[tid], @x3[tid]);
  delete(@st[tid]); delete(@sfd[tid]); delete(@slp[tid]); delete(@srp[tid]);
}}""")
    for sc in ("epoll_wait", "epoll_pwait", "epoll_pwait2"):
        out.append(f"""
tracepoint:syscalls:sys_enter_{sc} /{flt}/ {{ @ep[tid] = nsecs; }}
tracepoint:syscalls:sys_exit_{sc} /{flt} && @ep[tid]/ {{
  printf("E %llu %llu %d %d epoll %lld\\n", @ep[tid], nsecs, pid, tid, args->ret); delete(@ep[tid]);
}}""")
    out.append("END { clear(@e); clear(@a0); clear(@a1); clear(@a3); clear(@st); clear(@sfd); "
               "clear(@slp); clear(@srp); clear(@ep); clear(@x0); clear(@x1); clear(@x2); clear(@x3); }")
    return "\n".join(out) + "\n"


def cgroup2_root():
    with open("/proc/self/mounts") as f:
        for line in f:
            dev, mnt, fstype = line.split()[:3]
            if fstype == "cgroup2":
                return mnt
    raise SystemExit("no cgroup2 mount")


def trace(args):
    cg = os.path.join(cgroup2_root(), f"ssl_order_check.{os.getpid()}")
    os.mkdir(cg)
    prog_path = args.out + ".bt"
    with open(prog_path, "w") as f:
        f.write(bpftrace_program(args.lib, cg))
    env = dict(os.environ, BPFTRACE_PERF_RB_PAGES="4096", BPFTRACE_STRLEN="64")
    raw = open(args.out + ".raw", "w")
    errf = open(args.out + ".err", "w+")
    bt = subprocess.Popen(["bpftrace", "-B", "line", prog_path], stdout=raw, stderr=errf, env=env)
    rc = 1
    try:
        deadline = time.time() + 120
        while time.time() < deadline:
            with open(args.out + ".raw") as f:
                if "READY" in f.read():
                    break
            if bt.poll() is not None:
                errf.seek(0)
                raise SystemExit("bpftrace failed: " + errf.read())
            time.sleep(0.1)
        else:
            raise SystemExit("bpftrace did not start")

        def enter_cgroup():
            with open(os.path.join(cg, "cgroup.procs"), "w") as f:
                f.write(str(os.getpid()))

        rc = subprocess.run(args.cmd, preexec_fn=enter_cgroup).returncode
        time.sleep(1)  # let the last events drain
    finally:
        bt.send_signal(signal.SIGINT)
        try:
            bt.wait(30)
        except subprocess.TimeoutExpired:
            bt.kill()
        raw.close()
        errf.seek(0)
        err = errf.read()
        errf.close()
        os.unlink(args.out + ".err")
        for _ in range(50):
            try:
                os.rmdir(cg)
                break
            except OSError:
                time.sleep(0.1)
    lost = re.findall(r"Lost (\d+) events", err + open(args.out + ".raw").read())
    with open(args.out + ".raw") as src, open(args.out, "w") as dst:
        for line in src:
            if line[:2] in ("S ", "Y ", "E ", "N ", "F ", "B "):
                dst.write(line)
    os.unlink(args.out + ".raw")
    print(f"trace: command exit {rc}, events lost: {sum(map(int, lost))}, trace in {args.out}",
          file=sys.stderr)
    return rc


# ---------------------------------------------------------------------------- check

class Ev:
    __slots__ = ("kind", "t0", "t1", "pid", "tid", "name", "ssl", "ret", "n", "data", "fd",
                 "conn", "extra", "inst", "truth", "nested")


def unescape(s):
    return re.sub(rb"\\x([0-9a-fA-F]{2})", lambda m: bytes([int(m.group(1), 16)]), s.encode("latin-1"))


def parse(path):
    evs = []
    with open(path, encoding="latin-1") as f:
        for line in f:
            p = line.rstrip("\n").split(" ")
            e = Ev()
            e.kind = p[0]
            e.inst = e.truth = e.nested = e.conn = None
            if e.kind == "S":
                e.t0, e.t1, e.pid, e.tid = int(p[1]), int(p[2]), int(p[3]), int(p[4])
                e.name, e.ssl, e.ret, e.n = p[5], p[6], int(p[7]), int(p[8])
                if not e.name.endswith("_ex"):
                    e.n = e.ret  # the byte count is the int result (the trace widens it)
                elif e.ret != 1:
                    e.n = 0
                e.data = unescape(" ".join(p[9:]))[:max(e.n, 0)]
            elif e.kind == "Y":
                e.t0, e.t1, e.pid, e.tid = int(p[1]), int(p[2]), int(p[3]), int(p[4])
                e.name, e.fd = p[5], int(p[6])
                e.conn = (int(p[7]), int(p[8]))
                e.ret = int(p[9])
                e.extra = " ".join(p[10:])
            elif e.kind == "E":
                e.t0, e.t1, e.pid, e.tid, e.ret = int(p[1]), int(p[2]), int(p[3]), int(p[4]), int(p[6])
            elif e.kind in ("N", "F", "B"):
                e.t0 = e.t1 = int(p[1])
                e.pid, e.tid, e.ssl = int(p[2]), int(p[3]), p[4]
                e.fd = int(p[5]) if e.kind == "B" else None
                e.name = p[5] if e.kind == "N" and len(p) > 5 else None
            else:
                continue
            evs.append(e)
    evs.sort(key=lambda e: (e.t0, e.t1))
    return evs


def load_ports(files):
    """index -> local port of the connection that carried it, from the clients' output."""
    ports = {}
    for path in files:
        with open(path) as f:
            for line in f:
                p = line.split()
                if len(p) == 3 and p[0].isdigit() and p[1].isdigit():
                    ports[int(p[1])] = int(p[0])
    return ports


def runtime_of(evs):
    """The process' command name, from its SSL_new events."""
    return next((e.name for e in evs if e.kind == "N" and e.name), None)


def fmt_conn(c):
    return f"{c[0]}->{c[1]}" if c else "none"


def check_process(pid, evs, ports, verbose):
    """Analyses one process' events; returns (report lines, violation count)."""
    out = []
    # SSL* instances: a pointer starts a new instance after each SSL_free.
    gen = collections.Counter()
    for e in evs:
        if e.kind == "F":
            gen[e.ssl] += 1
        elif e.kind == "S":
            e.inst = (e.ssl, gen[e.ssl])
    by_tid = collections.defaultdict(list)
    for e in evs:
        if e.kind in ("S", "Y", "E"):
            by_tid[e.tid].append(e)
    conns = {e.conn for e in evs if e.kind == "Y"}
    by_lport = collections.defaultdict(set)
    by_rport = collections.defaultdict(set)
    for c in conns:
        by_lport[c[0]].add(c)
        by_rport[c[1]].add(c)

    # Nested: socket syscalls made inside an SSL call on the same thread (a socket BIO).
    for tid, tev in by_tid.items():
        open_calls = []
        for e in tev:
            if e.kind == "S":
                open_calls.append(e)
            elif e.kind == "Y":
                for s in open_calls:
                    if s.t0 <= e.t0 and e.t1 <= s.t1 and s.nested is None:
                        s.nested = e.conn
                open_calls = [s for s in open_calls if s.t1 >= e.t1]

    # Truth per instance.
    truth = {}
    how = {}
    conflicts = 0
    for e in evs:
        if e.kind != "S" or e.n <= 0:
            continue
        t = None
        m = re.search(rb"\?i=(\d+) ", e.data or b"")
        if m and int(m.group(1)) in ports:
            port = ports[int(m.group(1))]
            # Written by the client (its local port), read by the server (the peer's port).
            cands = by_lport[port] if e.name in WRITE_FNS else by_rport[port]
            if len(cands) == 1:
                t = next(iter(cands))
                kind = "index"
        if t is None and e.nested:
            t, kind = e.nested, "socket BIO"
        if t is None:
            continue
        if e.inst in truth and truth[e.inst] != t:
            conflicts += 1
        truth.setdefault(e.inst, t)
        how.setdefault(e.inst, kind)

    # The rules' candidates for each data call.
    def last_read(tev, i, need_data):
        for j in range(i - 1, -1, -1):
            y = tev[j]
            if y.kind == "Y" and y.name in READ_SYSCALLS and (not need_data or y.ret > 0):
                return y
        return None

    def next_write(tev, i, s):
        for j in range(i + 1, len(tev)):
            y = tev[j]
            if y.kind == "Y" and y.name in WRITE_SYSCALLS and y.t0 >= s.t1:
                return y, j
        return None, None

    # Stricter variants: the thread's previous / next socket syscall of any kind.
    def prev_any(tev, i):
        return next((tev[j] for j in range(i - 1, -1, -1) if tev[j].kind == "Y"), None)

    def next_any(tev, i, s):
        return next((tev[j] for j in range(i + 1, len(tev)) if tev[j].kind == "Y" and tev[j].t0 >= s.t1),
                    None)

    rule_r = collections.Counter()
    rule_r_data = collections.Counter()
    rule_w = collections.Counter()
    examples = collections.defaultdict(list)
    fns = collections.Counter()
    cand_votes = collections.defaultdict(collections.Counter)
    results = []
    for tid, tev in by_tid.items():
        for i, s in enumerate(tev):
            if s.kind != "S":
                continue
            fns[(s.name, "data" if s.n > 0 else f"ret {s.ret}" if s.ret <= 0 else "no data")] += 1
            if s.n <= 0 or s.name not in READ_FNS + WRITE_FNS:
                continue
            if s.nested:
                results.append((s, "inside", s.nested, None, None))
                continue
            if s.name in READ_FNS:
                y = last_read(tev, i, False)
                yd = last_read(tev, i, True)
                ya = prev_any(tev, i)
                results.append((s, "R", y.conn if y else None, yd.conn if yd else None, ya.conn if ya else None))
                if y:
                    cand_votes[s.inst][y.conn] += 1
            else:
                y, _ = next_write(tev, i, s)
                ya = next_any(tev, i, s)
                results.append((s, "W", y.conn if y else None, None, ya.conn if ya else None))
                if y:
                    cand_votes[s.inst][y.conn] += 1
    for inst, votes in cand_votes.items():
        if inst not in truth:
            truth[inst] = votes.most_common(1)[0][0]
            how[inst] = "majority"

    violations = 0
    strict = {"R": collections.Counter(), "W": collections.Counter()}
    for s, rule, cand, cand_data, cand_any in results:
        t = truth.get(s.inst)
        if rule == "inside":
            rule_r["inside the call (socket BIO)"] += 1 if s.name in READ_FNS else 0
            rule_w["inside the call (socket BIO)"] += 1 if s.name in WRITE_FNS else 0
            continue
        strict[rule]["same connection" if cand_any == t else "other" if cand_any else "none"] += 1
        if rule == "R":
            verdict = "ok" if cand == t else "no read before" if cand is None else "VIOLATION: other connection"
            rule_r[verdict] += 1
            rule_r_data["ok" if cand_data == t else "no read before" if cand_data is None
                        else "VIOLATION: other connection"] += 1
        else:
            verdict = "ok" if cand == t else "no write after" if cand is None else "VIOLATION: other connection"
            rule_w[verdict] += 1
        if verdict != "ok":
            violations += 1
            examples[(rule, verdict)].append((s, t, cand))

    runtime = runtime_of(evs)
    out.append(f"== pid {pid}" + (f" ({runtime})" if runtime else "") +
               f": {len(conns)} TCP connections, {len({e.inst for e in evs if e.kind == 'S'})} SSL objects,"
               f" truth by {dict(collections.Counter(how.values()))}"
               + (f", {conflicts} truth conflicts" if conflicts else ""))
    out.append("  SSL calls: " + ", ".join(f"{n} {k[0]} ({k[1]})" for k, n in sorted(fns.items())))
    sc = collections.Counter(e.name for e in evs if e.kind == "Y")
    out.append("  socket syscalls: " + ", ".join(f"{n} {k}" for k, n in sorted(sc.items())))
    out.append(f"  (R) last read-type syscall before each SSL read with data: {dict(rule_r)}")
    out.append(f"      counting only reads that returned data:               {dict(rule_r_data)}")
    out.append(f"  (W) next write-type syscall after each SSL write with data: {dict(rule_w)}")
    out.append(f"  stricter: the thread's previous socket syscall of any kind before an SSL read: "
               f"{dict(strict['R'])}; next one after an SSL write: {dict(strict['W'])}")
    for (rule, verdict), exs in examples.items():
        out.append(f"    {rule} {verdict}: {len(exs)}, e.g.:")
        for s, t, cand in exs[:3 if not verbose else 1000]:
            out.append(f"      tid {s.tid} {s.name} ssl {s.ssl} n={s.n} t={s.t0}: truth {fmt_conn(t)}, "
                       f"rule gives {fmt_conn(cand)}; before/after it on the thread:")
            tev = by_tid[s.tid]
            i = tev.index(s)
            for e in tev[max(0, i - 4):i + 5]:
                out.append("        " + ("-> " if e is s else "   ") + describe(e, truth))

    # Facts about writes: other SSL_writes between an SSL_write and its own socket write,
    # how many SSL_writes one socket write carries, epoll waits (loop ticks) in between.
    interleaved = batched = same_tick = later_tick = unmatched = 0
    per_write = collections.Counter()
    delays = []
    for tid, tev in by_tid.items():
        for i, s in enumerate(tev):
            if s.kind != "S" or s.name not in WRITE_FNS or s.n <= 0 or s.nested:
                continue
            t = truth.get(s.inst)
            own = None
            between = []
            for j in range(i + 1, len(tev)):
                e = tev[j]
                if e.kind == "Y" and e.name in WRITE_SYSCALLS and e.conn == t and e.t0 >= s.t1:
                    own = e
                    break
                between.append(e)
            if own is None:
                unmatched += 1
                continue
            per_write[id(own)] += 1
            delays.append(own.t0 - s.t1)
            if any(e.kind == "S" and e.name in WRITE_FNS and e.n > 0 and e.inst != s.inst for e in between):
                interleaved += 1
            if any(e.kind == "E" for e in between):
                later_tick += 1
            else:
                same_tick += 1
    batched = sum(1 for v in per_write.values() if v > 1)
    wv = collections.Counter(int(e.extra.split(":")[0]) for e in evs if e.kind == "Y" and e.name == "writev")
    out.append(f"  SSL writes with data: own socket write in the same loop tick {same_tick}, after an epoll"
               f" wait {later_tick}, not found {unmatched}; with another SSL*'s SSL_write before it {interleaved};"
               f" socket writes carrying >1 SSL_write {batched}; writev vector counts {dict(wv)}")
    if delays:
        delays.sort()
        out.append(f"  SSL_write return -> own socket write: median {delays[len(delays) // 2] / 1000:.1f} us,"
                   f" max {delays[-1] / 1000:.1f} us")

    # Socket syscalls made while an SSL call is in flight on the thread, on a connection
    # other than the call's SSL*'s (JS or Python callbacks run inside the call), and SSL
    # calls made inside another SSL call.
    inside_other = collections.Counter()
    nested_calls = collections.Counter()
    for tid, tev in by_tid.items():
        calls = [e for e in tev if e.kind == "S"]
        starts = [c.t0 for c in calls]
        for e in tev:
            if e.kind not in ("S", "Y"):
                continue
            j = bisect.bisect_right(starts, e.t0) - 1
            while j >= 0:
                c = calls[j]
                if c is not e and c.t0 <= e.t0 and e.t1 <= c.t1:
                    if e.kind == "S":
                        nested_calls[f"{e.name} inside {c.name}"] += 1
                    elif truth.get(c.inst) is not None and e.conn != truth[c.inst]:
                        inside_other[f"{e.name} inside {c.name} (returned {c.ret})"] += 1
                    break
                j -= 1
    if inside_other:
        out.append(f"  socket syscalls on ANOTHER connection made inside an SSL call: {dict(inside_other)}")
    if nested_calls:
        out.append(f"  SSL calls made inside another SSL call: {dict(nested_calls)}")

    # The agent's plan, simulated event by event per thread: one call slot per thread
    # (a nested call overwrites it and the outer call's return is then ignored); a socket
    # syscall while a call is in flight binds its SSL* (today's rule, whatever the call
    # returns); else an SSL* with no socket is bound by (R) to the thread's last read-type
    # syscall, or by (W) to its next write-type syscall (one pending SSL_write per thread).
    sim = collections.Counter()
    bound, how_bound = {}, {}
    steps = []
    for e in evs:
        if e.kind == "S":
            steps.append((e.t0, 0, "enter", e))
            steps.append((e.t1, 2, "exit", e))
        elif e.kind == "Y":
            steps.append((e.t0, 1, "sys", e))
    steps.sort(key=lambda x: (x[0], x[1]))
    slot, last_rd, pending = {}, {}, {}

    def emit(s, conn):
        sim["right" if conn == truth.get(s.inst) else "WRONG connection"] += 1

    for _, _, what, e in steps:
        if what == "enter":
            slot[e.tid] = e
        elif what == "sys":
            c = slot.get(e.tid)
            if c is not None:
                if c.inst not in bound:
                    bound[c.inst], how_bound[c.inst] = e.conn, "inside a call"
                continue  # ciphertext of the call in flight: not a candidate for (R)/(W)
            if e.name in READ_SYSCALLS:
                last_rd[e.tid] = e.conn
            elif e.name in WRITE_SYSCALLS and e.tid in pending:
                p = pending.pop(e.tid)
                if p.inst not in bound:
                    bound[p.inst], how_bound[p.inst] = e.conn, "(W)"
                emit(p, bound[p.inst])
        else:
            if slot.get(e.tid) is not e:
                if e.n > 0 and e.name in READ_FNS + WRITE_FNS:
                    sim["dropped: a nested call took the slot"] += 1
                continue
            slot[e.tid] = None
            if e.n <= 0 or e.name not in READ_FNS + WRITE_FNS:
                continue
            if e.inst in bound:
                emit(e, bound[e.inst])
            elif e.name in READ_FNS:
                if e.tid in last_rd:
                    bound[e.inst], how_bound[e.inst] = last_rd[e.tid], "(R)"
                    emit(e, bound[e.inst])
                else:
                    sim["dropped: no read before"] += 1
            else:
                if e.tid in pending:
                    sim["dropped: pending SSL_write replaced"] += 1
                pending[e.tid] = e
    sim["dropped: no write after"] += len(pending)
    wrong = collections.Counter(how_bound[i] for i, c in bound.items()
                                if truth.get(i) is not None and c != truth[i])
    out.append(f"  plan simulated: plaintext calls {dict(sim)}; SSL objects bound by "
               f"{dict(collections.Counter(how_bound.values()))}, to a WRONG socket: {dict(wrong) or 0}")
    violations += sum(wrong.values())
    return out, violations


def describe(e, truth):
    if e.kind == "S":
        t = truth.get(e.inst)
        return f"{e.t0} {e.name} ssl {e.ssl} (conn {fmt_conn(t)}) ret {e.ret} n {e.n} {e.data[:24]!r}"
    if e.kind == "Y":
        return f"{e.t0} {e.name} fd {e.fd} conn {fmt_conn(e.conn)} ret {e.ret} {e.extra}"
    return f"{e.t0} epoll_wait ret {e.ret}"


def check(args):
    evs = parse(args.trace)
    ports = load_ports(args.ports)
    by_pid = collections.defaultdict(list)
    for e in evs:
        by_pid[e.pid].append(e)
    total = 0
    for pid, pevs in sorted(by_pid.items()):
        if not any(e.kind == "S" for e in pevs):
            continue
        lines, v = check_process(pid, pevs, ports, args.verbose)
        total += v
        print("\n".join(lines))
    return 1 if total else 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[1],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="what", required=True)
    t = sub.add_parser("trace")
    t.add_argument("--lib", action="append", required=True)
    t.add_argument("--out", required=True)
    t.add_argument("cmd", nargs=argparse.REMAINDER)
    c = sub.add_parser("check")
    c.add_argument("trace")
    c.add_argument("--ports", action="append", default=[])
    c.add_argument("--verbose", action="store_true")
    args = ap.parse_args()
    if args.what == "trace":
        if args.cmd and args.cmd[0] == "--":
            args.cmd = args.cmd[1:]
        if not args.cmd:
            ap.error("trace needs a command")
        return trace(args)
    return check(args)


if __name__ == "__main__":
    sys.exit(main())
