// nestjs-priority-queue dashboard: a hand-written page over the JSON API next to it (no framework).
// Pages are hash routes: #/ queues, #/q/<queue>/limits, #/q/<queue>/tasks?..., #/q/<queue>/tasks/<id>.
// Every text reaches the DOM through textContent; nothing is parsed as HTML.
// One file on purpose (above the usual ~400 lines): the page loads one script, with no build
// step and no module loader; its sections are DOM helpers, API, routes, dialogs, one per page, live.
(() => {
  'use strict';

  const BASE = new URL(document.querySelector('meta[name="pq-base"]').content, location.href);
  const WRITE_HEADER = 'x-priority-queue-dashboard';
  const $ = (id) => document.getElementById(id);
  const main = $('main');
  const dialog = $('dialog');

  let meta = null;
  let current = null; // { route, update, refreshable }
  let refreshing = false;
  let forceAfter = false;
  let navToken = 0;
  let lastTick = null;

  // ---------- DOM ----------
  function h(tag, props, ...children) {
    const el = document.createElement(tag);
    for (const [k, v] of Object.entries(props || {})) {
      if (v === null || v === undefined || v === false) continue;
      if (k === 'class') el.className = v;
      else if (k === 'text') el.textContent = v;
      else if (k.startsWith('on')) el.addEventListener(k.slice(2), v);
      else if (k in el && typeof v !== 'string') el[k] = v;
      else el.setAttribute(k, v === true ? '' : String(v));
    }
    append(el, children);
    return el;
  }
  function append(el, children) {
    for (const c of children.flat(Infinity)) {
      if (c === null || c === undefined || c === false) continue;
      el.append(c instanceof Node ? c : document.createTextNode(String(c)));
    }
    return el;
  }
  const svg = (tag, attrs) => {
    const el = document.createElementNS('http://www.w3.org/2000/svg', tag);
    for (const [k, v] of Object.entries(attrs || {})) el.setAttribute(k, String(v));
    return el;
  };
  /** Replaces the children of `box`, keeping keyboard focus on the element with the same data-key. */
  function swap(box, ...children) {
    const active = document.activeElement;
    const key = active && box.contains(active) ? active.getAttribute('data-key') : null;
    box.replaceChildren();
    append(box, children);
    if (key) {
      const again = [...box.querySelectorAll('[data-key]')].find((e) => e.getAttribute('data-key') === key);
      if (again) again.focus();
    }
  }
  const table = (caption, head, rows, empty) =>
    rows.length
      ? h('table', null, h('caption', { text: caption }), h('thead', null, h('tr', null, head.map((c) => h('th', { scope: 'col', class: /^(In flight|Pending|Count|Priority|Attempts|#|Leases)$/.test(c) ? 'num' : null, text: c })))), h('tbody', null, rows))
      : h('p', { class: 'muted', text: empty });
  const num = (v) => h('td', { class: 'num', text: v === null || v === undefined ? '—' : String(v) });

  // ---------- formatting ----------
  const pad = (n, w = 2) => String(n).padStart(w, '0');
  function fmtTime(ms) {
    if (ms === null || ms === undefined) return '—';
    const d = new Date(ms);
    return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}.${pad(d.getMilliseconds(), 3)}`;
  }
  function fmtDur(ms) {
    const a = Math.abs(ms);
    if (a < 1000) return `${Math.round(a)} ms`;
    if (a < 60_000) return `${(a / 1000).toFixed(1)} s`;
    if (a < 3_600_000) return `${(a / 60_000).toFixed(1)} min`;
    if (a < 86_400_000) return `${(a / 3_600_000).toFixed(1)} h`;
    return `${(a / 86_400_000).toFixed(1)} d`;
  }
  const STATUS_CLASS = {
    PENDING_SUBMIT: 'b-pending', SUBMITTING: 'b-active', SUBMITTED: 'b-active', RUNNING: 'b-active',
    SUCCEEDED: 'b-ok', FAILED: 'b-bad', CANCELED: 'b-off', TIMED_OUT: 'b-bad', SUBMIT_UNKNOWN: 'b-warn',
  };
  const badge = (status) => h('span', { class: `badge ${STATUS_CLASS[status] || ''}`, text: status });
  const short = (id) => (id.length > 14 ? `${id.slice(0, 8)}…${id.slice(-4)}` : id);

  // ---------- API ----------
  class ApiError extends Error {
    constructor(status, message, details) {
      super(message);
      this.status = status;
      this.details = details;
    }
  }
  async function api(path, options) {
    const method = (options && options.method) || 'GET';
    const headers = { accept: 'application/json' };
    const init = { method, headers, credentials: 'same-origin' };
    if (method !== 'GET') {
      headers[WRITE_HEADER] = '1';
      if (options.body !== undefined) {
        headers['content-type'] = 'application/json';
        init.body = JSON.stringify(options.body);
      }
    }
    const res = await fetch(new URL(`api/${path}`, BASE), init);
    const text = await res.text();
    let data = null;
    try {
      data = text ? JSON.parse(text) : null;
    } catch {
      data = null;
    }
    if (!res.ok) {
      const m = data && data.message;
      throw new ApiError(res.status, Array.isArray(m) ? m.join('; ') : m || `${res.status} ${res.statusText}`, data && data.details);
    }
    return data;
  }
  const q = (name) => encodeURIComponent(name);
  function say(text) {
    $('alert').textContent = '';
    $('notice').textContent = text;
  }
  /** Shows an error once (a live update failing again does not repeat it to a screen reader). */
  function fail(e, source) {
    const text = e instanceof ApiError ? `${e.message}${e.status >= 500 ? ` (HTTP ${e.status})` : ''}` : `The dashboard could not reach the server: ${e.message}`;
    $('notice').textContent = '';
    $('alert').dataset.source = source || 'action';
    if ($('alert').textContent !== text) $('alert').textContent = text;
  }

  // ---------- routes ----------
  function parseRoute() {
    const raw = location.hash.startsWith('#/') ? location.hash.slice(1) : '/';
    const [path, qs] = raw.split('?');
    const parts = path.split('/').filter(Boolean).map((p) => {
      try {
        return decodeURIComponent(p);
      } catch {
        return p;
      }
    });
    const params = new URLSearchParams(qs || '');
    if (parts[0] === 'q' && parts[1]) {
      if (parts[2] === 'limits') return { view: 'limits', queue: parts[1], params };
      if (parts[2] === 'tasks' && parts[3]) return { view: 'task', queue: parts[1], id: parts[3], params };
      if (parts[2] === 'tasks') return { view: 'tasks', queue: parts[1], params };
    }
    return { view: 'overview', params };
  }
  function link(view, queue, extra) {
    if (view === 'overview') return '#/';
    const base = `#/q/${q(queue)}/${view === 'limits' ? 'limits' : 'tasks'}`;
    if (view === 'task') return `${base}/${q(extra)}`;
    if (view === 'tasks' && extra) {
      const s = new URLSearchParams(Object.entries(extra).filter(([, v]) => v !== '' && v !== undefined && v !== null)).toString();
      return s ? `${base}?${s}` : base;
    }
    return base;
  }

  function renderNav(route) {
    const queue = route.queue || (meta.queues[0] && meta.queues[0].name);
    const items = [['overview', 'Queues'], ['limits', 'Limits and load'], ['tasks', 'Tasks']];
    swap(
      $('nav'),
      items.map(([view, label]) => {
        const active = route.view === view || (view === 'tasks' && route.view === 'task');
        return h('li', null, h('a', { href: link(view, queue), 'aria-current': active ? 'page' : null, text: label }));
      }),
    );
  }

  async function navigate() {
    const route = parseRoute();
    const token = ++navToken;
    renderNav(route);
    $('alert').textContent = '';
    const view = VIEWS[route.view];
    const box = h('div');
    try {
      const update = await view(route, box);
      if (token !== navToken) return;
      current = { route, update };
      main.replaceChildren(box);
      document.title = `${box.querySelector('h1') ? box.querySelector('h1').textContent + ' · ' : ''}${meta.title}`;
      main.focus();
    } catch (e) {
      if (token !== navToken) return;
      current = null;
      main.replaceChildren(h('h1', { text: 'Not available' }), h('p', { text: e.message }), h('p', null, h('a', { href: '#/', text: 'Back to the queues' })));
      fail(e);
    }
  }

  /** Re-reads the data of the page shown (live updates, or after an action). */
  async function refresh(force) {
    if (!current || !current.update || dialog.open) return;
    if (!force && !$('live').checked) return;
    if (refreshing) {
      // a live update is on its way; an action's own refresh runs right after it
      if (force) forceAfter = true;
      return;
    }
    refreshing = true;
    try {
      await current.update(force);
      if ($('alert').dataset.source === 'refresh') $('alert').textContent = '';
    } catch (e) {
      fail(e, 'refresh');
    } finally {
      refreshing = false;
      if (forceAfter) {
        forceAfter = false;
        refresh(true);
      }
    }
  }

  // ---------- dialogs ----------
  /** A modal that asks before a change. Resolves true on confirm; focus returns where it was. */
  function ask({ title, body, confirm, danger, fields }) {
    const opener = document.activeElement;
    return new Promise((resolve) => {
      const form = h('form', { method: 'dialog' },
        h('h2', { id: 'dialog-title', text: title }),
        (Array.isArray(body) ? body : [body]).map((p) => h('p', { text: p })),
        fields || null,
        h('div', { class: 'actions' },
          h('button', { type: 'submit', value: 'ok', class: danger ? 'danger primary' : 'primary', text: confirm }),
          h('button', { type: 'submit', value: 'cancel', formnovalidate: true, text: 'Cancel' })));
      dialog.replaceChildren(form);
      dialog.returnValue = '';
      dialog.addEventListener('close', () => {
        const values = fields ? Object.fromEntries(new FormData(form)) : null;
        resolve(dialog.returnValue === 'ok' ? values || true : false);
        if (opener && opener.isConnected) opener.focus();
      }, { once: true });
      dialog.showModal();
      // a field first; for a destructive change, Cancel (a second Enter must not confirm it)
      const first = form.querySelector(danger ? 'button[value="cancel"]' : 'input, select');
      if (first) first.focus();
    });
  }

  async function act(label, run) {
    try {
      await run();
      say(label);
      await refresh(true);
    } catch (e) {
      fail(e);
    }
  }

  // ---------- page: queues ----------
  function chart(tp) {
    const buckets = tp.buckets;
    const perSec = (n) => n / (tp.bucketMs / 1000);
    const max = Math.max(1, ...buckets.map((b) => Math.max(perSec(b.claims), perSec(b.finishes))));
    const W = 600, H = 120, L = 36, B = 18;
    const x = (i) => L + (i * (W - L - 4)) / Math.max(1, buckets.length - 1);
    const y = (v) => 4 + (H - B - 4) * (1 - v / max);
    const line = (key) => buckets.map((b, i) => `${x(i).toFixed(1)},${y(perSec(b[key])).toFixed(1)}`).join(' ');
    const minutes = Math.round((buckets.length * tp.bucketMs) / 60000);
    const last = buckets.slice(-Math.round(60000 / tp.bucketMs));
    const sum = (k) => last.reduce((s, b) => s + b[k], 0);
    const summary = `Last minute: ${sum('claims')} claims, ${sum('finishes')} finishes; peak ${max.toFixed(1)} per second over ${minutes} minutes.`;
    const s = svg('svg', { viewBox: `0 0 ${W} ${H}`, role: 'img', 'aria-label': `Claims and finishes per second. ${summary}` });
    s.append(
      svg('line', { class: 'axis', x1: L, y1: H - B, x2: W, y2: H - B }),
      svg('line', { class: 'axis', x1: L, y1: 4, x2: L, y2: H - B }),
      Object.assign(svg('text', { x: 2, y: 14 }), { textContent: max.toFixed(1) }),
      Object.assign(svg('text', { x: 2, y: H - B }), { textContent: '0' }),
      Object.assign(svg('text', { x: L, y: H - 3 }), { textContent: `-${minutes} min` }),
      Object.assign(svg('text', { x: W - 24, y: H - 3 }), { textContent: 'now' }),
      svg('polyline', { class: 'claims', points: line('claims') }),
      svg('polyline', { class: 'finishes', points: line('finishes') }),
    );
    return h('figure', { class: 'chart' },
      s,
      h('figcaption', null,
        h('div', { class: 'legend' }, h('span', { class: 'key-claims', text: 'claims/s' }), h('span', { class: 'key-finishes', text: 'finishes/s' })),
        h('span', { class: 'muted', text: `${summary} Seen by this process.` })));
  }

  function queueCard(o) {
    const pendingRows = o.pending.slice(0, 15).map((p) =>
      h('tr', null, num(p.priority), num(p.count), h('td', { text: p.oldestWaitMs ? fmtDur(p.oldestWaitMs) : 'none due' })));
    return h('section', { class: 'card', 'aria-labelledby': `q-${o.name}` },
      h('h2', { id: `q-${o.name}`, text: `Queue ${o.name}` }),
      h('p', null,
        h('a', { href: link('tasks', o.name), 'data-key': `tasks:${o.name}`, text: 'Tasks' }), ' · ',
        h('a', { href: link('limits', o.name), 'data-key': `limits:${o.name}`, text: 'Limits and load' })),
      h('h3', { text: 'Tasks per status' }),
      h('dl', { class: 'counts' }, Object.entries(o.byStatus).map(([status, n]) =>
        h('div', null, h('dt', null, h('a', { href: link('tasks', o.name, { status }), 'data-key': `st:${o.name}:${status}`, text: status })), h('dd', { text: String(n) })))),
      h('h3', { text: 'Pending per priority' }),
      table(o.pending.length > 15 ? `Highest 15 of ${o.pending.length} priority levels` : 'Highest priority first', ['Priority', 'Pending', 'Oldest due wait'], pendingRows, 'No pending task.'),
      h('h3', { text: 'Throughput' }),
      chart(o.throughput),
      h('h3', { text: 'Workers seen' }),
      table(`Lease owners holding a submit now${o.leaseScanCapped ? ' (leases counted among the first 500 submitting tasks)' : ''}, or seen claiming by this process in the last minutes`, ['Worker', 'Leases', 'Last claim seen'],
        o.workers.map((w) => h('tr', null, h('td', { class: 'id', text: w.owner }), num(w.leases), h('td', { text: w.lastSeenAt ? fmtTime(w.lastSeenAt) : '—' }))),
        'No worker holds a lease or was seen claiming.'));
  }

  async function overviewPage(route, box) {
    const list = h('div', { class: 'cards' });
    const update = async () => swap(list, (await api('queues')).queues.map(queueCard));
    await update();
    append(box, [h('h1', { text: 'Queues' }), list]);
    return update;
  }

  // ---------- page: limits ----------
  const show = (v) => (v === null || v === undefined ? 'none' : String(v));
  const LIMIT_NAMES = { paused: 'pause', rate: 'rate', account: 'account concurrency', tenant: 'tenant quota', concurrencyKey: 'concurrency key limit' };

  function limitsPage(route, box) {
    const queue = route.queue;
    const ro = meta.readOnly;
    const content = h('div');
    const put = (update, summary) => act(summary, () => api(`queues/${q(queue)}/limits`, { method: 'PATCH', body: update }));
    const numberField = (name, label, value, hint) =>
      h('label', null, `${label}${hint ? ` (${hint})` : ''}`, h('input', { name, type: 'text', inputmode: 'decimal', value: value === null || value === undefined ? '' : String(value) }));
    // empty = remove the limit; anything not a number goes to the server as typed, which says why it is wrong
    const parseNum = (v) => (v.trim() === '' ? null : Number.isFinite(Number(v)) ? Number(v) : v);

    async function pauseOrResume(p) {
      const verb = p.paused ? 'Resume' : 'Pause';
      const ok = await ask({
        title: `${verb} provider ${p.providerKey}?`,
        body: p.paused
          ? `Tasks of ${p.providerKey} may start again at the next claim of every worker.`
          : `No new submit of ${p.providerKey} starts until it is resumed. Tasks already submitted keep being polled.`,
        confirm: verb,
        danger: !p.paused,
      });
      if (ok) await act(`${p.providerKey} ${p.paused ? 'resumed' : 'paused'}.`, () => api(`queues/${q(queue)}/providers/${q(p.providerKey)}/${p.paused ? 'resume' : 'pause'}`, { method: 'POST' }));
    }

    async function editProvider(p) {
      const v = await ask({
        title: `Limits of provider ${p.providerKey}`,
        body: 'Empty means no limit. The change applies to every worker at its next claim.',
        confirm: 'Review change',
        fields: [numberField('qps', 'Submits per second', p.qps, 'qps'), numberField('burst', 'Burst', p.burst, 'empty = 1'), numberField('accountConcurrency', 'Jobs at once per account (default)', p.accountConcurrency)],
      });
      if (!v) return;
      const update = { kind: 'provider', providerKey: p.providerKey, qps: parseNum(v.qps), burst: parseNum(v.burst), accountConcurrency: parseNum(v.accountConcurrency) };
      const ok = await ask({
        title: `Change the limits of ${p.providerKey}?`,
        body: [`Rate: ${show(p.qps)}/s, burst ${show(p.burst)} → ${show(update.qps)}/s, burst ${show(update.burst)}.`, `Default jobs per account: ${show(p.accountConcurrency)} → ${show(update.accountConcurrency)}.`],
        confirm: 'Apply',
      });
      if (ok) await put(update, `Limits of ${p.providerKey} changed.`);
    }

    /** Sets one number limit (account, tenant, default tenant, concurrency key). */
    async function editOne({ title, what, current, build, keyLabel }) {
      const fields = [];
      if (keyLabel) fields.push(h('label', null, keyLabel, h('input', { name: 'key', type: 'text', required: true })));
      fields.push(numberField('value', what, current, 'empty = back to the default'));
      const v = await ask({ title, body: 'The change applies to every worker at its next claim.', confirm: 'Review change', fields });
      if (!v) return;
      const update = build(parseNum(v.value), v.key);
      const ok = await ask({ title: `${title}?`, body: `${what}${v.key ? ` of ${v.key}` : ''}: ${show(current)} → ${show(parseNum(v.value))}.`, confirm: 'Apply' });
      if (ok) await put(update, `${title}: done.`);
    }

    const inflight = (r) => h('td', { class: r.full ? 'num full' : 'num', text: `${r.inFlight} / ${show(r.limit)}${r.full ? ' (full)' : ''}` });
    const more = (n) => (n ? h('p', { class: 'muted', text: `${n} more not shown (the busiest come first).` }) : null);
    const addButton = (label, key, onclick) => (ro ? null : h('p', null, h('button', { type: 'button', 'data-key': key, onclick, text: label })));

    function render(v) {
      const providers = v.providers.map((p) =>
        h('tr', null,
          h('th', { scope: 'row', text: p.providerKey }),
          h('td', null, p.paused ? h('span', { class: 'badge b-bad', text: 'paused' }) : h('span', { class: 'badge b-ok', text: 'running' })),
          h('td', { text: p.qps === null ? 'no limit' : `${p.qps}/s, burst ${p.effectiveBurst}` }),
          h('td', { class: 'num', text: show(p.accountConcurrency) }),
          num(p.inFlight),
          ro ? null : h('td', null, h('div', { class: 'actions' },
            h('button', { type: 'button', class: p.paused ? null : 'danger', 'data-key': `pause:${p.providerKey}`, 'aria-label': `${p.paused ? 'Resume' : 'Pause'} ${p.providerKey}`, onclick: () => pauseOrResume(p), text: p.paused ? 'Resume' : 'Pause' }),
            h('button', { type: 'button', 'data-key': `edit:${p.providerKey}`, 'aria-label': `Edit limits of ${p.providerKey}`, onclick: () => editProvider(p), text: 'Edit limits' })))));
      const setBtn = (key, label, onclick) => (ro ? null : h('td', null, h('button', { type: 'button', 'data-key': key, 'aria-label': label, onclick, text: 'Set' })));
      const accounts = v.accounts.rows.map((r) =>
        h('tr', null, h('th', { scope: 'row', text: r.key }), inflight(r), h('td', { text: r.override ? 'own limit' : 'provider default' }),
          setBtn(`acc:${r.key}`, `Set the limit of account ${r.key}`, () => editOne({ title: `Set the limit of account ${r.key}`, what: 'Jobs at once', current: r.override ? r.limit : null, build: (n) => ({ kind: 'account', providerKey: r.providerKey, accountId: r.accountId, concurrency: n }) }))));
      const tenants = v.tenants.rows.map((r) =>
        h('tr', null, h('th', { scope: 'row', text: r.key }), inflight(r), h('td', { text: r.override ? 'own quota' : 'default quota' }),
          setBtn(`ten:${r.key}`, `Set the quota of tenant ${r.key}`, () => editOne({ title: `Set the quota of tenant ${r.key}`, what: 'Tasks in flight', current: r.override ? r.limit : null, build: (n) => ({ kind: 'tenant', tenantId: r.key, quota: n }) }))));
      const keys = v.concurrencyKeys.rows.map((r) =>
        h('tr', null, h('th', { scope: 'row', text: r.key }), inflight(r), h('td', { text: r.override ? 'own limit' : `default (${v.concurrencyKeys.defaultLimit})` }),
          setBtn(`ck:${r.key}`, `Set the limit of concurrency key ${r.key}`, () => editOne({ title: `Set the limit of concurrency key ${r.key}`, what: 'Tasks at once', current: r.override ? r.limit : null, build: (n) => ({ kind: 'concurrencyKey', key: r.key, limit: n }) }))));
      const actionCol = ro ? [] : ['Actions'];
      return [
        h('h2', { text: 'Providers' }),
        table('Pause stops new submits; the rate counts submits started', ['Provider', 'State', 'Rate', 'Jobs per account', 'In flight', ...actionCol], providers, 'No provider has limits or tasks in flight.'),
        h('h2', { text: 'Accounts' }),
        table('Tasks submitting, submitted or running per account, against its limit', ['Account', 'In flight / limit', 'Limit from', ...(ro ? [] : ['Change'])], accounts, 'No account has tasks in flight or its own limit.'),
        more(v.accounts.more),
        addButton('Set the limit of another account…', 'add:acc', () => editOne({ title: 'Set the limit of an account', keyLabel: 'Provider / account (e.g. vendorA/acct-1)', what: 'Jobs at once', current: null, build: (n, key) => { const i = key.indexOf('/'); return { kind: 'account', providerKey: key.slice(0, i).trim(), accountId: key.slice(i + 1).trim(), concurrency: n }; } })),
        h('h2', { text: 'Tenants' }),
        h('p', null, `Default quota of every tenant without its own: ${show(v.tenants.defaultQuota)}. `,
          ro ? null : h('button', { type: 'button', 'data-key': 'ten:default', onclick: () => editOne({ title: 'Set the default tenant quota', what: 'Tasks in flight per tenant', current: v.tenants.defaultQuota, build: (n) => ({ kind: 'defaultTenant', quota: n }) }), text: 'Set default quota' })),
        table('Tasks submitting, submitted or running per tenant, against its quota', ['Tenant', 'In flight / limit', 'Limit from', ...(ro ? [] : ['Change'])], tenants, 'No tenant has tasks in flight or its own quota.'),
        more(v.tenants.more),
        addButton('Set the quota of another tenant…', 'add:ten', () => editOne({ title: 'Set the quota of a tenant', keyLabel: 'Tenant id', what: 'Tasks in flight', current: null, build: (n, key) => ({ kind: 'tenant', tenantId: key, quota: n }) })),
        h('h2', { text: 'Concurrency keys' }),
        table('Tasks at once per concurrency key (default 1: one at a time)', ['Key', 'In flight / limit', 'Limit from', ...(ro ? [] : ['Change'])], keys, 'No concurrency key has tasks in flight or its own limit.'),
        more(v.concurrencyKeys.more),
        addButton('Set the limit of another key…', 'add:ck', () => editOne({ title: 'Set the limit of a concurrency key', keyLabel: 'Concurrency key', what: 'Tasks at once', current: null, build: (n, key) => ({ kind: 'concurrencyKey', key, limit: n }) })),
      ];
    }

    // which limits hold back the head of the queue: costs one explain per sampled task, so it is
    // re-read at most every 10 s (or after an action)
    const waitingBox = h('div');
    let waitingAt = 0;
    function renderWaiting(w) {
      const rows = w.byLimit.map((r) =>
        h('tr', null, h('td', { text: LIMIT_NAMES[r.limit] || r.limit }), h('th', { scope: 'row', text: r.key }), num(r.tasks),
          h('td', { text: r.inUse !== undefined ? `${r.inUse} of ${show(r.max)} in use` : r.nextTokenAt !== undefined ? `next token at ${fmtTime(r.nextTokenAt)}` : '' })));
      const v = w.verdicts;
      return [
        h('h2', { text: 'What holds the queue back' }),
        h('p', { class: 'muted', text: `The first ${w.sampled} pending tasks in claim order: ${v.next + v.waiting} admissible now, ${v.refused} held by a limit, ${v['not-due']} not due yet.` }),
        table('Limits that hold back some of them (their lanes wait on it)', ['Limit', 'Key', 'Count', 'State'], rows, 'No limit holds back the head of the queue.'),
      ];
    }
    const update = async (force) => {
      const fresh = force || Date.now() - waitingAt > 10_000;
      const [v, w] = await Promise.all([api(`queues/${q(queue)}/limits`), fresh ? api(`queues/${q(queue)}/waiting`) : null]);
      swap(content, render(v));
      if (w) {
        waitingAt = Date.now();
        swap(waitingBox, renderWaiting(w));
      }
    };
    return update(true).then(() => {
      append(box, [h('h1', { text: `Limits and load · ${queue}` }), ro ? h('p', { class: 'muted', text: 'Read-only dashboard: limits can be seen, not changed.' }) : null, waitingBox, content]);
      return update;
    });
  }

  // ---------- page: tasks ----------
  const FILTERS = [
    ['type', 'Type'], ['tenantId', 'Tenant'], ['providerKey', 'Provider'], ['accountId', 'Account'],
    ['minPriority', 'Min priority'], ['maxPriority', 'Max priority'],
  ];
  const pageStacks = new Map();
  /** Filters with suggestions: the task types this app knows and their providers. */
  const SUGGEST = { type: (t) => t.type, providerKey: (t) => t.providerKey }; // filters -> cursors of the pages before the one shown

  async function tasksPage(route, box) {
    const queue = route.queue;
    const p = route.params;
    const status = p.get('status') || 'PENDING_SUBMIT';
    const types = (meta.queues.find((x) => x.name === queue) || {}).taskTypes || [];
    const query = { status };
    for (const [k] of FILTERS) if (p.get(k)) query[k] = p.get(k);
    if (p.get('search')) query.search = p.get('search');
    if (p.get('limit')) query.limit = p.get('limit');
    const cursor = p.get('cursor') || '';
    const filterKey = JSON.stringify(query);
    const stack = pageStacks.get(filterKey) || []; // { cursor, count } of each page before this one
    pageStacks.set(filterKey, stack);
    if (!cursor) stack.length = 0;

    const form = h('form', { class: 'filters', 'aria-label': 'Filter tasks' },
      h('label', null, 'Status', h('select', { name: 'status' }, meta.statuses.map((s) => h('option', { value: s, selected: s === status, text: s })))),
      h('label', null, 'Id or idempotency key (any status)', h('input', { name: 'search', type: 'search', value: query.search || '' })),
      FILTERS.map(([k, label]) => h('label', null, label, h('input', { name: k, type: 'text', value: query[k] || '', inputmode: k.endsWith('Priority') ? 'numeric' : null, list: SUGGEST[k] ? `dl-${k}` : null }))),
      Object.entries(SUGGEST).map(([k, pick]) => h('datalist', { id: `dl-${k}` }, [...new Set(types.map(pick))].sort().map((v) => h('option', { value: v })))),
      h('label', null, 'Per page', h('select', { name: 'limit' }, ['25', '50', '100', '200'].map((n) => h('option', { value: n, selected: (query.limit || '50') === n, text: n })))),
      h('div', { class: 'actions' }, h('button', { type: 'submit', class: 'primary', text: 'Apply' }), h('button', { type: 'button', onclick: () => (location.hash = link('tasks', queue, { status })), text: 'Clear' })));
    form.addEventListener('submit', (e) => {
      e.preventDefault();
      const values = Object.fromEntries([...new FormData(form)].map(([k, v]) => [k, String(v).trim()]));
      location.hash = link('tasks', queue, values);
    });

    const results = h('div', { 'aria-live': 'off' });
    const load = () => api(`queues/${q(queue)}/tasks?${new URLSearchParams({ ...query, ...(cursor ? { cursor } : {}) })}`);

    function render(page) {
      const claim = page.order === 'claim';
      const offset = stack.reduce((n, p) => n + p.count, 0); // a page may stop early: count what was shown
      const search = !!query.search; // any status: each row says its own
      const pending = !search && status === 'PENDING_SUBMIT';
      const terminal = !search && ['SUCCEEDED', 'FAILED', 'CANCELED', 'TIMED_OUT', 'SUBMIT_UNKNOWN'].includes(status);
      const now = Date.now();
      const head = [...(claim ? ['#'] : []), 'Task', 'Type', 'Priority', 'Provider', 'Tenant', 'Account', pending ? 'Due' : terminal ? 'Finished' : 'Last change', 'Attempts', ...(terminal ? ['Error'] : [])];
      const rows = page.tasks.map((t, i) =>
        h('tr', null,
          claim ? num(offset + i + 1) : null,
          h('td', null, h('a', { class: 'id', href: link('task', queue, t.id), 'data-key': `task:${t.id}`, title: t.id, text: short(t.id) }), search || t.status !== status ? [' ', badge(t.status)] : null),
          h('td', { text: t.type }), num(t.priority), h('td', { text: t.providerKey }), h('td', { text: t.tenantId || '—' }), h('td', { text: t.accountId || '—' }),
          h('td', { text: pending ? (t.runAt <= now ? `due ${fmtDur(now - t.runAt)} ago` : `in ${fmtDur(t.runAt - now)}`) : fmtTime(terminal ? t.finishedAt : t.updatedAt) }),
          num(`${t.attempts} / ${t.maxAttempts}`),
          terminal ? h('td', { text: t.error || '' }) : null));
      const n = page.tasks.length;
      const caption = query.search
        ? `${n} task${n === 1 ? '' : 's'} with id or idempotency key "${query.search}", in any status`
        : `${n} ${status} task${n === 1 ? '' : 's'}${claim ? ', in the order the queue will claim them (limits aside)' : ', newest first'}${stack.length ? ` (page ${stack.length + 1})` : ''}`;
      const pager = h('nav', { class: 'pager', 'aria-label': 'Pages of tasks' },
        stack.length ? h('a', { class: 'button', href: link('tasks', queue, { ...query }), text: 'First page' }) : null,
        stack.length ? h('a', { class: 'button', href: link('tasks', queue, { ...query, cursor: stack[stack.length - 1].cursor }), onclick: () => stack.pop(), text: 'Previous page' }) : null,
        page.nextCursor ? h('a', { class: 'button', href: link('tasks', queue, { ...query, cursor: page.nextCursor }), 'data-key': 'next', onclick: () => stack.push({ cursor, count: page.tasks.length }), text: 'Next page' }) : null);
      const empty = query.search ? `No task has the id or idempotency key "${query.search}".` : `No ${status} task${page.nextCursor ? ' on this page (the store ended its scan early: see the next page)' : ''}.`;
      return [table(caption, head, rows, empty), pager];
    }

    swap(results, render(await load()));
    append(box, [h('h1', { text: `Tasks · ${queue}` }), form, results]);
    // later pages are not refreshed by themselves: their rows would move under the reader
    return async (force) => {
      if (cursor && !force) return;
      swap(results, render(await load()));
    };
  }

  // ---------- page: one task ----------
  async function taskPage(route, box) {
    const queue = route.queue;
    const id = route.id;
    const content = h('div');
    const actions = h('div', { class: 'actions' });
    const prio = h('input', { id: 'new-priority', type: 'text', inputmode: 'numeric', size: 12, oninput: () => (prioEdited = true) });
    let prioEdited = false;
    let detail = null;

    const path = `queues/${q(queue)}/tasks/${q(id)}`;
    const field = (label, value) => [h('dt', { text: label }), h('dd', null, value === null || value === undefined || value === '' ? '—' : value)];

    function render(d) {
      const t = d.task;
      const timeline = d.timeline.entries.map((e) =>
        h('tr', null, h('td', { text: fmtTime(e.at) }), h('td', null, e.from ? [badge(e.from), ' → '] : null, e.to ? badge(e.to) : null), h('td', { text: e.label || '' }), h('td', { text: e.error || '' })));
      return [
        h('div', { class: 'cols' },
          h('section', { 'aria-labelledby': 'fields-h' },
            h('h2', { id: 'fields-h', text: 'Fields' }),
            h('dl', { class: 'fields' },
              field('Status', badge(t.status)), field('Id', h('span', { class: 'id', text: t.id })), field('Idempotency key', t.idempotencyKey),
              field('Type', t.type), field('Priority', String(t.priority)), field('Provider', t.providerKey), field('Account', t.accountId),
              field('Tenant', t.tenantId), field('Concurrency key', t.concurrencyKey), field('Created', fmtTime(t.createdAt)),
              field('Run at', fmtTime(t.runAt)), field('Deadline', t.deadlineAt ? fmtTime(t.deadlineAt) : 'none'), field('Updated', fmtTime(t.updatedAt)),
              field('Finished', t.finishedAt ? fmtTime(t.finishedAt) : null), field('Sequence', String(t.seq)), field('Version', String(t.version)),
              field('Idempotent', t.idempotent ? 'yes' : 'no'), field('Lease', t.leaseOwner ? `${t.leaseOwner} until ${fmtTime(t.leaseUntil)}` : null),
              field('External id', t.externalId), field('Next poll', t.nextPollAt ? fmtTime(t.nextPollAt) : null),
              field('Cancel requested', t.cancelRequested ? 'yes' : 'no'))),
          h('section', { 'aria-labelledby': 'tl-h' },
            h('h2', { id: 'tl-h', text: 'Transitions' }),
            d.timeline.source === 'history'
              ? table(`Every status change, oldest first (the store keeps the last ${d.timeline.historyLimit})`, ['Time', 'Status', 'Event', 'Error'], timeline, 'No transition recorded.')
              : [h('p', { class: 'history-off', role: 'note', text: 'History off: this queue’s store keeps no transitions (store option historyLimit is 0, the default on Redis).' }),
                table('The times the task records', ['Time', 'Status', 'Event', 'Error'], timeline, 'No time recorded.')],
            h('h2', { text: 'Attempts and errors' }),
            h('dl', { class: 'fields' }, field('Attempts', `${t.attempts} of ${t.maxAttempts}`), field('Poll errors in a row', String(t.pollErrors)), field('Last error', t.error ? h('pre', { text: t.error }) : null)),
            d.explanation ? explainBox(d.explanation) : null)),
        h('h2', { text: 'Payload' }), h('pre', { text: JSON.stringify(t.payload, null, 2) }),
        t.result !== null ? [h('h2', { text: 'Result' }), h('pre', { text: JSON.stringify(t.result, null, 2) })] : null,
      ];
    }

    function explainBox(e) {
      const r = e.refusedBy;
      const facts = [
        e.dueAt !== undefined ? `Due at ${fmtTime(e.dueAt)} (in ${fmtDur(e.dueAt - e.now)}).` : null,
        r ? `Held by the ${LIMIT_NAMES[r.limit] || r.limit} of ${e.keyLabel || r.key}${r.inUse !== undefined ? `: ${r.inUse} of ${show(r.max)} in use` : ''}${r.nextTokenAt !== undefined ? `: next token at ${fmtTime(r.nextTokenAt)}` : ''}.` : null,
        e.ahead !== undefined ? `${e.ahead}${e.aheadCapped ? '+' : ''} admissible task${e.ahead === 1 ? '' : 's'} rank before it.` : null,
      ];
      return [
        h('h2', { text: e.verdict === 'next' ? 'It runs next' : 'Why is it not running?' }),
        h('div', { class: 'explain', role: 'note' }, h('p', { text: e.message }), facts.filter(Boolean).map((f) => h('p', { class: 'muted', text: f })),
          r ? h('p', null, h('a', { href: link('limits', queue), text: 'See limits and load' })) : null),
      ];
    }

    function renderActions(d) {
      if (meta.readOnly) return [];
      const t = d.task;
      return [
        d.actions.cancel ? h('button', { type: 'button', class: 'danger', 'data-key': 'cancel', onclick: cancel, text: 'Cancel task' }) : null,
        d.actions.changePriority ? [h('label', { for: 'new-priority' }, 'New priority', prio), h('button', { type: 'button', 'data-key': 'priority', onclick: changePriority, text: 'Change priority' })] : null,
        d.actions.retry ? h('button', { type: 'button', 'data-key': 'retry', onclick: retry, text: 'Retry task' }) : null,
        !d.actions.cancel && !d.actions.changePriority && !d.actions.retry ? h('p', { class: 'muted', text: `No action applies to a ${t.status} task.` }) : null,
      ];
    }

    async function cancel() {
      const running = detail.task.status !== 'PENDING_SUBMIT';
      const ok = await ask({ title: `Cancel task ${short(id)}?`, body: running ? 'It is already claimed: the worker finalises it as CANCELED (the provider’s cancel hook is called if it has one).' : 'It will never run.', confirm: 'Cancel task', danger: true });
      if (ok) await act('Task canceled.', () => api(`${path}/cancel`, { method: 'POST' }));
    }
    async function changePriority() {
      const raw = prio.value.trim();
      const n = /^-?\d+$/.test(raw) ? Number(raw) : raw;
      const ok = await ask({ title: `Change the priority of ${short(id)}?`, body: `${detail.task.priority} → ${raw || '(empty)'}. Larger runs first.`, confirm: 'Change priority' });
      if (ok) await act('Priority changed.', async () => {
        await api(`${path}/priority`, { method: 'POST', body: { priority: n } });
        prioEdited = false;
      });
    }
    async function retry() {
      const ok = await ask({ title: `Retry task ${short(id)}?`, body: 'It goes back to the queue as pending, with its priority.', confirm: 'Retry task' });
      if (ok) await act('Task queued again.', () => api(`${path}/retry`, { method: 'POST' }));
    }

    const update = async () => {
      detail = await api(path);
      if (!prioEdited) prio.value = String(detail.task.priority);
      swap(content, render(detail));
      const focusedInside = actions.contains(document.activeElement);
      if (!focusedInside) swap(actions, renderActions(detail));
    };
    await update();
    append(box, [h('p', null, h('a', { href: link('tasks', queue, { status: detail.task.status }), text: `← ${detail.task.status} tasks` })), h('h1', null, 'Task ', h('span', { class: 'id', text: id })), actions, content]);
    return update;
  }

  const VIEWS = { overview: overviewPage, limits: limitsPage, tasks: tasksPage, task: taskPage };

  // ---------- live updates ----------
  function connectLive() {
    const state = $('live-state');
    let poll = null;
    const startPolling = () => {
      if (poll) return;
      state.textContent = 'polling';
      poll = setInterval(() => {
        lastTick = Date.now();
        refresh(false);
      }, meta.refreshMs);
    };
    if (typeof EventSource !== 'function') return startPolling();
    const es = new EventSource(new URL('api/events', BASE), { withCredentials: true });
    es.addEventListener('tick', () => {
      lastTick = Date.now();
      state.textContent = `updated ${fmtTime(lastTick).slice(11, 19)}`;
      refresh(false);
    });
    es.addEventListener('error', () => {
      if (es.readyState === EventSource.CLOSED) {
        es.close();
        startPolling();
      } else state.textContent = 'reconnecting…';
    });
  }

  // ---------- start ----------
  async function start() {
    try {
      meta = await api('meta');
    } catch (e) {
      fail(e);
      main.replaceChildren(h('h1', { text: 'The dashboard cannot start' }), h('p', { text: e.message }));
      return;
    }
    $('live').addEventListener('change', (e) => {
      $('live-state').textContent = e.target.checked ? 'on' : 'paused';
      if (e.target.checked) refresh(true);
    });
    $('skip').addEventListener('click', (e) => {
      e.preventDefault();
      main.focus();
    });
    window.addEventListener('hashchange', navigate);
    await navigate();
    connectLive();
  }
  start();
})();
