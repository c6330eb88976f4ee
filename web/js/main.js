// The client's entry point: builds the app, routes the location hash to a page and draws
// header + page + toasts into #app whenever anything asks for a refresh.
import { html, nothing, render } from "./vendor/lit-html.js";
import { createApp, parseRoute } from "./app.js";
import { header } from "./header.js";
import { homePage } from "./pages/home.js";
import { notFoundPage } from "./pages/notfound.js";

// The home page comes with the entry point; every other page is fetched when it is first
// entered (a module each), so that the first page carries only what it shows.
const PAGES = {
  home: async () => homePage,
  lobby: async () => (await import("./pages/lobby.js")).lobbyPage,
  join: async () => (await import("./pages/join.js")).joinPage,
  player: async () => (await import("./pages/player.js")).playerPage,
  ladder: async () => (await import("./pages/ladder.js")).ladderPage,
  tournaments: async () => (await import("./pages/tournaments.js")).tournamentsPage,
  tournament: async () => (await import("./pages/tournament.js")).tournamentPage,
  table: async () => (await import("./pages/table.js")).tablePage,
  match: async () => (await import("./pages/match.js")).matchPage,
  notfound: async () => notFoundPage,
};

const root = document.getElementById("app");
let page = null;
let focusHeading = false;

function draw(app) {
  document.documentElement.lang = app.lang === "zh" ? "zh-CN" : "en";
  const title = page?.title ? page.title(app) : "";
  document.title = title ? `${title} · ${app.t("app.name")}` : app.t("app.name");
  render(
    html`${header(app)}
      <main id="main" class="page page-${app.route.name}">${page ? page.view(app) : nothing}</main>
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

let routing = 0; // the latest navigation: a page that loads after a newer one is dropped

/** Enter the page the hash names; the same page with new params may take them in place. */
async function route(first = false) {
  const next = parseRoute(location.hash);
  const mine = ++routing;
  let module;
  try {
    module = await PAGES[next.name]();
  } catch (error) {
    app.fail(error); // the module did not load (the server is gone): say so, stay put
    return;
  }
  if (mine !== routing) return;
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
