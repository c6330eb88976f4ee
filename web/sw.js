// The service worker: keeps the app shell (the page, its styles, scripts, tiles and icons) in
// a cache so that the page opens at once, and still opens when the server cannot be reached
// (the header then says so). The server fills in VERSION and SHELL as it serves this file
// (server/static.py): the shell's paths and a hash of their contents, so any changed file
// makes a new worker, which fills a new cache and deletes the old ones. The API (/api/) and
// the websocket (/ws) always go to the network and are never cached.
const VERSION = "__SHELL_VERSION__";
const SHELL = ["__SHELL_FILES__"];
const PREFIX = "guobiao-shell-";
const CACHE = PREFIX + VERSION;

self.addEventListener("install", (event) => {
  // `no-cache`: fetched afresh (revalidated), not taken from the browser's HTTP cache.
  const requests = SHELL.map((path) => new Request(path, { cache: "no-cache" }));
  event.waitUntil(caches.open(CACHE).then((cache) => cache.addAll(requests)).then(() => self.skipWaiting()));
});

self.addEventListener("activate", (event) => {
  const old = (keys) => keys.filter((key) => key.startsWith(PREFIX) && key !== CACHE);
  event.waitUntil(
    caches.keys().then((keys) => Promise.all(old(keys).map((key) => caches.delete(key)))).then(() => self.clients.claim()),
  );
});

/** The shell file a request is for, or null (the API, the socket, anything else: network). */
function shellPath(request) {
  const url = new URL(request.url);
  if (request.method !== "GET" || url.origin !== self.location.origin) return null;
  if (url.pathname.startsWith("/api/") || url.pathname === "/ws") return null;
  const path = url.pathname === "/" ? "/index.html" : url.pathname;
  return SHELL.includes(path) ? path : null;
}

self.addEventListener("fetch", (event) => {
  const path = shellPath(event.request);
  if (path === null) return; // the browser fetches it as if there were no worker
  event.respondWith(
    caches.open(CACHE).then((cache) => cache.match(path)).then((hit) => hit || fetch(event.request)),
  );
});
