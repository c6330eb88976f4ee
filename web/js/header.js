// The header on every page: the name, the links, the way back to the player's table, the
// connection's state (shown with a countdown; told to screen readers only when it changes,
// not every second), who is logged in and the language switch. The way back to the table
// goes with the state and the account, not the links: on a phone that group is the second
// row, which it shares with them rather than take a row of its own (docs/client.md, "Look").
import { html, nothing } from "./vendor/lit-html.js";

/** The connection's state in words: "Connected", "Reconnecting in 4 s", ... */
export function connectionText(app, nowMs = Date.now()) {
  const { status, retryAt } = app.connection;
  if (status === "reconnecting" && retryAt) {
    const seconds = Math.max(0, Math.ceil((retryAt - nowMs) / 1000));
    return seconds > 0 ? app.t("app.conn.retry_in", { n: seconds }) : app.t("app.conn.reconnecting");
  }
  return app.t(`app.conn.${status}`);
}

// A keyboard user's way past the header (a link would change the routed hash).
function skipToPage() {
  const target = document.querySelector("main h1") || document.querySelector("main");
  target.tabIndex = -1;
  target.focus();
}

function switchLanguage(app) {
  app.settings.lang = app.lang === "zh" ? "en" : "zh";
  app.saveSettings();
}

function who(app) {
  const session = app.session;
  if (!session) {
    return html`<a class="header-link" href="#/">${app.t("app.header.sign_in")}</a>`;
  }
  // The accessible name holds the visible text, the badge too (WCAG's "label in name").
  const badge = session.guest ? html` <span class="badge">${app.t("app.guest")}</span>` : nothing;
  return html`<a class="header-link who" href="#/player/${encodeURIComponent(session.username)}"
      aria-label=${app.t("app.header.me", { name: session.guest ? `${session.username} ${app.t("app.guest")}` : session.username })}>${session.username}${badge}</a>`;
}

/** While the connection is down (an offline start, a server stopped): a line under the
 * header that says so; the header's status keeps counting down to the next try. */
function offlineNote(app) {
  if (app.connection.status !== "reconnecting") return nothing;
  const offline = typeof navigator !== "undefined" && navigator.onLine === false;
  return html`<p class="offline-note">${app.t(offline ? "app.conn.offline" : "app.conn.unreachable")}</p>`;
}

/** "Back to table ID", which a phone shows as "To table ID" (its accessible name is whole). */
function toTable(app, table) {
  const label = app.t("app.nav.my_table", { table });
  return html`<a class="header-link to-table" href="#/table/${table}" aria-label=${label}><span class="to-table-long">${label}</span><span
    class="to-table-short" aria-hidden="true">${app.t("app.nav.my_table_short", { table })}</span></a>`;
}

export function header(app) {
  const { status } = app.connection;
  const seated = app.myTable;
  // The lobby shows the player's table itself; the table page is the table.
  const atSeat = seated && (app.route.name === "lobby" || (app.route.name === "table" && app.route.params.table === seated.table));
  return html`<button class="skip-link" type="button" @click=${skipToPage}>${app.t("app.header.skip")}</button>
  <header class="site-header">
    <a class="brand" href="#/"><img class="brand-mark" src="/favicon.svg" alt="" width="22" height="22">
      <span class="brand-text">${app.t("app.name")}</span></a>
    <nav class="site-nav" aria-label=${app.t("app.header.nav")}>
      <a class="header-link" href="#/" aria-current=${app.route.name === "home" ? "page" : nothing}>${app.t("app.nav.home")}</a>
      <a class="header-link" href="#/lobby" aria-current=${app.route.name === "lobby" ? "page" : nothing}>${app.t("app.nav.lobby")}</a>
      <a class="header-link" href="#/ladder" aria-current=${app.route.name === "ladder" ? "page" : nothing}>${app.t("app.nav.ladder")}</a>
      <a class="header-link" href="#/tournaments" aria-current=${app.route.name === "tournaments" || app.route.name === "tournament" ? "page" : nothing}>${app.t("app.nav.tournaments")}</a>
    </nav>
    <div class="header-side">
      ${seated && !atSeat ? toTable(app, seated.table) : nothing}
      <span class="conn conn-${status}" data-status=${status}>
        <span class="conn-dot" aria-hidden="true"></span>
        <span class="conn-label" aria-hidden="true">${connectionText(app)}</span>
        <span class="visually-hidden" role="status">${app.t(`app.conn.${status}`)}</span>
      </span>
      ${status === "reconnecting"
        ? html`<button class="link-button" @click=${() => app.net.retryNow()}>${app.t("app.conn.retry_now")}</button>`
        : nothing}
      ${who(app)}
      <button class="lang-switch" lang=${app.lang === "zh" ? "en" : "zh"} @click=${() => switchLanguage(app)}
        title=${app.t("app.header.lang_label")}>${app.t("app.header.lang")}</button>
    </div>
  </header>
  ${offlineNote(app)}`;
}
