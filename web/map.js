// nodescope's service map. Data: /api/events (the map, pushed by the agent every 2 s while
// this page is open), /api/container/<id> (a container's details, on click). Every name from
// the agent reaches the document as text (textContent) or as a canvas label, never as markup.
'use strict';

const WINDOW_MS = 300 * 1000;
const state = {
  snaps: [],          // [{t: ms, data}] received, the last 5 minutes and one before
  windowS: 300,       // 300: the last 5 minutes; 0: since the agent started
  selected: null,     // {kind: 'node'|'edge', id}
  layoutKey: '',      // the node and edge ids the layout was made for
  updates: 0,
  model: null,
};

// ---------------------------------------------------------------- the data as the agent sends it

// Families: [{name, type, labels, rows, bounds}] -> {name: family} with each row's labels as an object.
function index(data) {
  const out = {};
  for (const f of data.families || []) {
    const rows = f.rows.map((r) => {
      const labels = {};
      f.labels.forEach((n, i) => { labels[n] = r[i]; });
      const k = f.labels.length;
      return f.type === 'histogram' ? { labels, buckets: r[k], sum: r[k + 1] } : { labels, value: r[k] };
    });
    out[f.name] = { name: f.name, type: f.type, labels: f.labels, rows, bounds: f.bounds };
  }
  return out;
}

function rowKey(labels) { return JSON.stringify(labels); }

// The value of each row over the window: counters and histograms as the difference from base
// (a restarted counter counts from 0), gauges as they are now.
function windowed(cur, base) {
  const out = {};
  for (const [name, f] of Object.entries(cur)) {
    const b = base && base[name];
    const prev = {};
    if (b) for (const r of b.rows) prev[rowKey(r.labels)] = r;
    out[name] = Object.assign({}, f, {
      rows: f.rows.map((r) => {
        const p = prev[rowKey(r.labels)];
        if (f.type === 'gauge' || !base) return r;
        if (f.type === 'histogram') {
          if (!p || p.buckets.length !== r.buckets.length || p.buckets[p.buckets.length - 1] > r.buckets[r.buckets.length - 1]) return r;
          return { labels: r.labels, buckets: r.buckets.map((v, i) => v - p.buckets[i]), sum: r.sum - p.sum };
        }
        if (!p || p.value > r.value) return r;
        return { labels: r.labels, value: r.value - p.value };
      }),
    });
  }
  return out;
}

// The q-quantile of cumulative bucket counts (Prometheus' interpolation), in seconds; null if empty.
function quantile(q, bounds, buckets) {
  const total = buckets[buckets.length - 1];
  if (!total) return null;
  const rank = q * total;
  for (let i = 0; i < buckets.length; i++) {
    if (buckets[i] >= rank) {
      const hi = Number(bounds[i]);
      if (!isFinite(hi)) return Number(bounds[i - 1] || 0);
      const lo = i ? Number(bounds[i - 1]) : 0;
      const below = i ? buckets[i - 1] : 0;
      const inb = buckets[i] - below;
      return inb ? lo + (hi - lo) * (rank - below) / inb : hi;
    }
  }
  return null;
}

function isError(status) {
  return /^5/.test(status) || status === 'failed' || (/^grpc:/.test(status) && status !== 'grpc:OK');
}

function kindOf(id) {
  if (id === '/') return 'host';
  const m = /^\/(docker|k8s|podman|system\.slice|crio|containerd)\//.exec(id);
  if (m) return { 'system.slice': 'systemd' }[m[1]] || m[1];
  return 'other';
}

const L7_COUNT = /^container_([a-z0-9]+)_(requests|queries|messages)_total$/;
const L7_HIST = /^container_([a-z0-9]+)_(requests|queries|messages)_duration_seconds_total$/;
const TCP = {
  container_net_tcp_successful_connects_total: 'connects',
  container_net_tcp_failed_connects_total: 'failed',
  container_net_tcp_retransmits_total: 'retransmits',
  container_net_tcp_active_connections: 'active',
  container_net_tcp_bytes_sent_total: 'sent',
  container_net_tcp_bytes_received_total: 'received',
};

// The map's model over the window: nodes (containers, outside destinations) and edges with
// their figures per protocol.
function buildModel(cur, base) {
  const fam = windowed(index(cur.data), base ? index(base.data) : null);
  const seconds = base ? (cur.t - base.t) / 1000 : cur.data.uptime;
  const nodes = new Map();
  const edges = new Map();
  const listens = new Map(); // "ip:port" -> container
  const addNode = (id, outside) => {
    if (!nodes.has(id)) nodes.set(id, { id, outside, kind: outside ? 'outside' : kindOf(id), processes: 0, listens: [] });
    return nodes.get(id);
  };
  for (const [id, n] of cur.data.containers || []) addNode(id, false).processes = n;
  const li = fam.container_net_tcp_listen_info;
  for (const r of (li ? li.rows : [])) {
    addNode(r.labels.container_id, false).listens.push(r.labels.listen_addr);
    listens.set(r.labels.listen_addr, r.labels.container_id);
  }
  const target = (dest) => {
    if (listens.has(dest)) return listens.get(dest);
    const port = dest.slice(dest.lastIndexOf(':') + 1);
    for (const any of ['0.0.0.0:' + port, '[::]:' + port]) if (listens.has(any)) return listens.get(any);
    return null;
  };
  const edge = (from, dest) => {
    const to = target(dest);
    const key = from + '\u0000' + dest;
    if (!edges.has(key)) {
      addNode(from, false);
      const toId = to || 'dest:' + dest;
      if (!to) addNode(toId, true).label = dest;
      edges.set(key, { id: 'e:' + key, source: from, target: toId, destination: dest, protos: {},
        tcp: { connects: 0, failed: 0, retransmits: 0, active: 0, sent: 0, received: 0 } });
    }
    return edges.get(key);
  };
  const proto = (e, p) => e.protos[p] || (e.protos[p] = { count: 0, errors: 0, buckets: null, bounds: null });
  for (const f of Object.values(fam)) {
    const tcp = TCP[f.name];
    const count = L7_COUNT.exec(f.name);
    const hist = L7_HIST.exec(f.name);
    if (!f.labels.includes('destination') || !f.labels.includes('container_id')) continue;
    for (const r of f.rows) {
      const e = edge(r.labels.container_id, r.labels.destination);
      if (tcp) e.tcp[tcp] += r.value;
      else if (count) {
        const p = proto(e, count[1]);
        p.count += r.value;
        if (isError(r.labels.status || '')) p.errors += r.value;
      } else if (hist && f.type === 'histogram') {
        const p = proto(e, hist[1]);
        p.bounds = f.bounds;
        p.buckets = p.buckets ? p.buckets.map((v, i) => v + r.buckets[i]) : r.buckets.slice();
      }
    }
  }
  for (const e of edges.values()) {
    e.requests = 0; e.errors = 0;
    for (const p of Object.values(e.protos)) {
      p.rate = p.count / seconds;
      p.errorShare = p.count ? p.errors / p.count : 0;
      p.p50 = p.buckets ? quantile(0.5, p.bounds, p.buckets) : null;
      p.p99 = p.buckets ? quantile(0.99, p.bounds, p.buckets) : null;
      e.requests += p.count; e.errors += p.errors;
    }
    e.rate = e.requests / seconds;
    e.connectRate = e.tcp.connects / seconds;
    e.failedRate = e.tcp.failed / seconds;
    e.retransmitRate = e.tcp.retransmits / seconds;
    const tries = e.tcp.connects + e.tcp.failed;
    e.bad = Math.max(e.requests ? e.errors / e.requests : 0, tries ? e.tcp.failed / tries : 0);
  }
  return { nodes, edges, seconds, since: base ? 'window' : 'start' };
}

// ---------------------------------------------------------------- formatting

function fmtRate(v) { return v >= 100 ? v.toFixed(0) : v >= 1 ? v.toFixed(1) : v.toFixed(2); }
function fmtSec(s) {
  if (s === null || s === undefined) return '–';
  if (s < 1e-3) return (s * 1e6).toFixed(0) + ' µs';
  if (s < 1) return (s * 1e3).toFixed(s < 0.01 ? 1 : 0) + ' ms';
  return s.toFixed(2) + ' s';
}
function fmtPct(v) { return (v * 100).toFixed(v && v < 0.01 ? 2 : 0) + '%'; }
function fmtBytes(v) {
  const u = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let i = 0;
  while (v >= 1024 && i < u.length - 1) { v /= 1024; i++; }
  return (i ? v.toFixed(1) : v.toFixed(0)) + ' ' + u[i];
}

function edgeLabel(e) {
  const parts = Object.entries(e.protos).filter(([, p]) => p.count).map(([n, p]) =>
    `${n} ${fmtRate(p.rate)}/s` + (p.errors ? ` ${fmtPct(p.errorShare)} err` : '') + (p.p99 !== null ? ` p99 ${fmtSec(p.p99)}` : ''));
  if (e.tcp.failed) parts.push(`${fmtRate(e.failedRate)}/s failed`);
  if (!parts.length && e.tcp.connects) parts.push(`tcp ${fmtRate(e.connectRate)}/s`);
  return parts.join('\n');
}

// Green (no errors) to red (all failing); grey when only TCP is seen.
function edgeColor(e) {
  if (!e.requests && !e.tcp.failed) return '#9aa5b1';
  const bad = Math.min(1, e.bad * 4); // 25 % errors is already fully red
  const r = Math.round(56 + (214 - 56) * bad), g = Math.round(161 + (48 - 161) * bad), b = Math.round(105 + (49 - 105) * bad);
  return `rgb(${r},${g},${b})`;
}
function edgeWidth(e) {
  const r = e.rate || e.connectRate + e.failedRate;
  return Math.max(1, Math.min(14, 1.5 + 2.5 * Math.log10(1 + r * 10)));
}

// ---------------------------------------------------------------- the graph

const KIND_NAMES = { host: 'host processes', docker: 'Docker', k8s: 'Kubernetes', podman: 'Podman', systemd: 'systemd services',
  crio: 'CRI-O', containerd: 'containerd', other: 'other cgroups', outside: 'outside this node' };

let cy = null;
function makeGraph() {
  if (typeof cytoscapeFcose !== 'undefined' && !cytoscape.prototype.hasFcose) {
    try { cytoscape.use(cytoscapeFcose); } catch (e) { /* registered already */ }
    cytoscape.prototype.hasFcose = true;
  }
  cy = cytoscape({
    container: document.getElementById('map'),
    wheelSensitivity: 0.3,
    style: [
      { selector: 'node', style: { label: 'data(label)', 'font-size': 11, 'text-valign': 'bottom', 'text-margin-y': 4,
        'background-color': '#4a6fa5', width: 'data(size)', height: 'data(size)', 'text-wrap': 'ellipsis', 'text-max-width': 220 } },
      { selector: 'node[?outside]', style: { 'background-color': '#b7791f', shape: 'round-rectangle' } },
      { selector: ':parent', style: { label: 'data(label)', 'text-valign': 'top', 'text-halign': 'center', 'background-color': '#f3f6fa',
        'border-color': '#c7d2de', 'border-width': 1, shape: 'round-rectangle', 'font-size': 12, color: '#556' } },
      { selector: 'edge', style: { width: 'data(width)', 'line-color': 'data(color)', 'target-arrow-color': 'data(color)',
        'target-arrow-shape': 'triangle', 'curve-style': 'bezier', label: 'data(label)', 'font-size': 9, 'text-wrap': 'wrap',
        'text-background-color': '#fff', 'text-background-opacity': 0.8, 'text-background-padding': 1 } },
      { selector: 'edge[?tcpOnly]', style: { 'line-style': 'dashed' } },
      { selector: '.dim', style: { opacity: 0.15 } },
      { selector: ':selected', style: { 'border-width': 3, 'border-color': '#d69e2e', 'line-color': '#d69e2e' } },
    ],
  });
  cy.on('tap', 'node', (ev) => { if (!ev.target.isParent()) select({ kind: 'node', id: ev.target.id() }); });
  cy.on('tap', 'edge', (ev) => select({ kind: 'edge', id: ev.target.id() }));
}

function render(model) {
  const els = [];
  const kinds = new Set();
  const linked = new Set();
  for (const e of model.edges.values()) { linked.add(e.source); linked.add(e.target); }
  const q = document.getElementById('search').value.trim().toLowerCase();
  const showIdle = document.getElementById('idle').checked;
  for (const n of model.nodes.values()) {
    // A container with no connection is left off unless asked for (or searched for).
    if (!linked.has(n.id) && !showIdle && !(q && (n.label || n.id).toLowerCase().includes(q))) continue;
    kinds.add(n.kind);
    els.push({ group: 'nodes', data: { id: n.id, parent: 'kind:' + n.kind, label: n.label || n.id, outside: n.outside,
      size: 18 + Math.min(22, 4 * Math.log2(1 + n.processes)) } });
  }
  for (const k of kinds) els.push({ group: 'nodes', data: { id: 'kind:' + k, label: KIND_NAMES[k] || k } });
  for (const e of model.edges.values()) {
    els.push({ group: 'edges', data: { id: e.id, source: e.source, target: e.target, label: edgeLabel(e),
      color: edgeColor(e), width: edgeWidth(e), tcpOnly: !e.requests } });
  }
  const key = els.map((x) => x.data.id).sort().join('\n');
  if (key !== state.layoutKey) {
    cy.elements().remove();
    cy.add(els);
    const name = typeof cytoscapeFcose !== 'undefined' ? 'fcose' : 'cose';
    cy.layout({ name, animate: false, nodeDimensionsIncludeLabels: true, idealEdgeLength: 120,
      gravity: 0.6, padding: 30 }).run();
    state.layoutKey = key;
  } else {
    for (const x of els) cy.getElementById(x.data.id).data(x.data);
  }
  applySearch();
}

function applySearch() {
  const q = document.getElementById('search').value.trim().toLowerCase();
  cy.elements().removeClass('dim');
  if (!q) return;
  const hit = cy.nodes().filter((n) => !n.isParent() && String(n.data('label')).toLowerCase().includes(q));
  cy.elements().not(hit.union(hit.connectedEdges()).union(hit.parents())).addClass('dim');
}

// ---------------------------------------------------------------- details

function el(tag, text, cls) {
  const e = document.createElement(tag);
  if (text !== undefined && text !== null) e.textContent = String(text);
  if (cls) e.className = cls;
  return e;
}

function table(head, rows, numeric) {
  const t = el('table');
  const tr = t.insertRow();
  head.forEach((h, i) => tr.appendChild(el('th', h, numeric && numeric[i] ? 'num' : '')));
  for (const r of rows) {
    const row = t.insertRow();
    r.forEach((v, i) => row.appendChild(el('td', v, numeric && numeric[i] ? 'num' : '')));
  }
  return t;
}

function section(body, title, content) {
  body.appendChild(el('h3', title));
  body.appendChild(content);
}

function edgeDetails(body, e) {
  body.appendChild(el('h2', `${e.source} → ${e.destination}`));
  const win = state.model.since === 'start' ? 'since start' : `over the last ${Math.round(state.model.seconds)} s`;
  body.appendChild(el('p', win, 'muted'));
  const rows = Object.entries(e.protos).map(([n, p]) => [n, fmtRate(p.rate) + '/s', fmtPct(p.errorShare), fmtSec(p.p50), fmtSec(p.p99)]);
  if (rows.length) section(body, 'Requests', table(['protocol', 'rate', 'errors', 'p50', 'p99'], rows, [0, 1, 1, 1, 1]));
  section(body, 'TCP', table(['', ''], [
    ['connects', fmtRate(e.connectRate) + '/s'], ['failed connects', fmtRate(e.failedRate) + '/s'],
    ['retransmits', fmtRate(e.retransmitRate) + '/s'], ['active connections', e.tcp.active],
    ['sent', fmtBytes(e.tcp.sent)], ['received', fmtBytes(e.tcp.received)]], [0, 1]));
}

function sumRows(f) { return f ? f.rows.reduce((a, r) => a + (r.value || 0), 0) : null; }

function containerDetails(body, id, d) {
  const node = state.model.nodes.get(id);
  body.appendChild(el('h2', id));
  if (node && node.outside) {
    body.appendChild(el('p', 'a destination outside this node\'s containers', 'muted'));
    const rows = [...state.model.edges.values()].filter((e) => e.target === id).map((e) => [e.source, fmtRate(e.rate) + '/s', fmtRate(e.failedRate) + '/s']);
    section(body, 'Clients', table(['container', 'requests', 'failed connects'], rows, [0, 1, 1]));
    return;
  }
  if (!d) { body.appendChild(el('p', 'loading…', 'muted')); return; }
  const fam = index(d);
  section(body, 'Processes', d.processes.length
    ? table(['pid', 'command', 'executable'], d.processes.sort((a, b) => a.pid - b.pid).map((p) => [p.pid, p.comm, p.exe]), [1, 0, 0])
    : el('p', 'none running', 'muted'));
  const li = fam.container_net_tcp_listen_info;
  section(body, 'Listening on', li && li.rows.length ? table(['address'], li.rows.map((r) => [r.labels.listen_addr])) : el('p', 'nothing', 'muted'));
  const reqs = d.requests.map((q) => {
    const [c, e, s] = state.windowS ? q.recent : [q.count, q.errors, q.seconds];
    return { q, c, e, s };
  }).filter((x) => x.c).sort((a, b) => b.c - a.c);
  section(body, `Top requests (${state.windowS ? 'last 5 min' : 'since start'})`, reqs.length
    ? table(['protocol', 'request', 'count', 'errors', 'mean'], reqs.slice(0, 20).map(({ q, c, e, s }) =>
      [`${q.proto} ${q.inbound ? 'in' : 'out'}`, `${q.method} ${q.path}`, c, e, fmtSec(s / c)]), [0, 0, 1, 1, 1])
    : el('p', 'none seen', 'muted'));
  const exits = d.exits.filter((x) => !state.windowS || x.ago <= state.windowS);
  section(body, 'Recent exits and OOM kills', exits.length
    ? table(['ago', 'pid', 'command', 'exit', 'ran'], exits.slice(0, 10).map((x) => [fmtSec(x.ago), x.pid, x.comm,
      x.oom ? 'OOM killed' : x.signal ? `signal ${x.signal}` : `code ${x.code}`, x.oom ? '' : fmtSec(x.duration)]), [1, 1, 0, 0, 1])
    : el('p', 'none', 'muted'));
  const res = [];
  const pick = (name, label, fmt) => { const v = sumRows(fam[name]); if (v !== null) res.push([label, fmt(v)]); };
  pick('container_resources_cpu_usage_seconds_total', 'CPU used since start', fmtSec);
  pick('container_resources_cpu_limit_cores', 'CPU limit', (v) => v + ' cores');
  pick('container_resources_memory_rss_bytes', 'memory (RSS)', fmtBytes);
  pick('container_resources_memory_cache_bytes', 'memory (page cache)', fmtBytes);
  pick('container_resources_memory_limit_bytes', 'memory limit', fmtBytes);
  pick('container_resources_disk_read_bytes_total', 'disk read', fmtBytes);
  pick('container_resources_disk_written_bytes_total', 'disk written', fmtBytes);
  pick('container_oom_kills_total', 'OOM kills', String);
  pick('container_restarts_total', 'restarts', String);
  pick('container_process_starts_total', 'processes started', String);
  section(body, 'Resources', res.length ? table(['', ''], res, [0, 1]) : el('p', 'not read', 'muted'));
}

async function select(sel) {
  state.selected = sel;
  const aside = document.getElementById('details');
  if (aside.hidden) {
    aside.hidden = false;
    cy.resize(); // the map is narrower now: keep it all in view
    cy.fit(undefined, 30);
  }
  showDetails(null);
  if (sel.kind === 'node' && !sel.id.startsWith('dest:')) {
    try {
      const r = await fetch('/api/container/' + encodeURIComponent(sel.id));
      const d = await r.json();
      if (state.selected === sel) { sel.data = d; showDetails(d); }
    } catch (e) {
      if (state.selected === sel) document.getElementById('details-body').appendChild(el('p', 'could not load: ' + e, 'muted'));
    }
  } else {
    showDetails(null);
  }
}

function showDetails(d) {
  const sel = state.selected;
  const body = document.getElementById('details-body');
  body.replaceChildren();
  if (!sel || !state.model) return;
  if (sel.kind === 'edge') {
    const e = [...state.model.edges.values()].find((x) => x.id === sel.id);
    if (e) edgeDetails(body, e);
  } else {
    containerDetails(body, sel.id, d || sel.data);
  }
}

// ---------------------------------------------------------------- updates

function update() {
  const snaps = state.snaps;
  const cur = snaps[snaps.length - 1];
  let base = null;
  if (state.windowS) {
    base = snaps.find((s) => s.t >= cur.t - state.windowS * 1000 && s !== cur) || null;
  }
  state.model = buildModel(cur, base);
  render(state.model);
  if (state.selected) showDetails();
  const status = document.getElementById('status');
  const win = base ? `rates over the last ${Math.round(state.model.seconds)} s` : 'rates since start';
  status.textContent = `live · ${new Date(cur.t).toLocaleTimeString()} · ${win}`;
  status.dataset.updates = String(state.updates);
}

function onMap(ev) {
  const data = JSON.parse(ev.data);
  state.snaps.push({ t: data.now, data });
  while (state.snaps.length > 2 && state.snaps[1].t < data.now - WINDOW_MS) state.snaps.shift();
  state.updates++;
  update();
}

function start() {
  makeGraph();
  window.nodescopeMap = { cy, state, buildModel }; // for the browser test
  document.getElementById('search').addEventListener('input', () => { if (state.model) render(state.model); });
  document.getElementById('idle').addEventListener('change', () => { if (state.model) render(state.model); });
  document.getElementById('search').addEventListener('keydown', (ev) => {
    if (ev.key !== 'Enter') return;
    const n = cy.nodes().filter((x) => !x.isParent() && !x.hasClass('dim'))[0];
    if (n) select({ kind: 'node', id: n.id() });
  });
  document.getElementById('close').addEventListener('click', () => {
    state.selected = null;
    document.getElementById('details').hidden = true;
    cy.resize();
  });
  for (const b of document.querySelectorAll('#window button')) {
    b.addEventListener('click', () => {
      for (const x of document.querySelectorAll('#window button')) x.classList.toggle('on', x === b);
      state.windowS = Number(b.dataset.window);
      if (state.snaps.length) update();
    });
  }
  const es = new EventSource('/api/events');
  es.addEventListener('map', onMap);
  es.onerror = () => { document.getElementById('status').textContent = 'disconnected: retrying…'; };
}

document.addEventListener('DOMContentLoaded', start);
