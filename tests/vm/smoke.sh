#!/bin/sh
# The smoke test inside a VM (make check-arm64 has scripts/vm-run.sh run it
# next to the agent built for the VM's architecture): the agent
# traces while the workload runs, then its JSON lines are checked for an
# exec and an exit, a TCP connect and close, a plain HTTP request, an
# HTTPS request decrypted by the OpenSSL uprobes (curl's side and nginx's),
# and one by the Go uprobes (./go-get, tests/e2e/clients/go_get.go built for
# the VM's architecture: Go's register ABI and goroutine register).
# Prints one "ok"/"not ok" line per check and "N passed, N failed".
# Usage (in the guest): smoke.sh OUT   (OUT: a writable scratch dir)
out=${1:-/tmp/out}
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$out" && cd "$out" || exit 1
pass=0 fail=0
check() { # NAME PATTERN...: every pattern on one trace line
	name=$1
	shift
	lines=$(cat trace.jsonl)
	for p in "$@"; do
		lines=$(printf '%s\n' "$lines" | grep -F -- "$p")
	done
	if [ -n "$lines" ]; then
		echo "ok - $name"
		pass=$((pass + 1))
	else
		echo "not ok - $name (no line with: $*)"
		fail=$((fail + 1))
	fi
}
now() { cut -d' ' -f1 /proc/uptime; }

echo "smoke: $(uname -srm), $(nproc) CPUs"
# nginx on loopback: plain HTTP on 8080, HTTPS on 8443 with a fresh self-signed key.
openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=localhost \
	-keyout key.pem -out cert.pem 2>/dev/null
mkdir -p www && echo hello >www/index.html
cat >nginx.conf <<EOC
worker_processes 1;
pid $out/nginx.pid;
error_log $out/nginx.err;
events { worker_connections 64; }
http {
	access_log off;
	client_body_temp_path $out; proxy_temp_path $out; fastcgi_temp_path $out;
	uwsgi_temp_path $out; scgi_temp_path $out;
	server { listen 127.0.0.1:8080; root $out/www; }
	server { listen 127.0.0.1:8443 ssl; root $out/www;
		 ssl_certificate $out/cert.pem; ssl_certificate_key $out/key.pem; }
}
EOC
nginx -c "$out/nginx.conf" || { echo "not ok - nginx did not start"; echo "0 passed, 1 failed"; exit 1; }

t0=$(now)
"$here/nodescope" trace --listen "" >trace.jsonl 2>agent.err &
agent=$!
i=0
until grep -q '"type":"ready"' trace.jsonl 2>/dev/null; do
	if ! kill -0 "$agent" 2>/dev/null || [ $i -ge 600 ]; then
		echo "not ok - agent ready (after ${i}s; its stderr:)"
		sed 's/^/  /' agent.err
		echo "0 passed, 1 failed"
		exit 1
	fi
	sleep 1
	i=$((i + 1))
done
echo "smoke: agent ready in $(echo "$(now) $t0" | awk '{ printf "%.1f", $1 - $2 }') s"

# The workload: a short-lived program, HTTP and HTTPS through curl (libcurl on OpenSSL).
cp /bin/false ./ns-smoke-false && ./ns-smoke-false
curl -s -o /dev/null http://127.0.0.1:8080/smoke-http
curl -s -o /dev/null -k https://127.0.0.1:8443/smoke-https
# A Go program is probed from its first exec on; the run after its tls_probe line is checked.
"$here/go-get" https://127.0.0.1:8443/smoke-go-first >/dev/null
i=0
until grep -q '"type":"tls_probe".*"file":"[^"]*go-get"' trace.jsonl || [ $i -ge 300 ]; do
	sleep 1
	i=$((i + 1))
done
"$here/go-get" https://127.0.0.1:8443/smoke-go >/dev/null
sleep 3 # past the l7 stream's batching delay
kill -INT "$agent"
wait "$agent"
echo "smoke: agent exited with $?; $(wc -l <trace.jsonl) trace lines"

check "exec of a short-lived program" '"type":"exec"' '"exe":"./ns-smoke-false"'
check "its exit and exit code" '"type":"exit"' '"comm":"ns-smoke-false"' '"code":1'
check "TCP connect to nginx" '"type":"connect"' '"dst":"127.0.0.1:8080"' '"dir":"out"'
check "TCP accept in nginx" '"type":"accept"' '"dst":"127.0.0.1:8080"' '"dir":"in"'
check "TCP close with bytes" '"type":"close"' '"dst":"127.0.0.1:8080"' '"dir":"out"'
check "HTTP request, client side" '"type":"l7"' '"path":"/smoke-http"' '"dir":"out"' '"status":404' '"tls":false'
check "HTTP request, server side" '"type":"l7"' '"path":"/smoke-http"' '"dir":"in"' '"status":404'
check "OpenSSL probed" '"type":"tls_probe"' '"library":"openssl"'
check "HTTPS request decrypted, client side" '"type":"l7"' '"path":"/smoke-https"' '"dir":"out"' '"tls":true'
check "HTTPS request decrypted, server side" '"type":"l7"' '"path":"/smoke-https"' '"dir":"in"' '"tls":true'
check "Go program probed" '"type":"tls_probe"' '"library":"go"'
check "Go HTTPS request decrypted, client side" '"type":"l7"' '"path":"/smoke-go"' '"dir":"out"' '"status":404' '"tls":true'
kill "$(cat nginx.pid)" 2>/dev/null
if [ "$fail" != 0 ]; then
	echo "smoke: the trace:"
	sed 's/^/  /' trace.jsonl | cut -c1-300 | tail -60
	echo "smoke: agent stderr:"
	sed 's/^/  /' agent.err | tail -20
fi
echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
