// The client's entry point: builds the app, routes the location hash to a page and draws
// header + page + toasts into #app whenever anything asks for a refresh.
import { html, render } from "./vendor/lit-html.js";
import { createApp, parseRoute } from "./app.js";
import { header } from "./header.js";
import { homePage } from "./pages/home.js";
import { joinPage } from "./pages/join.js";
import { ladderPage } from "./pages/ladder.js";
import { lobbyPage } from "./pages/lobby.js";
import { matchPage } from "./pages/match.js";
import { notFoundPage } from "./pages/notfound.js";
import { playerPage } from "./pages/player.js";
import { tablePage } from "./pages/table.js";
import { tournamentPage } from "./pages/tournament.js";
import { tournamentsPage } from "./pages/tournaments.js";

const PAGES = {
  home: homePage,
  lobby: lobbyPage,
  join: joinPage,
  player: playerPage,
  ladder: ladderPage,
  tournaments: tournamentsPage,
  tournament: tournamentPage,
  table: tablePage,
  match: matchPage,
  notfound: notFoundPage,
};

const root = document.getElementById("app");
let page = null;
let focusHeading = false;

function draw(app) {
  document.documentElement.lang = app.lang === "zh" ? "zh-CN" : "en";
  const title = page.title ? page.title(app) : "";
  document.title = title ? `${title} · ${app.t("app.name")}` : app.t("app.name");
  render(
    html`${header(app)}
      <main id="main" class="page page-${app.route.name}">${page.view(app)}</main>
      <div class="toasts" role="status" aria-live="polite">
        ${app.toasts.map((t) => html`<p class="toast">${t.text}</p>`)}
      </div>`,
    root,
  );
  if (focusHeading) {
    // After a navigation, start reading (and tabbing) at the new page, not at the old link.
    focusHeading = false;
    const heading = root.querySelector("main h1");
    if (heading) {
      heading.tabIndex = -1;
      heading.focus({ preventScroll: true });
    }
  }
}

const app = createApp({ onRender: draw });
window.guobiao = app; // for people poking at the client from the console, and for the tests

/** Enter the page the hash names; the same page with new params may take them in place. */
function route(first = false) {
  const next = parseRoute(location.hash);
  const module = PAGES[next.name];
  const previous = app.route;
  app.route = next;
  if (!first && module === page && module.update) {
    module.update(app, next.params);
  } else {
    if (page && page.leave) page.leave(app);
    page = module;
    if (page.enter) page.enter(app, next.params, previous);
    focusHeading = !first;
  }
  app.refresh();
}

window.addEventListener("hashchange", () => route());
// A tab coming back, or the network: check the socket now rather than at the next ping.
document.addEventListener("visibilitychange", () => {
  if (document.visibilityState === "visible") app.net.check();
});
window.addEventListener("online", () => app.net.check());
// The header's "reconnecting in N s" counts down on its own.
setInterval(() => app.connection.status === "reconnecting" && app.refresh(), 1000);

route(true);
app.net.start();
// The app shell from a cache (web/sw.js): the page opens at once, and without the server.
// Only on a secure origin (https, or localhost): elsewhere the browser has no workers.
if ("serviceWorker" in navigator) {
  navigator.serviceWorker.register("/sw.js").catch((error) => console.warn(`no offline shell: ${error.message}`));
}
