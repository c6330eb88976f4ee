// The ladder queue (protocol: queue_join / queue_leave, the server's `queue` messages): "Find
// a rated match" (registered accounts) and "Quick casual match" (anyone), on the home page
// and in the lobby. While waiting, `app.queue` holds the server's last word (players in
// the queue, time waited, the rating gap accepted) and the box ticks every second; on
// `matched` the server has seated and attached this connection: the client goes to the
// table. A dropped connection leaves the queue on the server: the client queues again
// once it is back, after a reload of the page too (the tab remembers the wait).
import { html, nothing } from "./vendor/lit-html.js";
import { chosenLevel, levelName } from "./bots.js";
import { clockText, ratingText } from "./rating.js";
import { readJson, writeJson } from "./storage.js";

const TICK_MS = 1000;
// This tab's wait, `{casual, ladder}`, kept while it lasts so that a reload queues again.
const WAIT_KEY = "guobiao.queue";

/** The tab's storage (sessionStorage); null where there is none to be had (`readJson` and
 * `writeJson` then keep nothing). */
function tabStorage() {
  try {
    return globalThis.sessionStorage || null;
  } catch {
    return null; // (a sandboxed page may refuse it)
  }
}

function remember(queue) {
  writeJson(tabStorage(), WAIT_KEY, queue ? { casual: queue.casual, ladder: queue.ladder } : null);
}

function remembered() {
  const wait = readJson(tabStorage(), WAIT_KEY, null);
  return wait && typeof wait === "object" ? wait : null;
}

/** Whether this session may play rated matches (a registered account). */
export function registered(app) {
  return Boolean(app.session && !app.session.guest);
}

/** Seconds waited now, from the server's figure and when it came (`at`, Date.now() ms). */
export function waitedNow(queue, nowMs = Date.now()) {
  return (queue.waited_seconds || 0) + Math.max(0, nowMs - queue.at) / 1000;
}

/** Hooks the queue's messages and reconnections into the app (called by createApp). */
export function attachQueue(app) {
  app.queue = null; // {casual, ladder, size, waited_seconds, gap, at} while waiting
  app.queueError = "";
  app.queueErrorTable = null; // the table a refusal names (already_seated: hers), to go to
  app.queueBusy = false;
  app.queueSizes = null; // GET /api/queue's `queues`, when home or the lobby opened
  let ticker = null;

  const set = (queue) => {
    app.queue = queue;
    remember(queue);
    if (queue && !ticker) ticker = setInterval(() => app.refresh(), TICK_MS);
    if (!queue && ticker) {
      clearInterval(ticker);
      ticker = null;
    }
    app.refresh();
  };

  const heard = (payload) => {
    if (payload.state === "waiting") return set({ ...payload, at: Date.now() });
    set(null);
    if (payload.state === "left" && app.queueSizes) loadQueueSizes(app); // the box is back
    if (payload.state === "matched" && payload.table) app.navigate(`#/table/${encodeURIComponent(payload.table)}`);
  };

  const ask = async (type, payload, again = false) => {
    app.queueBusy = true;
    app.queueError = "";
    app.queueErrorTable = null;
    app.refresh();
    try {
      heard(await app.net.request(type, payload));
    } catch (error) {
      // Queuing again on its own (after a reload), one seated meanwhile is simply not.
      if (!(again && error.code === "already_seated")) {
        app.queueError = app.errorText(error);
        app.queueErrorTable = error.table || null;
      }
      if (type === "queue_join") set(null);
    } finally {
      app.queueBusy = false;
      app.refresh();
    }
  };

  app.net.on("queue", heard);
  app.net.onReady(() => {
    // The server forgot this connection's place when it dropped (or the page was reloaded
    // while waiting): queue again.
    const wait = app.queue || remembered();
    if (wait && app.session) ask("queue_join", joinPayload(wait.casual, wait.ladder, chosenLevel(app)), true);
  });

  app.joinQueue = async (casual) => {
    if (!casual && !registered(app)) {
      app.queueError = app.t("app.error.not_registered");
      return app.refresh();
    }
    if (!app.session) {
      try {
        await app.guest(); // a casual match needs no more than a guest session
      } catch (error) {
        app.queueError = app.errorText(error);
        return app.refresh();
      }
    }
    return ask("queue_join", joinPayload(casual, null, chosenLevel(app)));
  };
  app.leaveQueue = () => ask("queue_leave", {});
}

/** The queues' sizes now (GET /api/queue), for the box's line "waiting now"; a server
 * without the queue has none, and the box says nothing. */
export async function loadQueueSizes(app) {
  try {
    const response = await fetch("/api/queue");
    app.queueSizes = response.ok ? (await response.json()).queues : null;
  } catch {
    app.queueSizes = null;
  }
  app.refresh();
}

/** "Waiting now: 3 for a rated match, 1 for a casual one." (nothing when both are empty). */
export function sizesText(app, queues) {
  if (!queues) return "";
  const count = (casual) => queues.filter((q) => q.casual === casual).reduce((n, q) => n + q.size, 0);
  const rated = count(false);
  const casual = count(true);
  return rated || casual ? app.t("app.queue.waiting_now", { rated, casual }) : "";
}

/** The queue_join payload: the casual queue, with `bot` the level of the bots that may
 * fill its table, or the rated one (of `ladder`, or the server's first ladder). */
export function joinPayload(casual, ladder, bot = null) {
  if (casual) return bot ? { casual: true, bot } : { casual: true };
  return ladder ? { ladder } : {};
}

/** The way to the table a refusal names (`already_seated`: the one where the player sits;
 * leaving her match in play keeps her seat there), or nothing. */
export function tableLink(app, table) {
  if (!table) return nothing;
  return html`<a class="button" href="#/table/${encodeURIComponent(table)}">${app.t("app.error.to_table", { table })}</a>`;
}

/** The box on home and in the lobby: the two buttons, or the wait with its Cancel. */
export function queueBox(app) {
  const t = app.t;
  const q = app.queue;
  const error = app.queueError
    ? html`<p class="error" role="alert">${app.queueError}</p>${tableLink(app, app.queueErrorTable)}`
    : nothing;
  if (q) {
    return html`<section class="card queue waiting" aria-labelledby="queue-title">
      <h2 id="queue-title">${t(q.casual ? "app.queue.looking_casual" : "app.queue.looking_rated")}</h2>
      <dl class="queue-facts" role="status">
        <div><dt>${t("app.queue.size")}</dt><dd class="queue-size">${q.size ?? "–"}</dd></div>
        <div><dt>${t("app.queue.waited")}</dt><dd class="queue-waited">${clockText(waitedNow(q))}</dd></div>
        ${!q.casual && q.gap !== null && q.gap !== undefined
          ? html`<div><dt>${t("app.queue.gap")}</dt><dd class="queue-gap">±${ratingText(app.lang, q.gap)}</dd></div>`
          : nothing}
      </dl>
      <p class="hint">${t(q.casual ? "app.queue.hint_casual" : "app.queue.hint_rated", { level: levelName(t, chosenLevel(app)) })}</p>
      <button class="button" type="button" ?disabled=${app.queueBusy} @click=${() => app.leaveQueue()}>${t("app.queue.cancel")}</button>
      ${error}
    </section>`;
  }
  const mayRate = registered(app);
  return html`<section class="card queue" aria-labelledby="queue-title">
    <h2 id="queue-title">${t("app.queue.title")}</h2>
    <div class="button-row">
      <button class="button primary" type="button" ?disabled=${app.queueBusy || !mayRate}
        aria-describedby=${mayRate ? nothing : "queue-why"} @click=${() => app.joinQueue(false)}>${t("app.queue.rated")}</button>
      <button class="button" type="button" ?disabled=${app.queueBusy} @click=${() => app.joinQueue(true)}>${t("app.queue.casual")}</button>
    </div>
    ${sizesText(app, app.queueSizes) ? html`<p class="queue-sizes">${sizesText(app, app.queueSizes)}</p>` : nothing}
    <p class="hint" id="queue-why">${t(mayRate ? "app.queue.about" : "app.queue.register_first")}
      <a href="#/ladder">${t("app.queue.see_ladder")}</a></p>
    ${error}
  </section>`;
}
