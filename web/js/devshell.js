// Throwaway dev shell (not committed): the app contract, minimal.
import { html, render } from "./vendor/lit-html.js";
import dict from "./i18n/table.js";
import { tablePage } from "./pages/table.js";
import { matchPage } from "./pages/match.js";
const handlers = {}; const ready = []; const waiting = {}; let id = 0; let ws;
const net = {
  request(type, payload) { const i = ++id; ws.send(JSON.stringify({ type, id: i, payload })); return new Promise((res, rej) => (waiting[i] = { res, rej })); },
  send(type, payload) { ws.send(JSON.stringify({ type, payload })); },
  on(type, h) { (handlers[type] ||= []).push(h); return () => handlers[type].splice(handlers[type].indexOf(h), 1); },
  onReady(h) { ready.push(h); return () => ready.splice(ready.indexOf(h), 1); },
};
const app = { net, session: null, settings: { lang: "en", sound: false, autoPass: false, aids: false }, saveSettings() {}, lang: new URLSearchParams(location.search).get("lang") || "en",
  t(key, p = {}) { const s = dict[app.lang][key] ?? key; return s.replace(/\{(\w+)\}/g, (_, k) => p[k] ?? `{${k}}`); },
  navigate(h) { location.hash = h; }, refresh() { queueMicrotask(draw); }, toast(x) { console.log("toast", x); } };
window.app = app;
let page = null;
function route() {
  page?.leave(app); page = null;
  const parts = location.hash.slice(2).split("/");
  if (parts[0] === "table" || parts[0] === "watch") { page = tablePage; page.enter(app, { table: parts[1], mode: parts[0] === "watch" ? "watch" : "play" }); }
  if (parts[0] === "match") { page = matchPage; page.enter(app, { id: parts[1], hand: parts[2], step: parts[3] }); }
  draw();
}
async function playNow() {
  const t = await net.request("create_table", { rules: new URLSearchParams(location.search).get("rules") || "mcr" });
  await net.request("join_table", { table: t.table, seat: 0 });
  await net.request("add_bots", { table: t.table, bot: "default" });
  location.hash = `#/table/${t.table}`;
}
function draw() { render(html`<header><button id="playnow" @click=${playNow}>Play now</button> ${app.session?.username}</header>${page ? page.view(app) : ""}`, document.getElementById("app")); }
ws = new WebSocket(`ws://${location.host}/ws`);
ws.onmessage = (m) => { const msg = JSON.parse(m.data); if (msg.reply_to != null && waiting[msg.reply_to]) { const w = waiting[msg.reply_to]; delete waiting[msg.reply_to]; if (msg.type === "error") { const e = new Error(msg.payload.reason); Object.assign(e, msg.payload); w.rej(e); } else w.res(msg.payload); return; } (handlers[msg.type] || []).forEach((h) => h(msg.payload)); };
ws.onopen = async () => { await net.request("hello", { versions: [1] }); const tok = sessionStorage.getItem("tok"); let s; try { s = tok ? await net.request("resume", { token: tok }) : await net.request("guest", {}); } catch { s = await net.request("guest", {}); } sessionStorage.setItem("tok", s.token); app.session = s; ready.forEach((h) => h()); route(); };
window.addEventListener("hashchange", route);
