// Switchyard console: plain JS, no framework. Every value from the API is
// inserted as text, never as HTML.
//
// The console takes one credential: its token, sent as an Authorization
// header. The page keeps it in sessionStorage, which belongs to this
// scheme, host and port alone, and never in a cookie, which a browser
// would also send to every other port of this host. It gets the token by
// exchanging, once, the sign-in code of the address `switchyard serve` or
// `switchyard console-url` prints (in the fragment, which no request
// carries).
"use strict";

const tokenKey = "switchyard.token";

function authHeaders(extra) {
  const h = Object.assign({}, extra || {});
  const t = sessionStorage.getItem(tokenKey);
  if (t) h.Authorization = "Bearer " + t;
  return h;
}

// api fetches url with the token and never with cookies.
function api(url, init) {
  const o = Object.assign({}, init || {});
  o.headers = authHeaders(o.headers);
  o.credentials = "omit";
  o.cache = "no-store";
  return fetch(url, o);
}

class HTTPError extends Error {
  constructor(status, message) { super(message); this.status = status; }
}

async function failure(r, url) {
  const body = await r.json().catch(() => ({}));
  const e = body.error;
  return new HTTPError(r.status, (e && (e.message || (typeof e === "string" && e))) || (url + ": HTTP " + r.status));
}

// signIn exchanges the address's #code=... for the token, once, and drops
// the code from the address (and so from the history) first.
async function signIn() {
  const m = /^#code=([A-Za-z0-9_-]+)$/.exec(location.hash);
  if (!m) return;
  history.replaceState(null, "", location.pathname + location.search);
  const r = await fetch("/api/v1/signin", { method: "POST", credentials: "omit", cache: "no-store",
    headers: { "Content-Type": "application/json", Accept: "application/json" }, body: JSON.stringify({ code: m[1] }) });
  if (!r.ok) throw await failure(r, "sign in");
  const body = await r.json();
  sessionStorage.setItem(tokenKey, body.token);
}

function el(tag, attrs, ...kids) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k === "class") e.className = v;
    else if (k === "style") { // through the CSSOM: the CSP refuses style attributes
      for (const decl of v.split(";")) {
        const i = decl.indexOf(":");
        if (i > 0) e.style.setProperty(decl.slice(0, i).trim(), decl.slice(i + 1).trim());
      }
    }
    else if (k.startsWith("on")) e.addEventListener(k.slice(2), v);
    else e.setAttribute(k, v);
  }
  for (const k of kids.flat()) {
    if (k === undefined || k === null) continue;
    e.append(k instanceof Node ? k : document.createTextNode(String(k)));
  }
  return e;
}

async function getJSON(url) {
  const r = await api(url, { headers: { Accept: "application/json" } });
  if (!r.ok) throw await failure(r, url);
  return r.json();
}

function showError(err) {
  const p = document.getElementById("error");
  if (!err) { p.hidden = true; return; }
  p.textContent = String(err.message || err);
  p.hidden = false;
}

function fmtTime(t) { return t ? new Date(t).toLocaleString() : ""; }
function fmtDur(ms) {
  if (ms < 1000) return ms + " ms";
  const s = ms / 1000;
  if (s < 120) return s.toFixed(1) + " s";
  return (s / 60).toFixed(1) + " min";
}

function debounce(fn, ms) {
  let t = null;
  return () => { clearTimeout(t); t = setTimeout(fn, ms); };
}

// liveStream follows a server-sent event stream through fetch (EventSource
// cannot send the Authorization header): it calls onEvent({data}) for each
// event named eventName, and reconnects after a drop, resuming after the
// last event id it saw. A refusal (401, 404) stops it and is shown.
function liveStream(url, onEvent, eventName) {
  const dot = document.getElementById("live");
  let last = "";
  const dispatch = block => {
    let name = "message", id = null;
    const data = [];
    for (const line of block.split("\n")) {
      if (line === "" || line.startsWith(":")) continue;
      const c = line.indexOf(":");
      const field = c < 0 ? line : line.slice(0, c);
      let v = c < 0 ? "" : line.slice(c + 1);
      if (v.startsWith(" ")) v = v.slice(1);
      if (field === "event") name = v;
      else if (field === "data") data.push(v);
      else if (field === "id") id = v;
    }
    if (id !== null) last = id;
    if (name === eventName && data.length) onEvent({ data: data.join("\n") });
  };
  const once = async () => {
    const headers = { Accept: "text/event-stream" };
    if (last) headers["Last-Event-ID"] = last;
    const r = await api(url, { headers });
    if (!r.ok) throw await failure(r, url);
    dot.classList.add("on");
    const reader = r.body.pipeThrough(new TextDecoderStream()).getReader();
    let buf = "";
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      buf = (buf + value).replace(/\r\n?/g, "\n");
      let i;
      while ((i = buf.indexOf("\n\n")) >= 0) {
        dispatch(buf.slice(0, i));
        buf = buf.slice(i + 2);
      }
    }
  };
  (async () => {
    for (;;) {
      try { await once(); } catch (e) {
        if (e instanceof HTTPError && e.status >= 400 && e.status < 500) { dot.classList.remove("on"); showError(e); return; }
      }
      dot.classList.remove("on");
      await new Promise(res => setTimeout(res, 2000));
    }
  })();
}

function laneCounts(lanes) {
  const n = {};
  for (const l of lanes) n[l.state] = (n[l.state] || 0) + 1;
  return Object.entries(n).map(([s, c]) => c + " " + s).join(", ");
}

function runState(r) {
  if (r.final && r.cancelled) return "cancelled";
  if (r.final) return "final";
  for (const l of r.lanes) {
    if (["native", "verdict", "operation", "recovery"].includes(l.waitingFor)) return "waiting-for-parent";
  }
  return "running";
}

// ---- runs list ----

async function runsPage() {
  const form = document.getElementById("filters");
  const params = new URLSearchParams(location.search);
  for (const k of ["state", "role", "q"]) if (params.get(k)) form.elements[k].value = params.get(k);
  const roles = new Set();
  async function load() {
    const q = new URLSearchParams();
    for (const k of ["state", "role", "q"]) if (form.elements[k].value) q.set(k, form.elements[k].value);
    history.replaceState(null, "", q.toString() ? "?" + q : location.pathname);
    try {
      const runs = await getJSON("/api/v1/runs?" + q);
      const all = form.elements.role.value ? null : runs;
      if (all) for (const r of all) if (!roles.has(r.role)) {
        roles.add(r.role);
        form.elements.role.append(el("option", { value: r.role }, r.role));
      }
      const tbody = document.querySelector("#runs tbody");
      tbody.replaceChildren(...runs.map(r => el("tr", { "data-run": r.run },
        el("td", {}, el("a", { href: "/runs/" + encodeURIComponent(r.run) }, el("code", {}, r.run))),
        el("td", {}, r.role),
        el("td", {}, el("span", { class: "state " + runState(r) }, runState(r))),
        el("td", { class: "lane-counts" }, laneCounts(r.lanes)),
        el("td", {}, fmtTime(r.created)),
        el("td", {}, fmtTime(r.updated)))));
      document.getElementById("empty").hidden = runs.length > 0;
      showError(null);
    } catch (e) { showError(e); }
  }
  form.addEventListener("input", debounce(load, 150));
  form.addEventListener("submit", e => { e.preventDefault(); load(); });
  await load();
  liveStream("/api/v1/stream", debounce(load, 250), "change");
}

// ---- one run ----

const run = { id: "", status: null, timeline: null, report: null, selected: 0, lastSeq: 0 };

async function runPage() {
  run.id = decodeURIComponent(location.pathname.split("/")[2]);
  document.getElementById("run-id").textContent = run.id;
  document.title = "Switchyard — run " + run.id;
  try {
    const r = await api("/api/v1/machine.svg");
    if (!r.ok) throw await failure(r, "the lane machine");
    const svg = await r.text();
    // The diagram is generated by the server from the lane table; it holds
    // no run data.
    document.getElementById("machine").innerHTML = svg;
  } catch (e) { showError(e); }
  await refresh();
  const evs = await getJSON("/api/v1/runs/" + encodeURIComponent(run.id) + "/events").catch(e => { showError(e); return []; });
  const list = document.getElementById("events");
  list.replaceChildren(...evs.map(e => eventItem(e, false)));
  run.lastSeq = evs.length ? evs[evs.length - 1].seq : 0;
  const again = debounce(refresh, 150);
  liveStream("/api/v1/runs/" + encodeURIComponent(run.id) + "/stream?after=" + run.lastSeq, m => {
    const e = JSON.parse(m.data);
    if (e.seq <= run.lastSeq) return;
    run.lastSeq = e.seq;
    list.append(eventItem(e, true));
    again();
  }, "event");
}

function eventItem(e, fresh) {
  const lane = e.lane === undefined || e.lane < 0 ? "run" : "lane " + e.lane;
  return el("li", { class: fresh ? "new" : "", "data-seq": e.seq, "data-type": e.type },
    el("details", {},
      el("summary", {}, el("span", { class: "seq" }, "#" + e.seq), " ", el("b", {}, e.type), " · ", lane, " · ", fmtTime(e.time)),
      el("pre", {}, JSON.stringify(e, null, 2))));
}

async function refresh() {
  const base = "/api/v1/runs/" + encodeURIComponent(run.id);
  try {
    const [st, tl, rep] = await Promise.all([getJSON(base), getJSON(base + "/timeline"), getJSON(base + "/report")]);
    run.status = st; run.timeline = tl; run.report = rep;
    renderSummary(); renderLanes(); selectLane(run.selected);
    showError(null);
  } catch (e) { showError(e); }
}

function renderSummary() {
  const st = run.status, rep = run.report;
  const d = rep.diversity || {};
  const items = [
    ["Role", st.role], ["State", runState(st)], ["Parent", st.parent], ["Access", st.access],
    ["Lanes", laneCounts(st.lanes)], ["Created", fmtTime(st.created)], ["Updated", fmtTime(st.updated)],
    ["Exhausted groups", (st.exhausted || []).join(", ") || "none"],
    ["Provider diversity", (d.providers && d.providers.length ? "delivered by " + d.providers.join(", ") : "no provider delivered") +
      "; attempted " + ((d.attempted || []).join(", ") || "none") + "; " + (d.complete || 0) + "/" + (d.lanes || 0) + " lanes complete"],
    ["Summary", st.summary || rep.summary || ""],
  ];
  if (st.eligibility && st.eligibility.length && !st.final) {
    // status --run --json's eligibility: what the gate would say now.
    items.push(["Eligibility now", st.eligibility.map(e => e.provider + ": " +
      (e.verdict.eligible ? "eligible" : "excluded (" + e.verdict.code + ")")).join(", ")]);
  }
  document.getElementById("summary").replaceChildren(...items.map(([k, v]) => el("div", {}, el("dt", {}, k), el("dd", {}, v))));
}

function renderLanes() {
  const tl = run.timeline, st = run.status;
  const start = new Date(tl.start).getTime();
  const end = st.final ? new Date(tl.end).getTime() : Math.max(Date.now(), new Date(tl.end).getTime());
  const span = Math.max(end - start, 1);
  const pct = t => (100 * (new Date(t).getTime() - start) / span);
  const axis = document.getElementById("axis");
  axis.replaceChildren(el("span", {}, fmtTime(tl.start)), el("span", {}, fmtDur(span)), el("span", {}, st.final ? fmtTime(tl.end) : "now"));
  const rows = st.lanes.map((ls, i) => {
    const lt = tl.lanes[i] || { attempts: [], skipped: [], waits: [] };
    const rl = (run.report.lanes || [])[i] || { attempts: [] };
    const track = el("div", { class: "track" });
    for (const a of lt.attempts) {
      const stop = a.finished || (st.final ? tl.end : new Date(end).toISOString());
      const left = pct(a.launched), width = Math.max(pct(stop) - left, 0.6);
      const outcome = a.outcome || (a.finished ? "failed" : "running");
      const ra = rl.attempts.find(r => r.executionId === a.executionId);
      const contained = ra && ra.containment ? " — containment " + ra.containment : "";
      track.append(el("button", {
        class: "bar outcome-" + outcome, style: "left:" + left + "%;width:" + width + "%",
        title: a.descriptor + " — " + outcome + (a.finished ? " after " + fmtDur(new Date(a.finished) - new Date(a.launched)) : " (running)") + contained,
        "data-containment": ra && ra.containment ? ra.containment : null,
        "data-execution": a.executionId, "data-outcome": outcome,
        onclick: () => showAttempt(i, a),
      }, a.descriptor + " · " + outcome));
    }
    for (const w of lt.waits) {
      const stop = w.to || new Date(end).toISOString();
      track.append(el("div", { class: "bar wait", style: "left:" + pct(w.from) + "%;width:" + Math.max(pct(stop) - pct(w.from), 0.6) + "%",
        title: "waiting for the parent's " + w.kind + (w.answer ? " — " + w.answer : "") }, w.kind));
    }
    const skips = rl.attempts.filter(a => a.skipped);
    for (const [k, a] of skips.entries()) {
      const mark = lt.skipped.find(s => s.attemptIndex === a.attemptIndex);
      track.append(el("span", { class: "skip", style: "left:" + Math.min(mark ? pct(mark.at) : 0, 60) + "%;margin-left:" + (k * 4) + "px",
        title: a.descriptor + " skipped: " + (a.code || "") + (a.cause ? " — " + a.cause : "") }, "⤳ " + a.descriptor + " skipped (" + (a.code || "skipped") + ")"));
    }
    const head = el("div", { class: "lane-head" },
      el("div", { class: "title", onclick: () => selectLane(i) }, "Lane " + i + " ", el("span", { class: "state " + ls.state }, ls.state)),
      el("div", { class: "why" }, ls.laneId),
      ls.waitingFor ? el("div", { class: "why" }, "waiting for " + ls.waitingFor) : null,
      ls.reason ? el("div", { class: "why" }, ls.reason) : null);
    const forms = answerForms(ls);
    return el("div", { class: "lane" + (i === run.selected ? " selected" : ""), "data-lane": i, "data-state": ls.state }, head, track,
      forms.length ? el("div", { class: "answers" }, forms) : null);
  });
  document.getElementById("lanes").replaceChildren(...rows);
}

function selectLane(i) {
  run.selected = i;
  for (const row of document.querySelectorAll(".lane")) row.classList.toggle("selected", Number(row.dataset.lane) === i);
  const ls = run.status && run.status.lanes[i];
  if (!ls) return;
  document.getElementById("machine-lane").textContent = "— lane " + i + " is " + ls.state;
  for (const g of document.querySelectorAll("svg.machine .state")) g.classList.toggle("current", g.dataset.state === ls.state);
}

function field(name, label, attrs) {
  return el("label", {}, label + " ", el("input", Object.assign({ name, required: "required" }, attrs || {})));
}

function answerForms(ls) {
  const forms = [];
  const mk = (kind, title, ...fields) => {
    const f = el("form", { class: "answer", method: "post", action: "/runs/" + encodeURIComponent(run.id) + "/lanes/" + ls.lane + "/answer", "data-kind": kind },
      el("span", { class: "kind" }, title),
      el("input", { type: "hidden", name: "kind", value: kind }),
      ...fields, el("button", { type: "submit" }, "Send"), el("span", { class: "result" }));
    f.addEventListener("submit", submitAnswer);
    return f;
  };
  const select = (name, opts) => el("select", { name }, ...opts.map(o => el("option", { value: o }, o)));
  switch (ls.waitingFor) {
  case "verdict":
    forms.push(mk("verdict", "Inspection verdict (switchyard inspect)", select("state", ["clear", "unsafe"]), field("evidence", "evidence", { placeholder: "notes/inspect.md" })));
    break;
  case "operation":
    if (!ls.pending) {
      // validate and begin run beside the worktree, with the CLI.
      forms.push(el("div", { class: "why" }, "Operation " + (ls.operation ? ls.operation.kind : "") +
        " not begun: run switchyard operation validate, then operation begin, before performing it."));
    }
    forms.push(mk("operation", "Settle the operation (switchyard operation done)" + (ls.operation ? ": " + ls.operation.kind : ""),
      select("result", ["succeeded", "failed", "rejected"]), field("ref", "ref", { required: null, placeholder: "commit or log" }),
      field("detail", "detail", { required: null, placeholder: "why, for failed or rejected" })));
    break;
  case "recovery":
    forms.push(mk("recover", "Recovery (switchyard recover)", select("decision", ["decline", "clear"]), field("evidence", "evidence"),
      ...["correction", "blockageId", "snapshotRef", "snapshotDigest", "partialWorkRef", "sideEffectsRef", "stoppedWritersRef"].map(n => field(n, n, { required: null }))));
    break;
  }
  if (ls.state && !["complete", "stopped", "cancelled"].includes(ls.state)) {
    forms.push(mk("cancel", "Cancel this lane (switchyard cancel)", field("reason", "reason", { required: null, placeholder: "why" })));
  }
  return forms;
}

async function submitAnswer(ev) {
  ev.preventDefault();
  const f = ev.target;
  const out = f.querySelector(".result");
  out.textContent = "sending…";
  out.className = "result";
  try {
    const r = await api(f.action, { method: "POST", body: new URLSearchParams(new FormData(f)),
      headers: { Accept: "application/json" } });
    if (!r.ok) throw await failure(r, "answer");
    const body = await r.json();
    out.textContent = body.message;
    out.className = "result note";
  } catch (e) {
    out.textContent = e.message;
    out.className = "result error";
  }
}

async function showAttempt(lane, a) {
  const box = document.getElementById("attempt");
  box.classList.remove("muted");
  const base = "/api/v1/runs/" + encodeURIComponent(run.id) + "/lanes/" + lane + "/executions/" + encodeURIComponent(a.executionId) + "/";
  const part = async name => {
    const r = await api(base + name);
    let text = await r.text();
    if (!r.ok) { try { text = JSON.parse(text).error.message; } catch (_) { /* plain */ } }
    else if (name !== "output") { try { text = JSON.stringify(JSON.parse(text), null, 2); } catch (_) { /* as is */ } }
    if (r.headers.get("X-Switchyard-Truncated")) text += "\n… (cut at " + r.headers.get("X-Switchyard-Truncated") + " bytes)";
    return el("details", { open: name === "receipt" ? "open" : null }, el("summary", {}, name), el("pre", {}, text));
  };
  box.replaceChildren(el("p", {}, el("b", {}, a.descriptor), " · execution ", el("code", {}, a.executionId), " · ", a.outcome || "running",
    a.workerId ? " · worker " + a.workerId : ""), "loading…");
  const parts = await Promise.all(["receipt", "progress", "output"].map(part));
  box.replaceChildren(box.firstChild, ...parts);
}

document.addEventListener("DOMContentLoaded", async () => {
  try { await signIn(); } catch (e) { showError(e); return; }
  if (document.body.dataset.page === "runs") runsPage();
  else runPage();
});
