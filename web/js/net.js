// The one websocket to the server: request/reply by id, unsolicited messages by type, and a
// connection that mends itself. Every (re)connection says `hello`, then `resume`s the stored
// session, and only then is "ready": requests made earlier wait for it, so a page never talks
// to a half-open connection. Nothing here knows about pages or the DOM, which keeps it
// testable with a fake socket (web/test/net.test.js).

export const PROTOCOL_VERSIONS = [1, 2, 3]; // 2: updates leave the seats to follow (pages/table.js, follow.js); 3: next_hand
const FIRST_DELAY_MS = 1000;
const MAX_DELAY_MS = 30000;
const PING_TIMEOUT_MS = 5000;

/** The wait before reconnection attempt `attempt` (0, 1, ...): 1 s doubling to 30 s, each
 * spread by ±20% so that a restarted server is not hit by every client at the same instant. */
export function backoffDelay(attempt, random = Math.random) {
  const base = Math.min(MAX_DELAY_MS, FIRST_DELAY_MS * 2 ** Math.min(attempt, 16));
  return Math.round(Math.min(MAX_DELAY_MS, base * (0.8 + 0.4 * random())));
}

/** An Error for a refused request, carrying what the server said. */
export function serverError(payload) {
  const error = new Error(payload.reason || payload.code || "error");
  error.code = payload.code || "error";
  error.reason = payload.reason || "";
  error.retryAfter = payload.retry_after ?? null;
  error.table = payload.table ?? null; // the table a refusal names (already_seated: hers)
  error.match = payload.match ?? null; // the match it names (table_finished: the table's last)
  return error;
}

/** The websocket address of the page's own server. */
export function socketUrl(location) {
  return `${location.protocol === "https:" ? "wss:" : "ws:"}//${location.host}/ws`;
}

/**
 * `session` is `{get() → {token}|null, set(session|null)}`: where the token lives.
 * `onState(state)` hears `{status: "connecting"|"connected"|"reconnecting", retryAt}`.
 * `env` lets tests replace the WebSocket class, timers, the clock and the dice.
 */
export function createNet({ url, session, onState = () => {}, env = {} }) {
  const WS = env.WebSocket || globalThis.WebSocket;
  const setTimer = env.setTimeout || globalThis.setTimeout.bind(globalThis);
  const clearTimer = env.clearTimeout || globalThis.clearTimeout.bind(globalThis);
  const now = env.now || (() => Date.now());
  const random = env.random || Math.random;

  const handlers = new Map(); // type -> Set of handlers for unsolicited messages
  const readyHandlers = new Set();
  const pending = new Map(); // id -> {resolve, reject}
  let waiting = []; // requests made while not ready: [{type, payload, resolve, reject}]
  let socket = null;
  let ready = false;
  let welcome = null; // the server's answer to hello (its `[timers]` among it)
  let attempt = 0;
  let retryTimer = null;
  let nextId = 1;
  let state = { status: "connecting", retryAt: null };

  function setState(status, retryAt = null) {
    state = { status, retryAt };
    onState(state);
  }

  function sendRaw(type, payload, id) {
    const message = id === undefined ? { type, payload } : { type, id, payload };
    socket.send(JSON.stringify(message));
  }

  // A request on the open socket, before or after ready (hello and resume use it directly).
  function ask(type, payload) {
    return new Promise((resolve, reject) => {
      const id = nextId++;
      pending.set(id, { resolve, reject });
      sendRaw(type, payload, id);
    });
  }

  function dispatch(type, payload) {
    for (const handler of [...(handlers.get(type) || [])]) handler(payload);
  }

  function receive(text) {
    let message;
    try {
      message = JSON.parse(text);
    } catch {
      return; // the server only sends JSON; a broken frame is not worth a crash
    }
    const { type, payload = {}, reply_to: replyTo } = message;
    const request = replyTo === undefined ? undefined : pending.get(replyTo);
    if (request) {
      pending.delete(replyTo);
      if (type === "error") request.reject(serverError(payload));
      else request.resolve(payload);
      return;
    }
    dispatch(type, payload);
  }

  async function greet(opened) {
    try {
      welcome = await ask("hello", { versions: PROTOCOL_VERSIONS, client: "guobiao-web/1" });
      const stored = session.get();
      if (stored && stored.token) {
        try {
          session.set(await ask("resume", { token: stored.token }));
        } catch (error) {
          if (error.code !== "auth_failed") throw error;
          session.set(null, "expired"); // an expired or revoked token: start afresh
        }
      }
    } catch (error) {
      if (socket === opened) opened.close(); // try again later, by the usual path
      return;
    }
    if (socket !== opened) return;
    ready = true;
    attempt = 0;
    setState("connected");
    for (const handler of [...readyHandlers]) handler();
    const queued = waiting;
    waiting = [];
    for (const item of queued) ask(item.type, item.payload).then(item.resolve, item.reject);
  }

  function connect() {
    clearTimer(retryTimer);
    retryTimer = null;
    setState(attempt === 0 ? "connecting" : "reconnecting");
    const opened = new WS(url);
    socket = opened;
    opened.onopen = () => greet(opened);
    opened.onmessage = (event) => receive(event.data);
    opened.onclose = () => {
      if (socket === opened) dropped();
    };
  }

  function dropped() {
    socket = null;
    ready = false;
    for (const { reject } of pending.values()) {
      const error = new Error("the connection dropped");
      error.code = "disconnected";
      reject(error);
    }
    pending.clear();
    const delay = backoffDelay(attempt, random);
    attempt += 1;
    setState("reconnecting", now() + delay);
    retryTimer = setTimer(connect, delay);
  }

  const net = {
    get state() {
      return state;
    },
    /** The server's `welcome` (its decision times among it), once it has answered; null before. */
    get welcome() {
      return welcome;
    },
    get ready() {
      return ready;
    },
    /** The reply's payload; rejects with `.code`, `.reason`, `.retryAfter` on an error. */
    request(type, payload = {}) {
      if (ready) return ask(type, payload);
      return new Promise((resolve, reject) => waiting.push({ type, payload, resolve, reject }));
    },
    /** Fire and forget (e.g. an action whose answer is the next update); dropped when closed. */
    send(type, payload = {}) {
      if (ready) sendRaw(type, payload);
    },
    on(type, handler) {
      if (!handlers.has(type)) handlers.set(type, new Set());
      handlers.get(type).add(handler);
      return () => handlers.get(type).delete(handler);
    },
    onReady(handler) {
      readyHandlers.add(handler);
      return () => readyHandlers.delete(handler);
    },
    /** Reconnect now instead of waiting out the backoff (the header's button, a visible tab). */
    retryNow() {
      if (socket === null) connect();
    },
    /** A socket can look open long after the network went away: ask, and drop it if mute
     * (the reconnection then resumes). Alive, the ready handlers run again, so that a tab
     * back from the background re-syncs its table as after a reconnection. */
    check() {
      if (socket === null) return net.retryNow();
      if (!ready) return;
      const checked = socket;
      const timer = setTimer(() => socket === checked && checked.close(), PING_TIMEOUT_MS);
      ask("ping", {}).then(
        () => {
          clearTimer(timer);
          if (socket === checked) for (const handler of [...readyHandlers]) handler();
        },
        () => clearTimer(timer),
      );
    },
    /** Close for good (tests); no reconnection follows. */
    close() {
      const closing = socket;
      socket = null;
      clearTimer(retryTimer);
      if (closing) closing.close();
    },
    start() {
      connect();
      return net;
    },
  };
  return net;
}
