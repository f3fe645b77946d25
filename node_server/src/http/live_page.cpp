// The live page: one HTML document with its styles and script inline, served by
// http_server. It reads /api/events (status, a few times a second) and polls /api/spikes for
// the raster and the rates; the status brings the plastic weights' histograms of the last
// freeze; its buttons post to /api/control. Nothing is fetched from
// elsewhere. The token, when the page was opened with ?token=, goes with every request.
// On a node that does not lead, it shows that node's status and links to the lead's page;
// when the lead stops answering, it moves to its standby's page (docs/live.md).
#include "http/http_server.hpp"

namespace dnnc::node_server {

const std::string& live_page() {
    static const std::string page = R"PAGE(<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>dnnc live</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>
body{font:14px system-ui,sans-serif;margin:0;background:#f6f7f9;color:#222}
header{background:#1d2b3a;color:#fff;padding:10px 16px;display:flex;gap:24px;align-items:baseline;flex-wrap:wrap}
header h1{font-size:18px;margin:0}
header .v{font-weight:600;font-variant-numeric:tabular-nums}
main{display:grid;grid-template-columns:minmax(360px,1fr) minmax(360px,1fr);gap:12px;padding:12px}
section{background:#fff;border:1px solid #d8dde3;border-radius:6px;padding:10px}
section h2{font-size:14px;margin:0 0 8px 0;color:#445}
table{border-collapse:collapse;width:100%;font-variant-numeric:tabular-nums}
td,th{border-bottom:1px solid #eee;padding:3px 6px;text-align:right}
td:first-child,th:first-child{text-align:left}
.dead{color:#b00020;font-weight:600}
button{font:inherit;padding:4px 12px;margin-right:6px;border:1px solid #889;border-radius:4px;background:#fff;cursor:pointer}
button:hover{background:#eef}
#events{font:12px monospace;max-height:160px;overflow:auto;white-space:pre}
canvas{width:100%;background:#fff;border:1px solid #eee}
.wide{grid-column:1 / span 2}
#error{color:#b00020}
#elsewhere a{color:#ffd479}
</style></head>
<body>
<header><h1>dnnc <span id="network">-</span></h1>
<span>node <span class="v" id="node">-</span></span>
<span>state <span class="v" id="state">-</span></span>
<span>tick <span class="v" id="tick">-</span></span>
<span>simulated <span class="v" id="simtime">-</span></span>
<span>ticks/s <span class="v" id="tps">-</span></span>
<span>real-time factor <span class="v" id="rtf">-</span></span>
<span>signals/s <span class="v" id="sps">-</span></span>
<span id="error"></span><span id="elsewhere"></span></header>
<main>
<section><h2>Clock</h2>
<button id="b-resume">Start / resume</button><button id="b-freeze">Freeze</button>
<button id="b-step">Step 1</button><button id="b-step100">Step 100</button><button id="b-checkpoint">Checkpoint (frozen)</button><button id="b-snapshot">Snapshot (frozen)</button>
<div id="control-answer" style="margin-top:6px;font-size:12px;color:#555"></div>
<h2 style="margin-top:10px">Events</h2><div id="events"></div></section>
<section><h2>Cluster</h2><svg id="graph" viewBox="0 0 400 260" width="100%" height="260"></svg></section>
<section><h2>Nodes</h2><table id="nodes"><thead><tr><th>node</th><th>address</th><th>roles</th><th>capacity</th><th>neurons</th><th>tick</th><th>signals sent</th><th>ms/tick</th><th>of it, CPU wait</th><th>alive</th></tr></thead><tbody></tbody></table>
<h2 style="margin-top:10px">Links</h2><table id="links"><thead><tr><th>from</th><th>to</th><th>latency ms</th><th>round trip ms</th><th>signals/s</th><th>flags</th></tr></thead><tbody></tbody></table></section>
<section><h2>Partition</h2><table id="partition"><thead></thead><tbody></tbody></table><div id="cut" style="margin-top:6px;font-size:12px"></div></section>
<section class="wide"><h2>Raster <span id="raster-note" style="font-weight:normal;font-size:12px"></span></h2><canvas id="raster" width="1200" height="300"></canvas></section>
<section class="wide"><h2>Population rates (Hz)</h2><canvas id="rates" width="1200" height="200"></canvas><div id="rates-legend" style="font-size:12px"></div></section>
<section class="wide" id="structure-section" hidden><h2>Structure <span id="structure-note" style="font-weight:normal;font-size:12px"></span></h2><div id="structure"></div></section>
<section class="wide" id="weights-section" hidden><h2>Weights <span id="weights-note" style="font-weight:normal;font-size:12px"></span></h2><div id="weights"></div></section>
</main>
<script type="application/json" id="status-at-load"></script>
<script>
"use strict";
const token = new URLSearchParams(location.search).get("token");
const auth = token ? {"Authorization": "Bearer " + token} : {};
const q = token ? "token=" + encodeURIComponent(token) : "";
const $ = id => document.getElementById(id);
const colors = ["#1f77b4","#d62728","#2ca02c","#ff7f0e","#9467bd","#8c564b","#e377c2","#17becf","#7f7f7f","#bcbd22"];
let last = null, lastAt = 0, dt = 0.1;
function esc(s){return String(s).replace(/[&<>"']/g,c=>({"&":"&amp;","<":"&lt;",">":"&gt;","\"":"&quot;","'":"&#39;"}[c]));}
function fmt(x,d){return (x===undefined||x===null)?"-":Number(x).toFixed(d);}
function logEvent(text){const e=$("events");e.textContent=new Date().toLocaleTimeString()+"  "+text+"\n"+e.textContent;}

// Another node's page, opened as this one was (the same token opens it), without ?click.
function pageAt(address){
  const p = new URLSearchParams(location.search); p.delete("click");
  return "http://" + address + "/?" + p.toString();
}
// When the lead stops answering, the page moves to its standby's page, which shows the run
// again once the standby has taken over.
let standbyPage = null, answeredAt = performance.now();
function answered(s){
  answeredAt = performance.now();
  if (s.role !== "lead") return;
  const n = (s.nodes || []).find(n => n.id === s.standby_node);
  standbyPage = n && n.page ? n.page : null;
}
// The status the node served the page with (http_server.cpp): where the standby's page is,
// even if the lead dies before the page's first request.
try { answered(JSON.parse($("status-at-load").textContent)); } catch (e) {}
function followLead(){
  if (standbyPage && performance.now() - answeredAt > 2000) location.replace(pageAt(standbyPage));
}

function showStatus(s){
  answered(s);
  if (s.error && !s.nodes) { $("error").textContent = s.error; return; }
  const link = address => "<a href=\"" + esc(pageAt(address)) + "\">its page</a>";
  $("elsewhere").innerHTML = s.role === "lead" ? (standbyPage ? "standby " + esc(s.standby_node) + ", " + link(standbyPage) : "")
    : s.lead ? "not the lead: the lead is " + esc(s.lead) + (s.lead_page ? ", " + link(s.lead_page) : "") : "";
  $("network").textContent = s.network || "-";
  $("node").textContent = s.node || "-";
  $("state").textContent = s.state || "-";
  $("tick").textContent = s.tick;
  $("error").textContent = s.error || "";
  if (s.dt_ms) dt = s.dt_ms;
  $("simtime").textContent = s.tick >= 0 ? fmt((s.tick + 1) * dt / 1000, 3) + " s" : "-";
  $("tps").textContent = fmt(s.ticks_per_second, 0);
  $("rtf").textContent = s.ticks_per_second ? fmt(s.ticks_per_second * dt / 1000, 3) : "-";
  const now = performance.now();
  const sps = last && s.signals_sent !== undefined ? perSecond(s, s.signals_sent, last.signals_sent) : undefined;
  if (sps !== undefined) $("sps").textContent = fmt(sps, 0);
  if (last) {
    if (last.state !== s.state) logEvent("state " + last.state + " -> " + s.state);
    if (s.last_checkpoint && s.last_checkpoint !== last.last_checkpoint) logEvent("checkpoint " + s.last_checkpoint);
    const was = new Set(last.dead || []);
    for (const d of (s.dead || [])) if (!was.has(d)) logEvent("node lost: " + d);
    const now_dead = new Set(s.dead || []);
    for (const d of was) if (!now_dead.has(d)) logEvent("node back: " + d);
    if (s.error && s.error !== last.error) logEvent("error: " + s.error);
    if (last.network !== s.network) logEvent("network " + s.network);
    const seen = new Set((last.moves || []).map(moveKey));
    for (const m of (s.moves || [])) if (!seen.has(moveKey(m))) logEvent(moveText(m));
  } else {
    logEvent("connected: " + (s.network || "no network") + ", state " + s.state);
    for (const m of (s.moves || [])) logEvent(moveText(m));
  }
  measureLinks(s); showNodes(s); showGraph(s); showPartition(s); showWeights(s); showStructure(s);
  last = s; lastAt = now;
}

// A move of neurons (growth, re-balance, join, drain; the status's "moves"): what moved
// where, and the pause.
function moveKey(m){ return m.tick + " " + m.what; }
function moveText(m){
  return m.what + " at tick " + m.tick + ": " + m.moved + " neurons moved (" +
    (m.nodes || []).map(n => n.id + " " + n.before + "\u2192" + n.after + (n.kept ? " kept its engine" : n.prepared ? " built ahead" : "")).join(", ") + "), paused " + fmt(m.paused_ms, 0) + " ms";
}

// A count's rate per second of the run: its growth per tick since the last status, times the
// lead's ticks per second (the run's clock, not the browser's).
function perSecond(s, now, before){
  if (s.state !== "running") return 0;
  if (!last || s.tick <= last.tick) return undefined;  // no tick since: keep what was shown
  return Math.max(0, now - before) / (s.tick - last.tick) * (s.ticks_per_second || 0);
}
// Signals per second over each link.
let linkRates = {};
function linkRate(l){ return linkRates[l.from + "|" + l.to]; }
function measureLinks(s){
  for (const l of (s.links || [])) {
    const was = last && (last.links || []).find(m => m.from === l.from && m.to === l.to);
    const rate = was && l.signals_sent !== undefined && was.signals_sent !== undefined ? perSecond(s, l.signals_sent, was.signals_sent) : undefined;
    if (rate !== undefined) linkRates[l.from + "|" + l.to] = rate;
  }
}
function showNodes(s){
  const rows = (s.nodes || []).map(n => "<tr><td>" + esc(n.id) + "</td><td>" + esc(n.address) + "</td><td>" + esc(n.roles.join(",")) +
    "</td><td>" + n.capacity + "</td><td>" + n.neurons + "</td><td>" + (n.completed ?? "-") + "</td><td>" + (n.signals_sent ?? "-") +
    "</td><td>" + (n.ms_per_tick === undefined ? "-" : fmt(n.ms_per_tick, 4)) +
    "</td><td>" + (n.cpu_wait_ms_per_tick === undefined ? "-" : fmt(n.cpu_wait_ms_per_tick, 4)) +
    "</td><td class=\"" + (n.alive ? "" : "dead") + "\">" + (n.alive ? "yes" : "DEAD") + "</td></tr>");
  $("nodes").tBodies[0].innerHTML = rows.join("");
  $("links").tBodies[0].innerHTML = (s.links || []).map(l => "<tr><td>" + esc(l.from) + "</td><td>" + esc(l.to) + "</td><td>" +
    fmt(l.latency_ms, 3) + "</td><td>" + fmt(l.round_trip_ms, 3) + "</td><td>" + fmt(linkRate(l), 0) + "</td><td>" + (l.clamped ? "clamped " : "") + (l.noisy ? "noisy" : "") + "</td></tr>").join("");
}

function showGraph(s){
  // Nodes on an ellipse as wide as the panel allows, so that the links' labels stay apart;
  // a node's caption on the side away from the centre, where the links are not.
  const nodes = s.nodes || [], W = 400, H = 260, RX = W / 2 - 70, RY = H / 2 - 40;
  const pos = {}, maxCap = Math.max(1, ...nodes.map(n => n.capacity)), maxNeurons = Math.max(1, ...nodes.map(n => n.neurons));
  nodes.forEach((n, i) => { const a = 2 * Math.PI * i / Math.max(1, nodes.length) - Math.PI / 2;
    pos[n.id] = nodes.length === 1 ? [W/2, H/2] : [W/2 + RX * Math.cos(a), H/2 + RY * Math.sin(a)]; });
  let svg = "";
  for (const l of (s.links || [])) { const a = pos[l.from], b = pos[l.to]; if (!a || !b) continue;
    svg += "<line x1=\"" + a[0] + "\" y1=\"" + a[1] + "\" x2=\"" + b[0] + "\" y2=\"" + b[1] + "\" stroke=\"#889\" stroke-width=\"2\"/>";
    svg += "<text x=\"" + (a[0]+b[0])/2 + "\" y=\"" + ((a[1]+b[1])/2 - 4) + "\" font-size=\"10\" text-anchor=\"middle\" fill=\"#556\">" + fmt(l.latency_ms, 3) + " ms" +
      (linkRate(l) !== undefined ? " · " + fmt(linkRate(l), 0) + " sig/s" : "") + "</text>"; }
  for (const n of nodes) { const p = pos[n.id], r = 12 + 16 * Math.sqrt(n.capacity / maxCap);
    const load = n.neurons / maxNeurons;
    svg += "<circle cx=\"" + p[0] + "\" cy=\"" + p[1] + "\" r=\"" + r + "\" fill=\"" + (n.alive ? "hsl(" + (210 - 180 * load) + ",60%,75%)" : "#f3c") +
      "\" stroke=\"" + (n.alive ? "#335" : "#b00020") + "\" stroke-width=\"" + (n.alive ? 1.5 : 3) + "\"><title>" + esc(n.id) + ": capacity " + n.capacity + ", " + n.neurons + " neurons</title></circle>";
    svg += "<text x=\"" + p[0] + "\" y=\"" + (p[1] + 4) + "\" font-size=\"12\" text-anchor=\"middle\" font-weight=\"600\">" + esc(n.id) + (n.alive ? "" : " ✗") + "</text>";
    svg += "<text x=\"" + p[0] + "\" y=\"" + (p[1] < H / 2 - 1 ? p[1] - r - 4 : p[1] + r + 12) + "\" font-size=\"10\" text-anchor=\"middle\" fill=\"#445\">cap " + n.capacity + " · " + n.neurons + " n</text>"; }
  $("graph").innerHTML = svg;
}

function showPartition(s){
  const nodes = s.nodes || [], pops = s.populations || [];
  $("partition").tHead.innerHTML = "<tr><th>population</th><th>size</th>" + nodes.map(n => "<th>" + esc(n.id) + "</th>").join("") + "</tr>";
  $("partition").tBodies[0].innerHTML = pops.map(p => "<tr><td>" + esc(p.id) + "</td><td>" + p.size + "</td>" +
    p.nodes.map(c => "<td>" + (c || "") + "</td>").join("") + "</tr>").join("");
  $("cut").textContent = s.edge_cut !== undefined ? "edge cut " + s.edge_cut + ", imbalance " + fmt(s.imbalance, 3) : "";
}

// The plastic weights' histograms, one per plastic projection: the nodes bin them while the
// network is frozen, so they are those of the last freeze (or sample of dnnc run --weights-every).
function showWeights(s){
  const w = s.weight_histograms;
  $("weights-section").hidden = !w;
  if (!w) return;
  $("weights-note").textContent = "(at tick " + w.tick + (w.tick !== s.tick ? ", the last freeze" : "") + "; " + w.bins + " bins per projection)";
  $("weights").innerHTML = w.projections.map(histogram).join("");
}
function histogram(p){
  const W = 360, H = 130, base = H - 18, high = base - 6, top = Math.max(1, ...p.bins), width = W / p.bins.length;
  const edge = k => fmt(p.lo + k * (p.hi - p.lo) / p.bins.length, 3);
  const bars = p.bins.map((c, k) => { const h = high * c / top;
    return "<rect x=\"" + (k * width + 1) + "\" y=\"" + (base - h) + "\" width=\"" + (width - 2) + "\" height=\"" + h + "\" fill=\"#1f77b4\"><title>" +
      edge(k) + " to " + edge(k + 1) + ": " + c + "</title></rect>"; }).join("");
  return "<figure style=\"display:inline-block;margin:0 16px 8px 0\"><svg class=\"weights\" data-projection=\"" + esc(p.projection) + "\" data-synapses=\"" +
    p.synapses + "\" viewBox=\"0 0 " + W + " " + H + "\" width=\"" + W + "\" height=\"" + H + "\" font-size=\"10\">" + bars +
    "<line x1=\"0\" x2=\"" + W + "\" y1=\"" + base + "\" y2=\"" + base + "\" stroke=\"#889\"/><text x=\"0\" y=\"" + (H - 4) + "\">" + edge(0) +
    "</text><text x=\"" + W + "\" y=\"" + (H - 4) + "\" text-anchor=\"end\">" + edge(p.bins.length) + "</text></svg><figcaption style=\"font-size:12px\">" +
    esc(p.projection) + " (" + esc(p.model) + "): " + p.synapses + " synapses" + (p.synapses ? ", " + fmt(p.min, 3) + " to " + fmt(p.max, 3) : "") +
    "</figcaption></figure>";
}

// Structural plasticity: the grown synapses onto each population and its mean calcium at the
// lead's newest structural updates (one row per population and update).
function showStructure(s){
  const rows = s.structure;
  $("structure-section").hidden = !rows || !rows.length;
  if (!rows || !rows.length) return;
  const W = 1200, H = 200, pad = 30, t0 = rows[0].t_ms, t1 = Math.max(t0 + 1, rows[rows.length - 1].t_ms);
  const top = Math.max(1, ...rows.map(r => r.connections_in));
  const by = {};
  for (const r of rows) (by[r.population] = by[r.population] || []).push(r);
  const x = t => pad + (W - 2 * pad) * (t - t0) / (t1 - t0), y = c => H - pad - (H - 2 * pad) * c / top;
  const lines = Object.keys(by).map((p, k) => { const list = by[p], newest = list[list.length - 1];
    return "<polyline fill=\"none\" stroke=\"" + colors[k % colors.length] + "\" stroke-width=\"2\" data-population=\"" + esc(p) +
      "\" data-connections=\"" + newest.connections_in + "\" points=\"" + list.map(r => x(r.t_ms) + "," + y(r.connections_in)).join(" ") + "\"/>" +
      "<text x=\"" + (W - pad) + "\" y=\"" + (14 + 14 * k) + "\" text-anchor=\"end\" fill=\"" + colors[k % colors.length] + "\">" + esc(p) + ": " +
      newest.connections_in + " grown synapses, mean Ca " + fmt(newest.mean_ca, 4) + "</text>"; }).join("");
  $("structure-note").textContent = "(grown synapses onto each population, " + fmt(t0 / 1000, 1) + " to " + fmt(t1 / 1000, 1) + " s)";
  $("structure").innerHTML = "<svg id=\"structure-chart\" viewBox=\"0 0 " + W + " " + H + "\" width=\"100%\" height=\"" + H + "\" font-size=\"12\">" +
    "<line x1=\"" + pad + "\" x2=\"" + (W - pad) + "\" y1=\"" + (H - pad) + "\" y2=\"" + (H - pad) + "\" stroke=\"#889\"/>" +
    "<text x=\"" + pad + "\" y=\"" + (H - 10) + "\">0 to " + top + " synapses</text>" + lines + "</svg>";
}

// Raster and rates: the spikes of the last `window` ticks of the lead's sample of each
// recorded group (g.sample: every g.every-th recorded neuron, at most 50; rates per sampled neuron).
const window_ = 1000;
let spikes = [], groups = [], nextFrom = 0, rateHistory = [];
// A grown population comes as one group per extent of its members: one row of the page each.
function byPopulation(list) {
  const merged = new Map();
  for (const g of list) {
    if (!merged.has(g.id)) merged.set(g.id, {id: g.id, extents: [], sampled: 0, sample: []});
    const m = merged.get(g.id);
    m.extents.push([g.first, g.size]);
    m.sampled += g.sampled || 0;
    m.sample = m.sample.concat(g.sample || []);
  }
  return [...merged.values()];
}
const holds = (g, n) => g.extents.some(([first, size]) => n >= first && n < first + size);
async function pollSpikes(){
  try {
    const r = await fetch("/api/spikes?from=" + nextFrom + (q ? "&" + q : ""), {headers: auth});
    if (!r.ok) throw new Error("spikes: HTTP " + r.status);
    const d = await r.json();
    groups = byPopulation(d.groups || []);
    if (d.dt) dt = d.dt;
    if (!d.recording) { $("raster-note").textContent = "(the network records no spikes: add <record> to it)"; }
    else $("raster-note").textContent = "(a sample of at most 50 neurons per population, last " + window_ + " ticks)";
    const fresh = d.spikes.filter(t => t[0] >= nextFrom);
    spikes = spikes.concat(fresh);
    const newest = d.completed;
    spikes = spikes.filter(t => t[0] > newest - window_);
    if (fresh.length || newest >= nextFrom) {
      const ticks = Math.max(1, newest + 1 - nextFrom);
      const counts = groups.map(() => 0);
      for (const [, ns] of fresh) for (const n of ns) { const k = groups.findIndex(g => holds(g, n)); if (k >= 0) counts[k]++; }
      if (newest >= nextFrom && nextFrom > 0) rateHistory.push(counts.map((c, k) => c / Math.max(1, groups[k].sampled) / (ticks * dt / 1000)));
      if (rateHistory.length > 240) rateHistory.shift();
      nextFrom = newest + 1;
    }
    drawRaster(newest); drawRates();
  } catch (e) { $("raster-note").textContent = String(e); }
}
function drawRaster(newest){
  const c = $("raster"), g = c.getContext("2d"), W = c.width, H = c.height;
  g.fillStyle = "#fff"; g.fillRect(0, 0, W, H);
  // A row per sampled neuron, each group's rows in its sample's order.
  const rowOf = new Map(); let total = 0;
  const offsets = groups.map(gr => { const o = total; (gr.sample || []).forEach((n, i) => rowOf.set(n, o + i)); total += (gr.sample || []).length; return o; });
  total = Math.max(1, total);
  g.font = "11px sans-serif";
  groups.forEach((gr, k) => { g.fillStyle = "#889"; g.fillRect(0, offsets[k] / total * H, W, 1); g.fillText(gr.id, 4, offsets[k] / total * H + 12); });
  let dots = 0;
  for (const [t, ns] of spikes) {
    const x = W - (newest - t + 1) / window_ * W;
    for (const n of ns) {
      const k = groups.findIndex(gr => holds(gr, n)), row = rowOf.get(n);
      if (k < 0 || row === undefined) continue;
      g.fillStyle = colors[k % colors.length];
      g.fillRect(x, row / total * H, 2, Math.max(1.5, H / total * 0.8));
      ++dots;
    }
  }
  c.dataset.dots = dots;  // what the raster shows, and where it is on the page, for a reader of the DOM
  const b = c.getBoundingClientRect();
  c.dataset.rect = [b.left + scrollX, b.top + scrollY, b.width, b.height].map(Math.round).join(",");
}
function drawRates(){
  const c = $("rates"), g = c.getContext("2d"), W = c.width, H = c.height;
  g.fillStyle = "#fff"; g.fillRect(0, 0, W, H);
  const top = Math.max(1, ...rateHistory.flat());
  g.fillStyle = "#556"; g.font = "11px sans-serif"; g.fillText(fmt(top, 1) + " Hz", 4, 12);
  groups.forEach((gr, k) => { g.strokeStyle = colors[k % colors.length]; g.lineWidth = 1.5; g.beginPath();
    rateHistory.forEach((r, i) => { const x = W * i / 239, y = H - 4 - (H - 20) * (r[k] || 0) / top; i ? g.lineTo(x, y) : g.moveTo(x, y); }); g.stroke(); });
  $("rates-legend").innerHTML = groups.map((gr, k) => "<span style=\"color:" + colors[k % colors.length] + "\">■ " + esc(gr.id) + " " +
    fmt(rateHistory.length ? rateHistory[rateHistory.length - 1][k] : 0, 1) + " Hz</span>").join(" &nbsp; ");
}

async function control(command){
  try {
    const r = await fetch("/api/control" + (q ? "?" + q : ""), {method: "POST", headers: Object.assign({"Content-Type": "application/json"}, auth), body: JSON.stringify(command)});
    const d = await r.json();
    $("control-answer").textContent = command.command + ": " + (r.ok ? "ok, state " + d.state : d.error);
    logEvent(command.command + (r.ok ? "" : " refused: " + d.error));
  } catch (e) { $("control-answer").textContent = String(e); }
}
$("b-resume").onclick = () => control({command: last && last.state === "idle" ? "start" : "resume"});
$("b-freeze").onclick = () => control({command: "freeze"});
$("b-step").onclick = () => control({command: "step", ticks: 1});
$("b-step100").onclick = () => control({command: "step", ticks: 100});
$("b-checkpoint").onclick = () => control({command: "checkpoint"});
// The snapshot comes back as a file (.dnncs, for dnnc restore), streamed; a download the
// node breaks off (the network ran on meanwhile) fails in r.blob(), never saved incomplete.
$("b-snapshot").onclick = async () => {
  try {
    const r = await fetch("/api/snapshot" + (q ? "?" + q : ""), {headers: auth});
    if (!r.ok) { const d = await r.json(); $("control-answer").textContent = "snapshot: " + d.error; logEvent("snapshot refused: " + d.error); return; }
    const a = document.createElement("a");
    a.href = URL.createObjectURL(await r.blob());
    a.download = (last && last.network ? last.network : "network") + "-" + (last ? last.tick + 1 : 0) + ".dnncs";
    a.click(); logEvent("snapshot saved");
  } catch (e) { $("control-answer").textContent = "snapshot: " + e; logEvent("snapshot failed: " + e); }
};
// ?click=ID presses a button once the page has loaded (scripted checks, kiosks).
const pressed = new URLSearchParams(location.search).get("click");

// The first status starts everything else. A node that cannot answer yet (busy taking over
// as the lead, restarting) is asked again; only a refused token ends the page.
async function first(){
  let r = null;
  try { r = await fetch("/api/status" + (q ? "?" + q : ""), {headers: auth}); } catch (e) {}
  if (r && r.status === 401) { $("error").textContent = "HTTP 401: open the page with ?token=TOKEN"; return; }
  if (!r || !r.ok) { $("error").textContent = "no answer from the node yet; asking again"; followLead(); setTimeout(first, 500); return; }
  showStatus(await r.json());
  if (new URLSearchParams(location.search).has("poll")) {
    // ?poll: status by polling instead of the event stream (for clients that cannot hold one open)
    setInterval(async () => { try { const s = await fetch("/api/status" + (q ? "?" + q : ""), {headers: auth}); if (s.ok) showStatus(await s.json()); } catch (e) {} }, 500);
  } else {
    const events = new EventSource("/api/events" + (q ? "?" + q : ""));
    events.onmessage = m => showStatus(JSON.parse(m.data));
    events.onerror = () => { $("error").textContent = "connection to the node lost; retrying"; };
  }
  setInterval(pollSpikes, 500); pollSpikes();
  setInterval(followLead, 500);
  if (pressed && $("b-" + pressed)) $("b-" + pressed).click();
}
first();
</script></body></html>
)PAGE";
    return page;
}

std::string live_page_with(const nlohmann::json& status) {
    // '<' only occurs inside the JSON's strings, where \u003c reads the same: no "</script>"
    // in it can end the element.
    std::string text;
    for (const char c : status.dump()) {
        if (c == '<')
            text += "\\u003c";
        else
            text += c;
    }
    static const std::string empty = R"(<script type="application/json" id="status-at-load"></script>)";
    std::string page = live_page();
    const auto at = page.find(empty) + empty.size() - std::string("</script>").size();
    page.insert(at, text);
    return page;
}

}  // namespace dnnc::node_server
