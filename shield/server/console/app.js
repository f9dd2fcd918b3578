// Shield web console. Talks to the JSON API of the appliance that serves it, with the identity
// the browser presents: a bearer token (session storage, Authorization header; never a cookie)
// or a client certificate. Everything that comes from calls is shown with textContent, never
// parsed as markup.
'use strict';

const state = {
  token: sessionStorage.getItem('shield.token') || '',
  who: null,
  approvals: new Map(), // id → Approval (preview)
  selected: null,
  stream: null,
  auditNext: '',
  lastStatus: null,
  rates: [],
};

const $ = (id) => document.getElementById(id);

function el(tag, attrs, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (k === 'class') e.className = v;
    else if (k === 'dataset') Object.assign(e.dataset, v);
    else if (k.startsWith('on')) e.addEventListener(k.slice(2), v);
    else e.setAttribute(k, v);
  }
  for (const c of children) {
    if (c === null || c === undefined) continue;
    e.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return e;
}

function clear(node) { while (node.firstChild) node.removeChild(node.firstChild); }

function headers(json) {
  const h = {};
  if (state.token) h['Authorization'] = 'Bearer ' + state.token;
  if (json) h['Content-Type'] = 'application/json';
  return h;
}

async function api(method, path, body) {
  const resp = await fetch(path, {
    method, headers: headers(body !== undefined), credentials: 'same-origin', cache: 'no-store',
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await resp.text();
  let data = null;
  try { data = text ? JSON.parse(text) : null; } catch (e) { data = { message: text }; }
  if (!resp.ok) {
    const err = new Error((data && data.message) || resp.statusText);
    err.status = resp.status;
    throw err;
  }
  return data;
}

function hasRole(r) { return state.who && (state.who.roles.includes(r) || state.who.roles.includes('admin')); }

// ---- login ----

async function login() {
  $('login-error').textContent = '';
  try {
    state.who = await api('GET', '/v1/whoami');
  } catch (e) {
    state.who = null;
    $('login-error').textContent = 'Sign-in failed: ' + e.message;
    return;
  }
  $('login').hidden = true;
  $('app').hidden = false;
  $('nav').hidden = false;
  $('logout').hidden = false;
  $('who').textContent = state.who.identity + ' (' + (state.who.roles.join(', ') || 'no roles') + ')';
  showTab(location.hash.startsWith('#audit') ? 'audit' : location.hash.startsWith('#bundle') ? 'bundle' : 'approvals');
  if (state.who.approvals && hasRole('approver')) startStream();
  pollStatus();
  setInterval(pollStatus, 2000);
  const m = location.hash.match(/^#approval\/(apr_[0-9a-f]+)$/);
  if (m) selectApproval(m[1]);
}

$('login-token').addEventListener('click', () => {
  state.token = $('token').value.trim();
  $('token').value = '';
  if (state.token) sessionStorage.setItem('shield.token', state.token);
  login();
});
$('token').addEventListener('keydown', (e) => { if (e.key === 'Enter') $('login-token').click(); });
$('login-cert').addEventListener('click', () => { state.token = ''; sessionStorage.removeItem('shield.token'); login(); });
$('logout').addEventListener('click', () => { sessionStorage.removeItem('shield.token'); location.hash = ''; location.reload(); });

// ---- tabs ----

function showTab(name) {
  for (const v of ['approvals', 'audit', 'bundle']) {
    $('view-' + v).hidden = v !== name;
    $('tab-' + v).classList.toggle('active', v === name);
  }
  if (name === 'audit') { loadChain(); searchAudit(false); }
  if (name === 'bundle') loadBundle();
}
for (const b of document.querySelectorAll('.tab')) b.addEventListener('click', () => showTab(b.dataset.tab));

// ---- approvals ----

// startStream reads the server-sent events of /v1/approvals/events with fetch (EventSource
// cannot send an Authorization header), and reconnects after a pause when the stream ends.
async function startStream() {
  $('stream-state').textContent = '(connecting)';
  try {
    const resp = await fetch('/v1/approvals/events', { headers: headers(false), cache: 'no-store' });
    if (!resp.ok) throw new Error('HTTP ' + resp.status);
    $('stream-state').textContent = '(live)';
    const reader = resp.body.getReader();
    const dec = new TextDecoder();
    let buf = '';
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buf += dec.decode(value, { stream: true });
      let i;
      while ((i = buf.indexOf('\n\n')) >= 0) {
        const block = buf.slice(0, i);
        buf = buf.slice(i + 2);
        const data = block.split('\n').filter((l) => l.startsWith('data: ')).map((l) => l.slice(6)).join('\n');
        if (data) onApproval(JSON.parse(data));
      }
    }
  } catch (e) {
    $('stream-state').textContent = '(disconnected: ' + e.message + ')';
  }
  $('stream-state').textContent = '(reconnecting)';
  setTimeout(startStream, 3000);
}

function onApproval(a) {
  const before = state.approvals.get(a.id);
  state.approvals.set(a.id, Object.assign(before || {}, a));
  renderQueue();
  // The open request is drawn again only when its state changed (not under the approver's cursor
  // for every event).
  if (state.selected === a.id && state.shownState !== a.state) selectApproval(a.id);
}

function renderQueue() {
  const q = $('queue');
  clear(q);
  const all = $('show-resolved').checked;
  const list = [...state.approvals.values()]
    .filter((a) => all || a.state === 'pending' || (a.state === 'approved' && a.grant_until))
    .sort((a, b) => (a.created < b.created ? -1 : 1));
  let pending = 0;
  for (const a of state.approvals.values()) if (a.state === 'pending') pending++;
  $('pending-count').textContent = String(pending);
  for (const a of list) {
    q.append(el('li', { dataset: { id: a.id }, class: state.selected === a.id ? 'selected' : '', onclick: () => selectApproval(a.id) },
      el('div', null, el('strong', null, a.tool), ' ', el('span', { class: 'state-' + a.state }, a.state), ' ', a.action_class),
      el('div', { class: 'meta' }, a.arguments_json.slice(0, 160)),
      el('div', { class: 'meta' }, a.caller + ' · session ' + a.session_id + ' · ' + a.id)));
  }
}
$('show-resolved').addEventListener('change', renderQueue);

function dl(rows) {
  const d = el('dl');
  for (const [k, v] of rows) {
    if (v === undefined || v === null || v === '' || (Array.isArray(v) && !v.length)) continue;
    d.append(el('dt', null, k), el('dd', null, Array.isArray(v) ? v.join(', ') : String(v)));
  }
  return d;
}

function pretty(s) {
  try { return JSON.stringify(JSON.parse(s), null, 2); } catch (e) { return s; }
}

async function selectApproval(id) {
  state.selected = id;
  renderQueue();
  const box = $('approval-detail');
  let a;
  try {
    a = await api('GET', '/v1/approvals/' + encodeURIComponent(id));
  } catch (e) {
    clear(box);
    box.append(el('p', { class: 'error' }, 'Cannot load ' + id + ': ' + e.message));
    return;
  }
  state.approvals.set(a.id, Object.assign(state.approvals.get(a.id) || {}, a));
  if (state.selected !== id) return; // another request was selected meanwhile
  state.shownState = a.state;
  clear(box);
  box.append(
    el('h2', null, a.tool + ' ', el('span', { class: 'state-' + a.state }, a.state)),
    dl([['request', a.id], ['action class', a.action_class], ['caller', a.caller], ['session', a.session_id],
      ['agent', a.agent_id], ['runtime', a.runtime], ['cwd', a.cwd], ['created', a.created], ['expires', a.expires],
      ['approvers', a.approvers], ['needs', a.need_approvers > 1 ? a.need_approvers + ' approvers' : ''],
      ['resolver', a.resolver], ['comment', a.comment], ['grant until', a.grant_until], ['redacted', a.redacted]]),
    el('h3', null, 'The call'),
    el('pre', { id: 'call-args' }, pretty(a.arguments_json)),
    el('h3', null, 'Rules and reason'),
    el('ul', { id: 'rules' }, ...(a.rules || []).map((r) => el('li', null, r))),
    el('p', null, a.reason),
  );
  const effects = el('div', { id: 'effects' }, el('p', { class: 'fine' }, 'loading effects…'));
  const judge = el('div', { id: 'judge' });
  box.append(el('h3', null, 'Effects'), effects, el('h3', null, "The judge's view"), judge);
  const comment = el('input', { id: 'comment', placeholder: 'comment (optional)', maxlength: '4096' });
  const grant = el('select', { id: 'grant' }, ...[['900', '15 min'], ['3600', '1 hour'], ['14400', '4 hours'], ['86400', '24 hours']]
    .map(([v, t]) => el('option', { value: v }, t)));
  const out = el('p', { id: 'action-result' });
  const act = async (path, body) => {
    out.className = ''; out.textContent = '…';
    try {
      const r = await api('POST', '/v1/approvals/' + encodeURIComponent(a.id) + path, body);
      out.textContent = 'Done: ' + r.state;
      onApproval(r);
    } catch (e) {
      out.className = 'error'; out.textContent = e.message;
    }
  };
  if (a.state === 'pending' && hasRole('approver')) {
    box.append(el('div', { class: 'actions' }, comment,
      el('button', { type: 'button', id: 'approve', class: 'approve', onclick: () => act('/resolve', { approve: true, comment: comment.value }) }, 'Approve once'),
      grant,
      el('button', { type: 'button', id: 'approve-grant', class: 'approve', onclick: () => act('/resolve', { approve: true, comment: comment.value, grant_seconds: Number(grant.value) }) }, 'Approve for duration'),
      el('button', { type: 'button', id: 'deny', class: 'deny', onclick: () => act('/resolve', { approve: false, comment: comment.value }) }, 'Deny')));
  } else if (a.state === 'approved' && hasRole('approver')) {
    box.append(el('div', { class: 'actions' }, comment,
      el('button', { type: 'button', id: 'revoke', class: 'revoke', onclick: () => act('/revoke', { comment: comment.value }) }, 'Revoke')));
  }
  box.append(out);
  loadEffects(a.id, effects);
  loadJudge(a.id, judge);
}

async function loadEffects(id, box) {
  try {
    const e = await api('GET', '/v1/approvals/' + encodeURIComponent(id) + '/effects');
    clear(box);
    const t = el('table', null, el('thead', null, el('tr', null, el('th', null, 'kind'), el('th', null, 'target'), el('th', null, 'program'), el('th', null, 'notes'))));
    const tb = el('tbody');
    for (const x of e.effects || []) {
      const notes = [x.detail, x.sensitive ? 'sensitive' : '', x.unresolved ? 'UNRESOLVED' : '', x.in_workspace ? 'in workspace' : '', x.remote || ''].filter(Boolean).join(', ');
      tb.append(el('tr', null, el('td', null, x.kind), el('td', null, x.target), el('td', null, x.program), el('td', null, notes)));
    }
    t.append(tb);
    box.append(t, dl([['unresolved', e.unresolved], ['unknown programs', e.unknown_programs], ['parse error', e.parse_error]]),
      el('p', { class: 'fine' }, e.note));
  } catch (err) {
    clear(box);
    box.append(el('p', { class: 'fine' }, 'Effects unavailable: ' + err.message));
  }
}

// loadJudge shows the decision records of the request (tier, judge, confidence, reason): the
// auditor role reads them.
async function loadJudge(id, box) {
  if (!hasRole('auditor') || !state.who.audit) {
    box.append(el('p', { class: 'fine' }, 'The decision records need the auditor role.'));
    return;
  }
  try {
    const filter = 'record.payload.escalation_id == ' + JSON.stringify(id);
    const r = await api('GET', '/v1/audit/records?type=decision&newest_first=true&page_size=20&filter=' + encodeURIComponent(filter));
    clear(box);
    const recs = r.records || [];
    if (!recs.length) box.append(el('p', { class: 'fine' }, 'No decision record names this request.'));
    for (const rec of recs) {
      const p = JSON.parse(rec.payload_json);
      box.append(dl([['record', '#' + rec.seq + ' ' + rec.time], ['decision', p.decision + ' (tier ' + p.tier + ')'],
        ['judge', p.judge || 'no judge spoke'], ['confidence', p.confidence], ['reason', p.reason], ['rules', p.rules]]));
    }
  } catch (err) {
    box.append(el('p', { class: 'fine' }, 'Decision records unavailable: ' + err.message));
  }
}

// ---- audit ----

async function loadChain() {
  const box = $('chain-status');
  clear(box);
  if (!state.who.audit || !hasRole('auditor')) { box.append(el('dd', null, 'needs the auditor role')); return; }
  try {
    const [v, c] = await Promise.all([api('GET', '/v1/audit/verify'), api('GET', '/v1/audit/checkpoint').catch((e) => ({ error: e.message }))]);
    box.replaceWith(Object.assign(dl([['log', v.healthy ? 'healthy' : 'FAILING: ' + v.reason], ['records', v.records],
      ['checkpoint', c.error ? c.error : 'tree size ' + c.tree_size + ' (' + c.origin + ')'],
      ['last verify', v.last ? (v.last.ok ? 'OK' : 'FAILED: ' + v.last.error) + ' at ' + v.last.finished : 'never']]), { id: 'chain-status' }));
  } catch (e) {
    box.append(el('dd', { class: 'error' }, e.message));
  }
}

$('verify').addEventListener('click', async () => {
  $('verify-result').textContent = 'verifying…';
  try {
    const r = await api('POST', '/v1/audit/verify');
    $('verify-result').textContent = (r.ok ? 'OK' : 'FAILED') + ': ' + r.records + ' records, ' + r.checkpoints + ' checkpoints, ' +
      r.segments + ' segments' + (r.error ? '\n' + r.error : '') + '\n' + r.note;
  } catch (e) {
    $('verify-result').textContent = e.message;
  }
  loadChain();
});

function auditQuery() {
  const q = new URLSearchParams({ newest_first: 'true', page_size: '50' });
  const add = (k, id) => { const v = $(id).value.trim(); if (v) q.set(k, v); };
  add('decision', 'f-decision'); add('type', 'f-type'); add('tool', 'f-tool'); add('session_id', 'f-session');
  add('rule', 'f-rule'); add('filter', 'f-filter');
  return q;
}

async function searchAudit(more) {
  $('audit-error').textContent = '';
  if (!state.who.audit || !hasRole('auditor')) { $('audit-error').textContent = 'The audit trail needs the auditor role.'; return; }
  const q = auditQuery();
  if (more && state.auditNext) q.set('page_token', state.auditNext);
  let r;
  try {
    r = await api('GET', '/v1/audit/records?' + q.toString());
  } catch (e) {
    $('audit-error').textContent = e.message;
    return;
  }
  const rows = $('audit-rows');
  if (!more) clear(rows);
  for (const rec of r.records || []) {
    let p = {};
    try { p = JSON.parse(rec.payload_json); } catch (e) { /* shown raw in the detail */ }
    const d = p.decision || (p.state ? 'approval ' + p.state : '');
    rows.append(el('tr', { dataset: { seq: rec.seq }, onclick: () => showRecord(rec) },
      el('td', null, rec.seq), el('td', null, rec.time), el('td', null, rec.type), el('td', null, p.tool || ''),
      el('td', { class: 'd-' + (p.decision || '') }, d), el('td', null, (p.rules || []).join(', '))));
  }
  state.auditNext = r.next_page_token || '';
  $('audit-more').hidden = !state.auditNext;
}
$('audit-filters').addEventListener('submit', (e) => { e.preventDefault(); searchAudit(false); });
$('audit-more').addEventListener('click', () => searchAudit(true));

function showRecord(rec) {
  const box = $('record-detail');
  clear(box);
  const proof = el('pre', { id: 'proof' });
  box.append(el('h3', null, 'Record #' + rec.seq + ' (' + rec.type + ')'),
    dl([['time', rec.time], ['hash', rec.hash], ['previous', rec.prev_hash]]),
    el('pre', { id: 'record-payload' }, pretty(rec.payload_json)),
    el('button', { type: 'button', id: 'proof-button', onclick: async () => {
      proof.textContent = '…';
      try {
        const p = await api('GET', '/v1/audit/records/' + rec.seq + '/proof');
        proof.textContent = 'Included in the tree of ' + p.tree_size + ' records (latest checkpoint)\nroot ' + p.root_hash +
          '\nleaf ' + p.leaf_hash + '\n' + (p.hashes || []).length + ' proof hashes:\n' + (p.hashes || []).join('\n');
      } catch (e) { proof.textContent = e.message; }
    } }, 'Inclusion proof'),
    proof);
}

// ---- bundle and rate ----

async function loadBundle() {
  const box = $('bundle-status');
  try {
    const s = await api('GET', '/v1/status');
    box.replaceWith(Object.assign(dl([['revision', s.bundle_revision], ['digest', s.bundle_digest], ['loaded', s.bundle_loaded_at],
      ['rules', Object.entries(s.rules_per_tier || {}).map(([k, v]) => k + ': ' + v).join(', ')],
      ['reloads', s.reloads + ' ok, ' + s.reload_failures + ' failed'], ['last reload error', s.last_reload_error],
      ['version', s.version], ['uptime', s.uptime_seconds + ' s']]), { id: 'bundle-status' }));
  } catch (e) {
    clear(box);
    box.append(el('dd', null, 'Status needs the admin role: ' + e.message));
  }
  const ul = $('reloads');
  clear(ul);
  if (!hasRole('auditor') || !state.who.audit) { ul.append(el('li', { class: 'fine' }, 'needs the auditor role')); return; }
  try {
    const r = await api('GET', '/v1/audit/records?type=bundle_activated&type=service_start&newest_first=true&page_size=10');
    for (const rec of r.records || []) {
      const p = JSON.parse(rec.payload_json);
      ul.append(el('li', null, rec.time + ' ' + rec.type + ': ' + (p.bundle_revision || '') + ' ' + (p.bundle_digest || '')));
    }
    if (!(r.records || []).length) ul.append(el('li', { class: 'fine' }, 'none recorded'));
  } catch (e) {
    ul.append(el('li', { class: 'error' }, e.message));
  }
}

async function pollStatus() {
  if (!hasRole('admin')) { $('rate-text').textContent = 'rate: admin only'; return; }
  try {
    const s = await api('GET', '/v1/status');
    const total = Object.values(s.decisions || {}).reduce((a, b) => a + Number(b), 0);
    const now = performance.now();
    if (state.lastStatus) {
      const r = (total - state.lastStatus.total) / ((now - state.lastStatus.at) / 1000);
      state.rates.push(Math.max(0, r));
      if (state.rates.length > 40) state.rates.shift();
      $('rate-text').textContent = r.toFixed(1) + ' decisions/s';
      drawRate();
    }
    state.lastStatus = { total, at: now };
  } catch (e) {
    $('rate-text').textContent = 'rate unavailable';
  }
}

function drawRate() {
  const c = $('rate-chart');
  const g = c.getContext('2d');
  g.clearRect(0, 0, c.width, c.height);
  const max = Math.max(1, ...state.rates);
  const w = c.width / 40;
  g.fillStyle = '#5b6570';
  state.rates.forEach((r, i) => { const h = (r / max) * c.height; g.fillRect(i * w, c.height - h, w - 1, h); });
}

// Sign in at once with a token kept from earlier in this tab.
if (state.token) login();
