// rmbus-web's page. Everything it shows comes from the server's event stream (/events): a "snapshot" event
// carries the whole picture (built from the RM's rm.state, rm.nodes, rm.cycle, rm.events and rm.ha), a
// "health" event only the ages and the stale marker between snapshots. Nothing is polled; explain is asked
// only when a job is opened (or again on request).
//
// Updates keep what the reader set up: the tab, the sort order, filters, the selected job or node, the
// expanded rows of the Overview and every scroll position. The long tables (jobs, nodes) draw only the rows
// in view, so 20,000 jobs cost what 30 do.
'use strict';

const ROW_H = 22;
const MAX_EVENTS = 2000;

// Column indexes of the snapshot's array rows (jobs_columns, nodes_columns).
const J = {id: 0, user: 1, cls: 2, status: 3, reason: 4, mb: 5, active: 6, leaving: 7, given: 8, demand: 9,
  fair: 10, pool: 11, preempted: 12, evicted: 13, group: 14, reclaiming: 15};
const N = {node: 0, pool: 1, nodepool: 2, state: 3, mb: 4, quanta: 5, free: 6, missed: 7, shares: 8};

const S = {
  snap: null,            // the last snapshot
  health: null,          // its health, or a newer tick's
  jobIndex: new Map(),   // job id -> index in snap.jobs
  events: [],            // newest first, accumulated over snapshots, by running number
  lastEventId: 0,
  kinds: new Set(),
  tab: 'overview',
  job: null,             // selected job id
  seenJobs: new Set(),   // opened jobs this page has seen in rm.state (only opened ones, so it stays small)
  node: null,            // selected node name
  expanded: new Set(),   // Overview rows opened: "pool|class" and "pool|class|user"
  collapsed: new Set(),  // classes closed by the reader (classes start open)
  explain: {job: null, at: 0, body: null, error: null, pending: false},
  stats: {snapshots: 0, firstRenderMs: null, lastRenderMs: null, lastParseMs: null, lastUpdateMs: null,
    lastSeq: 0, renderedAt: 0, updates: [], renders: []},  // the last 50 of each, for the benchmark
};
window.rmbusWeb = S.stats;  // read by the browser tests and the benchmark

const $ = (id) => document.getElementById(id);

function esc(s) {
  return String(s).replace(/[&<>"']/g, (c) => ({'&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;'}[c]));
}

function fmtAge(ms) {
  if (ms == null) return '-';
  if (ms < 60000) return (ms / 1000).toFixed(1) + 's';
  const m = Math.floor(ms / 60000);
  if (m < 60) return m + 'm' + Math.floor((ms % 60000) / 1000) + 's';
  return Math.floor(m / 60) + 'h' + (m % 60) + 'm';
}
function fmtPeriod(ms) { return ms < 10000 ? ms + ' ms' : fmtAge(ms); }
function fmtMB(mb) { return mb >= 1024 ? (mb / 1024).toFixed(mb % 1024 ? 1 : 0) + ' GB' : mb + ' MB'; }
function fmtTime(ms) { return new Date(ms).toLocaleTimeString(); }
function pct(n, d) { return d > 0 ? Math.round((100 * n) / d) : 0; }

// A stable colour per user: the same user has the same colour on every view and every update.
const userColours = new Map();
function userColour(user) {
  let c = userColours.get(user);
  if (c) return c;
  // FNV-1a, then a finaliser that spreads short, similar names (ann, cho, dee) over the whole circle.
  let h = 2166136261;
  for (let i = 0; i < user.length; i++) h = Math.imul(h ^ user.charCodeAt(i), 16777619);
  h ^= h >>> 16; h = Math.imul(h, 0x85ebca6b); h ^= h >>> 13; h = Math.imul(h, 0xc2b2ae35); h ^= h >>> 16;
  const hue = (h >>> 0) % 360;
  const light = 42 + ((h >>> 9) % 3) * 9;
  c = 'hsl(' + hue + ',62%,' + light + '%)';
  userColours.set(user, c);
  return c;
}

function jobLink(id) { return '<a class="job" data-job="' + esc(id) + '">' + esc(id) + '</a>'; }

// ---------------------------------------------------------------- a table that draws only the rows in view

class VirtualTable {
  // columns: [{key, title, width, num, cell(row) -> html, sort(row) -> comparable}]
  constructor(host, columns, opts) {
    this.host = host;
    this.columns = columns;
    this.opts = opts;  // {rowKey(row), onSelect(row), selectedKey() , rowClass(row)}
    this.rows = [];
    this.sortCol = opts.sortCol || null;
    this.sortDir = 1;
    const tpl = columns.map((c) => c.width).join(' ');
    this.head = document.createElement('div');
    this.head.className = 'vhead';
    this.head.style.gridTemplateColumns = tpl;
    this.head.innerHTML = columns.map((c, i) => '<div data-col="' + i + '" class="' + (c.num ? 'num' : '') + '">' +
      esc(c.title) + '</div>').join('');
    this.body = document.createElement('div');
    this.body.className = 'vbody';
    this.space = document.createElement('div');
    this.space.className = 'vspace';
    this.win = document.createElement('div');
    this.win.className = 'vwin';
    this.space.appendChild(this.win);
    this.body.appendChild(this.space);
    host.appendChild(this.head);
    host.appendChild(this.body);
    this.tpl = tpl;
    this.head.addEventListener('click', (e) => {
      const d = e.target.closest('[data-col]');
      if (!d) return;
      const col = columns[+d.dataset.col];
      if (this.sortCol === col.key) this.sortDir = -this.sortDir;
      else { this.sortCol = col.key; this.sortDir = col.num ? -1 : 1; }
      this.opts.onSort && this.opts.onSort();
    });
    this.body.addEventListener('scroll', () => this.draw());
    this.win.addEventListener('click', (e) => {
      if (e.target.closest('a.job')) return;  // the link's own handler
      const r = e.target.closest('.vrow');
      if (r && this.opts.onSelect) this.opts.onSelect(this.rows[+r.dataset.i]);
    });
  }

  // Sorts by the chosen column with the row key as the tie-break, so equal values never swap between updates.
  setRows(rows) {
    const col = this.columns.find((c) => c.key === this.sortCol);
    if (col) {
      const key = col.sort || ((r) => r[col.key]);
      const dir = this.sortDir;
      const rk = this.opts.rowKey;
      const decorated = rows.map((r) => [key(r), rk(r), r]);
      decorated.sort((a, b) => (a[0] < b[0] ? -dir : a[0] > b[0] ? dir : a[1] < b[1] ? -1 : a[1] > b[1] ? 1 : 0));
      rows = decorated.map((d) => d[2]);
    }
    this.rows = rows;
    for (const d of this.head.children) {
      const c = this.columns[+d.dataset.col];
      d.classList.toggle('sorted-asc', c.key === this.sortCol && this.sortDir > 0);
      d.classList.toggle('sorted-desc', c.key === this.sortCol && this.sortDir < 0);
    }
    this.space.style.height = rows.length * ROW_H + 'px';
    this.draw();
  }

  draw() {
    const top = this.body.scrollTop;
    const first = Math.max(0, Math.floor(top / ROW_H) - 5);
    const last = Math.min(this.rows.length, Math.ceil((top + this.body.clientHeight) / ROW_H) + 5);
    const sel = this.opts.selectedKey ? this.opts.selectedKey() : null;
    let html = '';
    for (let i = first; i < last; i++) {
      const r = this.rows[i];
      const key = this.opts.rowKey(r);
      const cls = 'vrow' + (key === sel ? ' selected' : '') + (this.opts.rowClass ? ' ' + this.opts.rowClass(r) : '');
      html += '<div class="' + cls + '" data-i="' + i + '" data-key="' + esc(key) + '" style="grid-template-columns:' +
        this.tpl + '">';
      for (const c of this.columns) html += '<div class="' + (c.num ? 'num' : '') + '">' + c.cell(r) + '</div>';
      html += '</div>';
    }
    this.win.style.top = first * ROW_H + 'px';
    this.win.innerHTML = html;
  }

  scrollToKey(key) {
    const i = this.rows.findIndex((r) => this.opts.rowKey(r) === key);
    if (i < 0) return;
    const top = i * ROW_H;
    if (top < this.body.scrollTop || top > this.body.scrollTop + this.body.clientHeight - ROW_H)
      this.body.scrollTop = Math.max(0, top - this.body.clientHeight / 2);
    this.draw();
  }
}

// ---------------------------------------------------------------- header

function renderHeader() {
  const h = S.health;
  if (!h) return;
  $('stale').hidden = !h.stale;
  // The RM says why it runs no rounds: idle (no work map), starting (its start-up window), or stuck (a round
  // overdue). An idle RM is shown as such, not as a dead one; STALE is then its word not coming.
  const why = h.not_scheduling;
  const idle = $('idle');
  idle.hidden = !why || h.stale;
  if (why) {
    idle.textContent = why.reason === 'starting' ? 'STARTING' : why.reason === 'round_overdue' ? 'STUCK' : 'IDLE';
    idle.className = 'badge idle' + (why.reason === 'round_overdue' ? ' stuck' : '');
    idle.title = why.text;
  }
  $('hdr-why').textContent = why ? why.text : '';
  $('hdr-cycle').textContent = h.cycle == null ? 'no rm.state yet' : 'cycle ' + h.cycle;
  $('hdr-age').textContent = h.state_age_ms == null ? '' : 'rm.state ' + fmtAge(h.state_age_ms) + ' ago' +
    (h.round_interval_ms != null ? ' (rounds every ' + fmtPeriod(h.round_interval_ms) + ')' : '');
  let ha = '';
  if (h.ha) {
    ha = 'HA ' + (h.ha.state || '?');
    if (h.ha.epoch != null) ha += ', epoch ' + h.ha.epoch;
    if (h.ha.rank != null) ha += ', rank ' + h.ha.rank;
  }
  $('hdr-ha').textContent = ha;
  $('hdr-counts').textContent = (h.jobs != null ? h.jobs + ' jobs' : '') + (h.nodes != null ? ', ' + h.nodes + ' nodes' : '');
  $('hdr-src').textContent = h.endpoint + (h.src ? ' from ' + h.src : '');
}

// ---------------------------------------------------------------- Overview

function overviewRow(cls, key, name, r, extra) {
  const below = r.below ? ' below' : '';
  return '<tr class="' + cls + below + '" data-key="' + esc(key) + '"><td>' + name + '</td><td>' + r.jobs + '</td><td>' +
    r.active + '</td><td class="given">' + r.given + '</td><td>' + r.demand + '</td><td>' + r.fair_share +
    '</td><td class="reason">' + (extra != null ? extra : r.below ? esc(r.reason || 'below fair share') : '') + '</td></tr>';
}

function renderOverview() {
  const s = S.snap;
  $('waiting').hidden = !!(s && s.health.cycle != null);
  if (!s) return;
  let html = '';
  for (const p of s.pools) {
    const used = p.quanta - p.free_quanta;
    const span = p.rate_span_ms < 60000 ? ' <span class="dim">(over ' + fmtAge(p.rate_span_ms) + ')</span>' : '';
    html += '<div class="pool" data-pool="' + esc(p.pool) + '"><div class="pool-head"><span class="name">' +
      esc(p.pool || '(pool not known yet)') + '</span>';
    if (p.pool) {
      html += '<span>' + p.up + ' of ' + p.nodes + ' nodes up' + (p.missing ? ', ' + p.missing + ' missing' : '') +
        (p.down ? ', ' + p.down + ' down' : '') + '</span><span>utilisation <span class="util"><i style="width:' +
        pct(used, p.quanta) + '%"></i></span> ' + pct(used, p.quanta) + '% (' + used + ' of ' + p.quanta +
        ' quanta)</span><span>preemptions ' + p.preempted_last_min + '/min, evictions ' + p.evicted_last_min +
        '/min' + span + '</span>';
    }
    html += '</div><table class="tree"><thead><tr><th>class / user / job</th><th>jobs</th><th>active</th>' +
      '<th>awarded</th><th>demand</th><th>fair share</th><th class="reason">reason when below</th></tr></thead><tbody>';
    for (const c of p.classes) {
      const ck = p.pool + '|' + c.name;
      const open = !S.collapsed.has(ck);
      html += overviewRow('class', ck, '<span class="tw" data-toggle="' + esc(ck) + '">' + (open ? '▾' : '▸') +
        '</span>' + esc(c.name || '(no class)'), c);
      if (!open) continue;
      for (const u of c.users) {
        const uk = ck + '|' + u.name;
        const uopen = S.expanded.has(uk);
        html += overviewRow('user', uk, '<span class="tw" data-toggle="' + esc(uk) + '">' + (uopen ? '▾' : '▸') +
          '</span>' + esc(u.name || '-'), u);
        if (!uopen) continue;
        for (const ji of u.job_indexes) {
          const j = s.jobs[ji];
          const r = {jobs: 1, active: j[J.active], given: j[J.given], demand: j[J.demand], fair_share: j[J.fair],
            below: j[J.given] < Math.min(j[J.demand], j[J.fair])};
          html += overviewRow('job', uk + '|' + j[J.id], jobLink(j[J.id]) + ' <span class="dim">' + esc(j[J.status]) +
            '</span>', r, esc(j[J.reason]));
        }
      }
    }
    html += '</tbody></table></div>';
  }
  $('pools').innerHTML = html;
}

$('pools').addEventListener('click', (e) => {
  const t = e.target.closest('[data-toggle]');
  if (!t) return;
  const key = t.dataset.toggle;
  if (key.split('|').length === 2) {
    if (S.collapsed.has(key)) S.collapsed.delete(key); else S.collapsed.add(key);
  } else if (S.expanded.has(key)) S.expanded.delete(key); else S.expanded.add(key);
  renderOverview();
});

// ---------------------------------------------------------------- Machines

function shareBar(node) {
  const q = node[N.quanta];
  if (!q) return '';
  let html = '<div class="bar" title="' + esc(node[N.node]) + '">';
  for (const [ji, quanta, st] of node[N.shares]) {
    const j = S.snap.jobs[ji];
    html += '<i class="' + (st === 'p' || st === 'e' ? 'leaving' : '') + '" style="width:' + (100 * quanta) / q +
      '%;background-color:' + userColour(j[J.user]) + '" title="' + esc(j[J.id] + ' (' + j[J.user] + '), ' + quanta +
      ' quanta') + '"></i>';
  }
  return html + '</div>';
}

const machineTable = new VirtualTable($('m-table'), [
  {key: N.node, title: 'node', width: 'minmax(120px,1.3fr)', cell: (n) => esc(n[N.node])},
  {key: N.pool, title: 'pool', width: 'minmax(80px,1fr)', cell: (n) => esc(n[N.pool])},
  {key: N.nodepool, title: 'nodepool', width: 'minmax(80px,1fr)', cell: (n) => esc(n[N.nodepool])},
  {key: N.state, title: 'state', width: '90px', cell: (n) => '<span class="state-' + esc(n[N.state]) + '">' +
    esc(n[N.state]) + '</span>'},
  {key: N.mb, title: 'memory', width: '80px', num: true, cell: (n) => fmtMB(n[N.mb])},
  {key: 'used', title: 'used', width: '60px', num: true, sort: (n) => n[N.quanta] - n[N.free],
    cell: (n) => n[N.quanta] - n[N.free]},
  {key: N.free, title: 'free', width: '60px', num: true, cell: (n) => n[N.free]},
  {key: N.quanta, title: 'quanta', width: '70px', num: true, cell: (n) => n[N.quanta]},
  {key: N.missed, title: 'missed', width: '70px', num: true, cell: (n) => n[N.missed]},
  {key: 'shares', title: 'shares (coloured by user)', width: 'minmax(200px,3fr)', sort: (n) => n[N.shares].length,
    cell: shareBar},
], {rowKey: (n) => n[N.node], selectedKey: () => S.node, sortCol: N.node,
  onSort: () => renderMachines(), onSelect: (n) => { S.node = n[N.node]; renderMachines(); }});

function fillSelect(sel, values) {
  const have = new Set([...sel.options].map((o) => o.value));
  for (const v of values) if (!have.has(v)) sel.add(new Option(v, v));
}

function filteredNodes() {
  const pool = $('m-pool').value, state = $('m-state').value, text = $('m-text').value.trim().toLowerCase();
  return S.snap.nodes.filter((n) => (!pool || n[N.pool] === pool) && (!state || n[N.state] === state) &&
    (!text || n[N.node].toLowerCase().includes(text)));
}

function renderMachines() {
  const s = S.snap;
  if (!s) return;
  fillSelect($('m-pool'), [...new Set(s.nodes.map((n) => n[N.pool]))].sort());
  fillSelect($('m-state'), ['up', 'missing', 'down', 'varied_off', 'quiesced', 'blacklisted']);
  const nodes = filteredNodes();
  $('m-count').textContent = nodes.length + ' of ' + s.nodes.length + ' nodes';
  machineTable.setRows(nodes);
  drawViz(nodes);
  const d = $('m-detail');
  const n = S.node && s.nodes.find((x) => x[N.node] === S.node);
  if (!n) { d.hidden = true; return; }
  d.hidden = false;
  let html = '<h3>' + esc(n[N.node]) + ' <span class="dim">' + esc(n[N.state]) + ', ' + fmtMB(n[N.mb]) + ', ' +
    (n[N.quanta] - n[N.free]) + ' of ' + n[N.quanta] + ' quanta used</span></h3><table class="plain"><tr><th>job</th>' +
    '<th>user</th><th>quanta</th><th>status</th></tr>';
  for (const [ji, q, st] of n[N.shares]) {
    const j = s.jobs[ji];
    html += '<tr><td>' + jobLink(j[J.id]) + '</td><td>' + esc(j[J.user]) + '</td><td>' + q + '</td><td>' +
      ({r: 'running', n: 'new', p: 'preempt', e: 'evict'}[st] || st) + '</td></tr>';
  }
  d.innerHTML = html + '</table>';
}

for (const id of ['m-pool', 'm-state', 'm-text']) $(id).addEventListener('input', () => renderMachines());

// The memory picture: one box per host, as wide as its memory (quanta), a block per share coloured by its
// user, free quanta white. Boxes flow in rows; the scale is chosen so the whole cluster fits a few screens.
let vizBoxes = [];
function drawViz(nodes) {
  const canvas = $('viz');
  const width = Math.max(400, $('viz-wrap').clientWidth - 2);
  const totalQ = nodes.reduce((a, n) => a + Math.max(1, n[N.quanta]), 0);
  const boxH = nodes.length > 2000 ? 10 : nodes.length > 300 ? 16 : 26;
  const gap = nodes.length > 2000 ? 1 : 3;
  // Width per quantum: fill about 6 screens' rows at most, never under 1 px.
  const rowsWanted = Math.max(1, Math.min(Math.ceil(nodes.length / 8), 2400 / (boxH + gap)));
  const unit = Math.max(0.25, Math.min(12, (width * rowsWanted) / Math.max(1, totalQ) * 0.9));
  let x = gap, y = gap;
  vizBoxes = [];
  for (const n of nodes) {
    const w = Math.max(3, Math.round(Math.max(1, n[N.quanta]) * unit));
    if (x + w > width - gap && x > gap) { x = gap; y += boxH + gap; }
    vizBoxes.push([x, y, w, n]);
    x += w + gap;
  }
  const height = y + boxH + gap;
  if (canvas.width !== width || canvas.height !== height) { canvas.width = width; canvas.height = height; }
  vizBoxH = boxH;
  paintViz();
}

// Paints only the rows of boxes scrolled into view (at 10,000 hosts the picture is several screens tall);
// scrolling paints the rest as it comes into view.
let vizBoxH = 26;
function paintViz() {
  const canvas = $('viz'), wrap = $('viz-wrap'), boxH = vizBoxH;
  const top = wrap.scrollTop - boxH, bottom = wrap.scrollTop + wrap.clientHeight + boxH;
  const g = canvas.getContext('2d');
  g.clearRect(0, Math.max(0, top), canvas.width, bottom - Math.max(0, top));
  const jobs = S.snap.jobs;
  for (const [bx, by, w, n] of vizBoxes) {
    if (by < top || by > bottom) continue;
    const q = Math.max(1, n[N.quanta]);
    g.fillStyle = '#ffffff';
    g.fillRect(bx, by, w, boxH);
    let sx = bx;
    for (const [ji, quanta, st] of n[N.shares]) {
      const sw = (w * quanta) / q;
      g.fillStyle = userColour(jobs[ji][J.user]);
      g.fillRect(sx, by, sw, boxH);
      if (st === 'p' || st === 'e') { g.fillStyle = 'rgba(0,0,0,0.35)'; g.fillRect(sx, by + boxH / 2, sw, boxH / 2); }
      if (sw >= 3) { g.fillStyle = 'rgba(255,255,255,0.7)'; g.fillRect(sx + sw - 1, by, 1, boxH); }
      sx += sw;
    }
    const st = n[N.state];
    g.strokeStyle = st === 'up' ? '#9ca3af' : st === 'missing' ? '#d97706' : '#dc2626';
    g.lineWidth = st === 'up' ? 1 : 2;
    g.strokeRect(bx + 0.5, by + 0.5, w - 1, boxH - 1);
    if (n[N.node] === S.node) { g.strokeStyle = '#1d4ed8'; g.lineWidth = 2; g.strokeRect(bx - 1, by - 1, w + 2, boxH + 2); }
  }
}

function vizHit(e) {
  const r = $('viz').getBoundingClientRect();
  const x = e.clientX - r.left, y = e.clientY - r.top;
  return vizBoxes.find(([bx, by, w]) => x >= bx && x < bx + w && y >= by && y < by + vizBoxH);
}
$('viz').addEventListener('mousemove', (e) => {
  const hit = vizHit(e), tip = $('viz-tip');
  if (!hit) { tip.hidden = true; return; }
  const n = hit[3];
  tip.hidden = false;
  tip.textContent = n[N.node] + ' (' + n[N.state] + ')\n' + fmtMB(n[N.mb]) + ', ' + (n[N.quanta] - n[N.free]) + ' of ' +
    n[N.quanta] + ' quanta used, ' + n[N.shares].length + ' shares';
  tip.style.left = (e.offsetX + 14) + 'px';
  tip.style.top = (e.offsetY + 10) + 'px';
});
$('viz').addEventListener('mouseleave', () => { $('viz-tip').hidden = true; });
let vizPaintQueued = false;
$('viz-wrap').addEventListener('scroll', () => {
  if (vizPaintQueued || !S.snap) return;
  vizPaintQueued = true;
  requestAnimationFrame(() => { vizPaintQueued = false; paintViz(); });
});
$('viz').addEventListener('click', (e) => {
  const hit = vizHit(e);
  if (!hit) return;
  S.node = hit[3][N.node];
  renderMachines();
  machineTable.scrollToKey(S.node);
});

// ---------------------------------------------------------------- Jobs and the job view

const jobTable = new VirtualTable($('j-table'), [
  {key: J.id, title: 'job', width: 'minmax(110px,1.2fr)', cell: (j) => jobLink(j[J.id])},
  {key: J.user, title: 'user', width: 'minmax(70px,.8fr)', cell: (j) => '<i class="sw" style="background:' +
    userColour(j[J.user]) + ';margin:0 4px 0 0"></i>' + esc(j[J.user])},
  {key: J.cls, title: 'class', width: 'minmax(70px,.8fr)', cell: (j) => esc(j[J.cls])},
  {key: J.pool, title: 'pool', width: 'minmax(70px,.8fr)', cell: (j) => esc(j[J.pool])},
  {key: J.status, title: 'status', width: '80px', cell: (j) => '<span class="st-' + j[J.status] + '">' + j[J.status] + '</span>'},
  {key: J.mb, title: 'MB/proc', width: '78px', num: true, cell: (j) => j[J.mb]},
  {key: J.active, title: 'active', width: '62px', num: true, cell: (j) => j[J.active]},
  {key: J.leaving, title: 'leaving', width: '66px', num: true, cell: (j) => j[J.leaving]},
  {key: J.given, title: 'awarded', width: '76px', num: true, cell: (j) => j[J.given]},
  {key: J.demand, title: 'demand', width: '72px', num: true, cell: (j) => j[J.demand]},
  {key: J.fair, title: 'fair', width: '50px', num: true, cell: (j) => j[J.fair]},
  {key: J.preempted, title: 'preempted', width: '90px', num: true, cell: (j) => j[J.preempted]},
  {key: J.reason, title: 'reason', width: 'minmax(150px,3fr)', cell: (j) => esc(j[J.reason])},
], {rowKey: (j) => j[J.id], selectedKey: () => S.job, onSort: () => renderJobs(),
  onSelect: (j) => openJob(j[J.id], false)});

function renderJobs() {
  const s = S.snap;
  if (!s) return;
  const status = $('j-status').value, text = $('j-text').value.trim().toLowerCase();
  const rows = !status && !text ? s.jobs : s.jobs.filter((j) => (!status || j[J.status] === status) && (!text ||
    j[J.id].toLowerCase().includes(text) || j[J.user].toLowerCase().includes(text) ||
    j[J.cls].toLowerCase().includes(text) || j[J.reason].toLowerCase().includes(text)));
  $('j-count').textContent = rows.length + ' of ' + s.jobs.length + ' jobs';
  jobTable.setRows(rows);
  renderJob();
}
for (const id of ['j-status', 'j-text']) $(id).addEventListener('input', () => renderJobs());

function openJob(id, scroll) {
  S.job = id;
  if (S.jobIndex.has(id)) S.seenJobs.add(id);
  if (location.hash !== '#job=' + encodeURIComponent(id)) history.replaceState(null, '', '#job=' + encodeURIComponent(id));
  showTab('jobs');
  if (scroll) jobTable.scrollToKey(id);
  else jobTable.draw();
  askExplain();
}

function renderJob() {
  const box = $('job');
  const s = S.snap;
  if (!S.job || !s) { box.hidden = true; return; }
  box.hidden = false;
  const i = S.jobIndex.get(S.job);
  if (i == null) {
    // Nothing of another job may stay on screen: facts, shares and their count all go.
    const gone = S.seenJobs.has(S.job);
    $('job-title').textContent = 'Job ' + S.job + (gone ? ' (no longer in rm.state)' : ' (not known)');
    $('job-facts').innerHTML = '<div class="dim">' + (gone ? 'The RM no longer lists this job: it finished or was withdrawn.'
      : 'The RM has not listed this job in rm.state since this page opened.') + '</div>';
    $('job-share-count').textContent = '';
    $('job-shares').innerHTML = '<div class="dim">none</div>';
    renderExplain();
    return;
  }
  $('job-title').textContent = 'Job ' + S.job;
  const j = s.jobs[i];
  const f = [['user', esc(j[J.user])], ['class', esc(j[J.cls])], ['pool', esc(j[J.pool] || '-')],
    ['status', esc(j[J.status])], ['memory per process', fmtMB(j[J.mb])], ['awarded (How Much)', j[J.given]],
    ['active', j[J.active]], ['leaving', j[J.leaving]], ['demand', j[J.demand]], ['fair share', j[J.fair]],
    ['preempted / evicted seen', j[J.preempted] + ' / ' + j[J.evicted]], ['group', esc(j[J.group] || '-')],
    ['reason', esc(j[J.reason] || '-')]];
  $('job-facts').innerHTML = '<dl class="facts">' + f.map(([k, v]) => '<dt>' + k + '</dt><dd>' + v + '</dd>').join('') + '</dl>';
  // Where its shares run: every node listing a share of this job.
  const rows = [];
  for (const n of s.nodes)
    for (const [ji, q, st] of n[N.shares])
      if (ji === i) rows.push([n[N.node], n[N.nodepool], n[N.state], q, st]);
  $('job-share-count').textContent = rows.length + ' shares on ' + new Set(rows.map((r) => r[0])).size + ' nodes';
  const names = {r: 'running', n: 'new', p: 'preempt', e: 'evict'};
  $('job-shares').innerHTML = rows.length ? '<table class="plain"><tr><th>node</th><th>nodepool</th><th>node state</th>' +
    '<th>quanta</th><th>status</th></tr>' + rows.slice(0, 500).map((r) => '<tr><td>' + esc(r[0]) + '</td><td>' +
    esc(r[1]) + '</td><td class="state-' + esc(r[2]) + '">' + esc(r[2]) + '</td><td>' + r[3] + '</td><td>' +
    (names[r[4]] || r[4]) + '</td></tr>').join('') + '</table>' + (rows.length > 500 ? '<div class="dim">first 500 shown</div>' : '')
    : '<div class="dim">none</div>';
  renderExplain();
}

function askExplain() {
  const job = S.job;
  const ex = S.explain;
  if (!job || (ex.job === job && (ex.pending || ex.body || ex.error))) { renderExplain(); return; }
  if (S.health && !S.health.admin) {
    Object.assign(ex, {job, pending: false, body: null, error: 'explain needs the admin endpoint: start rmbus-web with --admin'});
    renderExplain();
    return;
  }
  Object.assign(ex, {job, pending: true, body: null, error: null});
  renderExplain();
  fetch('/api/explain?job=' + encodeURIComponent(job)).then((r) => r.json()).then((b) => {
    if (ex.job !== job) return;
    Object.assign(ex, {pending: false, at: Date.now(), body: b.ok ? b.results : null, error: b.ok ? null : b.error});
    renderExplain();
  }).catch((e) => {
    if (ex.job !== job) return;
    Object.assign(ex, {pending: false, at: Date.now(), body: null, error: String(e)});
    renderExplain();
  });
}
$('job-explain-again').addEventListener('click', () => { S.explain.job = null; askExplain(); });

function estimateRows(title, e, keys) {
  if (!e) return '';
  let html = '<tr><th colspan="2">' + title + '</th></tr>';
  for (const k of keys) {
    if (e[k] == null) continue;
    let v = e[k];
    if (k.endsWith('_at_ms') || k === 'at_ms') v = fmtTime(v) + ' (' + new Date(v).toISOString() + ')';
    else if (k.endsWith('_in_ms') || k === 'in_ms') v = fmtAge(v);
    else if (Array.isArray(v)) v = v.join(', ');
    html += '<tr><td>' + esc(k) + '</td><td style="text-align:left">' + esc(v) + '</td></tr>';
  }
  return html;
}

function renderExplain() {
  const ex = S.explain, out = $('job-explain');
  $('job-explain-when').textContent = ex.at && ex.job === S.job && !ex.pending ? 'as of ' + fmtTime(ex.at) : '';
  if (ex.job !== S.job) { out.innerHTML = ''; return; }
  if (ex.pending) { out.innerHTML = '<div class="dim">asking the RM...</div>'; return; }
  if (ex.error) { out.innerHTML = '<div class="error" id="explain-error">' + esc(ex.error) + '</div>'; return; }
  const e = ex.body && ex.body.explanation;
  if (!e) { out.innerHTML = ''; return; }
  let html = '<div id="explain-ok">pool <b>' + esc(ex.body.pool || '-') + '</b>: cap ' + esc(e.cap) + ' (decided by ' +
    esc(e.cap_decided_by) + '), pure fair share ' + esc(e.pure_fair_share) + ', given ' + esc(e.given) + ', placed ' +
    esc(e.placed) + ', reason <b>' + esc(e.reason) + '</b></div>';
  if (e.blocked) html += '<div>blocked: ' + esc(e.blocked) + '</div>';
  html += '<table class="plain">' + estimateRows('estimated end', e.estimated_end, ['at_ms', 'in_ms', 'items_left',
    'processes', 'threads', 'item_ms', 'basis']) + estimateRows('estimated start', e.estimated_start, ['first_at_ms',
    'first_in_ms', 'all_at_ms', 'all_in_ms', 'processes', 'free_quanta_now', 'preemptions', 'reclaims', 'jobs_ending',
    'basis']) + '</table>';
  html += '<pre class="explain">' + esc(e.text || '') + '</pre>';
  out.innerHTML = html;
}

// ---------------------------------------------------------------- Events

function takeEvents(list) {
  // list: [id, age_ms, kind, text], newest first; append what is newer than what we hold.
  const now = S.health ? S.health.now_ms : Date.now();
  const fresh = [];
  for (const [id, age, kind, text] of list) {
    if (id <= S.lastEventId) break;
    fresh.push({id, at: now - age, kind, text});
    S.kinds.add(kind);
  }
  if (!fresh.length) return 0;
  S.lastEventId = fresh[0].id;
  S.events = fresh.concat(S.events).slice(0, MAX_EVENTS);
  return fresh.length;
}

function eventMatches(e, kind, text) {
  return (!kind || e.kind === kind) && (!text || e.text.toLowerCase().includes(text) || e.kind.includes(text));
}

function renderEvents(added) {
  fillSelect($('e-kind'), [...S.kinds].sort());
  const kind = $('e-kind').value, text = $('e-text').value.trim().toLowerCase();
  const list = $('e-list');
  const shown = S.events.filter((e) => eventMatches(e, kind, text));
  // Keep the reader's place: new events go on top, so a reader scrolled down is moved by what was added.
  const before = list.scrollTop;
  const addedShown = added ? S.events.slice(0, added).filter((e) => eventMatches(e, kind, text)).length : 0;
  list.innerHTML = shown.slice(0, 1000).map((e) => '<div class="ev k-' + esc(e.kind) + '"><span class="dim">' +
    fmtTime(e.at) + '</span><span class="kind">' + esc(e.kind) + '</span><span>' + esc(e.text) + '</span></div>').join('');
  if (before > 0 && addedShown) list.scrollTop = before + addedShown * (list.firstChild ? list.firstChild.offsetHeight : 20);
  $('e-count').textContent = shown.length + ' of ' + S.events.length + ' events kept (the last ' + MAX_EVENTS + ')';
}
for (const id of ['e-kind', 'e-text']) $(id).addEventListener('input', () => renderEvents(0));

// ---------------------------------------------------------------- Health

function renderHealth() {
  const h = S.health;
  if (!h) return;
  const card = (title, big, sub, bad) => '<div class="card' + (bad ? ' bad' : '') + '"><div class="dim">' + title +
    '</div><div class="big">' + big + '</div><div>' + (sub || '') + '</div></div>';
  let html = '<div class="cards">';
  html += card('last round', h.cycle == null ? '-' : 'cycle ' + h.cycle, h.state_age_ms == null ? 'no rm.state yet' :
    'rm.state ' + fmtAge(h.state_age_ms) + ' ago', false);
  html += card('round period', h.round_interval_ms == null ? '-' : fmtPeriod(h.round_interval_ms), 'time between the last two rm.state', false);
  const why = h.not_scheduling;
  if (why)
    html += card('RM', h.stale ? '<span id="health-stale">STALE</span>' : '<span id="health-why">' +
      (why.reason === 'starting' ? 'starting' : why.reason === 'round_overdue' ? 'stuck' : 'idle') + '</span>',
      h.stale ? 'its word on why it runs no rounds stopped coming' : esc(why.text), h.stale || why.reason === 'round_overdue');
  else
    html += card('RM', h.stale ? '<span id="health-stale">STALE</span>' : 'publishing', h.stale ?
      'no rm.state for more than 3 round periods' : h.src || '', h.stale);
  html += card('HA', h.ha ? esc(h.ha.state || '?') : 'no rm.ha', h.ha ? 'epoch ' + (h.ha.epoch != null ? h.ha.epoch : '-') +
    ', rank ' + (h.ha.rank != null ? h.ha.rank : '-') + '<br>' + esc(h.ha.instance || '') : 'this RM sends no HA beacon', false);
  const b = h.bus;
  html += card('bus (this monitor)', b.received + ' messages', b.gaps + ' gaps (' + b.missing + ' missing), ' + b.restarts +
    ' restarts, ' + b.bad_messages + ' bad', b.bad_messages > 0);
  if (h.last_build_ms != null)
    html += card('this page\'s data', (h.last_bytes / 1e6).toFixed(2) + ' MB', 'a snapshot takes ' + h.last_build_ms +
      ' ms to build in rmbus-web', false);
  html += '</div><h3>Last round per pool</h3><table class="plain"><tr><th>pool</th><th>cycle</th><th>jobs</th>' +
    '<th>nodes</th><th>given</th><th>preempted</th><th>evicted</th><th>How Much µs</th><th>What Of µs</th>' +
    '<th>preempt µs</th><th>defrag µs</th><th>round time</th><th>age</th><th></th></tr>';
  for (const c of h.cycles)
    html += '<tr><td>' + esc(c.pool) + '</td><td>' + c.cycle + '</td><td>' + c.jobs + '</td><td>' + c.nodes + '</td><td>' +
      c.given + '</td><td>' + c.preempted + '</td><td>' + c.evicted + '</td><td>' + c.how_much_us + '</td><td>' +
      c.what_of_us + '</td><td>' + c.preempt_us + '</td><td>' + c.defrag_us + '</td><td><b>' + (c.total_us / 1000).toFixed(1) +
      ' ms</b></td><td>' + fmtAge(c.age_ms) + '</td><td class="error">' + (c.behind ? 'behind' : '') + '</td></tr>';
  html += '</table><h3>Messages by topic</h3><table class="plain">';
  for (const [t, n] of Object.entries(b.by_topic)) html += '<tr><td>' + esc(t) + '</td><td>' + n + '</td></tr>';
  html += '</table><h3>rm.events by kind</h3><table class="plain">';
  for (const [k, n] of Object.entries(h.events_by_kind)) html += '<tr><td>' + esc(k) + '</td><td>' + n + '</td></tr>';
  $('health').innerHTML = html + '</table>';
}

// ---------------------------------------------------------------- tabs, stream

function showTab(tab) {
  S.tab = tab;
  for (const a of document.querySelectorAll('#tabs a')) a.classList.toggle('active', a.dataset.tab === tab);
  for (const v of document.querySelectorAll('.view')) v.hidden = v.id !== 'view-' + tab;
  renderTab(0);
}

function renderTab(addedEvents) {
  renderHeader();
  if (S.tab === 'overview') renderOverview();
  else if (S.tab === 'machines') renderMachines();
  else if (S.tab === 'jobs') renderJobs();
  else if (S.tab === 'events') renderEvents(addedEvents);
  else if (S.tab === 'health') renderHealth();
}

function route() {
  const h = decodeURIComponent(location.hash.slice(1));
  if (h.startsWith('job=')) { openJob(h.slice(4), true); return; }
  showTab(['overview', 'machines', 'jobs', 'events', 'health'].includes(h) ? h : 'overview');
}
window.addEventListener('hashchange', route);
document.addEventListener('click', (e) => {
  const a = e.target.closest('a.job');
  if (!a) return;
  e.preventDefault();
  openJob(a.dataset.job, true);
});

function onSnapshot(ev) {
  const t0 = performance.now();
  const snap = JSON.parse(ev.data);
  const t1 = performance.now();
  S.snap = snap;
  S.health = snap.health;
  S.jobIndex = new Map(snap.jobs.map((j, i) => [j[J.id], i]));
  if (S.job && S.jobIndex.has(S.job)) S.seenJobs.add(S.job);
  const added = takeEvents(snap.events);
  renderTab(added);
  const t2 = performance.now();
  const st = S.stats;
  st.snapshots++;
  st.lastSeq = snap.seq;
  st.lastParseMs = t1 - t0;
  st.lastRenderMs = t2 - t0;
  st.renders.push([S.tab, t2 - t0]);
  if (st.renders.length > 50) st.renders.shift();
  // From the rm.state's arrival at rmbus-web to this page drawn: its age when the snapshot was built, plus the
  // time since then (the server's and this browser's clocks are the same machine's in the benchmark).
  requestAnimationFrame(() => {
    st.renderedAt = Date.now();
    // Only a snapshot that brings a new round times an update (others were built for rm.nodes or events).
    const fresh = snap.health.cycle != null && snap.health.cycle !== st.lastCycle;
    st.lastCycle = snap.health.cycle;
    if (fresh && snap.health.state_age_ms != null) {
      st.lastUpdateMs = snap.health.state_age_ms + (Date.now() - snap.health.now_ms);
      st.updates.push([S.tab, st.lastUpdateMs]);
      if (st.updates.length > 50) st.updates.shift();
    }
    if (st.firstRenderMs == null && snap.health.cycle != null) st.firstRenderMs = performance.now();
  });
}

function connect() {
  const es = new EventSource('/events');
  es.addEventListener('open', () => { $('conn').textContent = 'live'; $('conn').className = 'badge on'; });
  es.addEventListener('error', () => { $('conn').textContent = 'reconnecting'; $('conn').className = 'badge off'; });
  es.addEventListener('snapshot', onSnapshot);
  es.addEventListener('health', (ev) => {
    S.health = JSON.parse(ev.data).health;
    renderHeader();
    if (S.tab === 'health') renderHealth();
  });
}

route();
connect();
