// Usage: node node_https_server.js ADDR CERT KEY [SIDE_PORT]    (ADDR: 127.0.0.1:8443, [::1]:8443)
//
// With SIDE_PORT, each new TLS connection is announced on a plain TCP connection to
// 127.0.0.1:SIDE_PORT from its handshake-done handler, which Node runs inside SSL_read:
// a socket write inside a TLS call that is not that call's ciphertext.
//
// An HTTPS/1.1 server for the e2e tests, on Node's https module: OpenSSL on memory
// BIOs, the event loop moves the ciphertext. /ok (any query) answers 200 "ok\n",
// anything else 404 "not found\n"; connections are kept alive. Prints "listening"
// once it accepts connections; SIGTERM or SIGINT stops it (exit 0).
'use strict';
const fs = require('fs');
const https = require('https');

if (process.argv.length !== 5 && process.argv.length !== 6) {
  process.stderr.write('usage: node node_https_server.js ADDR CERT KEY [SIDE_PORT]\n');
  process.exit(2);
}
const [addr, certPath, keyPath, sidePort] = process.argv.slice(2);
const m = /^\[?([^\]]*)\]?:(\d+)$/.exec(addr);
if (!m) {
  process.stderr.write(`bad ADDR ${addr}\n`);
  process.exit(2);
}

const server = https.createServer({ cert: fs.readFileSync(certPath), key: fs.readFileSync(keyPath) },
  (req, res) => {
    const path = req.url.split('?')[0];
    const body = path === '/ok' ? 'ok\n' : 'not found\n';
    // Drain any request body first, then answer in one write.
    req.resume();
    req.on('end', () => {
      res.writeHead(path === '/ok' ? 200 : 404,
        { 'Content-Type': 'text/plain', 'Content-Length': Buffer.byteLength(body) });
      res.end(body);
    });
  });
// Keep idle connections for a minute: a test's connections must not close under it.
server.keepAliveTimeout = 60000;
server.headersTimeout = 61000;
server.requestTimeout = 0;
server.on('error', (e) => {
  process.stderr.write(`${e.stack || e}\n`);
  process.exit(1);
});
if (sidePort) {
  const side = require('net').connect(Number(sidePort), '127.0.0.1');
  side.on('error', (e) => {
    process.stderr.write(`side connection: ${e}\n`);
    process.exit(1);
  });
  server.on('secureConnection', (tls) => side.write(`tls ${tls.remotePort}\n`));
}
server.on('tlsClientError', () => {}); // a client that gives up mid-handshake is not fatal
server.listen(Number(m[2]), m[1], () => process.stdout.write('listening\n'));

for (const sig of ['SIGTERM', 'SIGINT']) {
  process.on(sig, () => process.exit(0));
}
