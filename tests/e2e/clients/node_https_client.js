// Usage: node node_https_client.js [HOST:]PORT [N [C [PATH [STATUS]]]]
//        (defaults: HOST 127.0.0.1, N 200, C 20, PATH /ok, STATUS 200)
//
// An HTTPS/1.1 client for the e2e tests, on Node's https module: OpenSSL on memory
// BIOs, the event loop moves the ciphertext. One process, one event loop: N GETs of
// https://HOST:PORT/PATH?i=<index> (index 0..N-1), all issued at once and spread by
// a keep-alive https.Agent over at most C concurrent connections (maxSockets=C).
// Certificates are not checked. For each request, once its response is read in full,
// prints one line "<local_port> <index> <status>" (which connection carried which
// request). Exits 0 only if every request got a full response with status STATUS;
// 1 if some got another status or failed, 2 on bad usage, 3 on the overall timeout.
'use strict';
const https = require('https');

const args = process.argv.slice(2);
if (args.length < 1 || args.length > 5) {
  process.stderr.write('usage: node node_https_client.js [HOST:]PORT [N [C [PATH [STATUS]]]]\n');
  process.exit(2);
}
const m = /^(?:\[?([^\]]*)\]?:)?(\d+)$/.exec(args[0]);
const n = Number(args[1] || 200);
const c = Number(args[2] || 20);
const path = args[3] || '/ok';
const want = Number(args[4] || 200);
if (!m || !(n >= 1) || !(c >= 1) || !path.startsWith('/')) {
  process.stderr.write('bad arguments\n');
  process.exit(2);
}
const host = m[1] || '127.0.0.1';
const port = Number(m[2]);
const REQUEST_TIMEOUT_MS = 15000;
const OVERALL_TIMEOUT_MS = 60000;

const agent = new https.Agent({ keepAlive: true, maxSockets: c, rejectUnauthorized: false });
let done = 0;
let good = 0;
const finished = new Set();

// Once per request: its line (null when it failed), and the exit code after the last.
function finish(i, line) {
  if (finished.has(i)) return;
  finished.add(i);
  if (line) process.stdout.write(line + '\n');
  if (++done === n) {
    agent.destroy(); // close the kept-alive connections so the loop ends
    clearTimeout(overall);
    process.exitCode = good === n ? 0 : 1;
  }
}

const overall = setTimeout(() => {
  process.stderr.write(`timeout: ${done}/${n} requests done\n`);
  process.exit(3);
}, OVERALL_TIMEOUT_MS);

for (let i = 0; i < n; i++) {
  const req = https.get({
    host, port, agent, path: `${path}?i=${i}`, rejectUnauthorized: false,
  }, (res) => {
    const localPort = res.socket.localPort; // read now: the socket is reused after 'end'
    res.resume();
    res.on('end', () => {
      if (res.statusCode === want && !finished.has(i)) good++;
      finish(i, `${localPort} ${i} ${res.statusCode}`);
    });
    res.on('error', (e) => {
      process.stderr.write(`request ${i}: ${e.message}\n`);
      finish(i, null);
    });
  });
  req.setTimeout(REQUEST_TIMEOUT_MS, () => req.destroy(new Error('request timeout')));
  req.on('error', (e) => {
    process.stderr.write(`request ${i}: ${e.message}\n`);
    finish(i, null);
  });
}
