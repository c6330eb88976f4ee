// The connection (net.js) against a scripted fake socket: hello and resume before ready,
// replies matched by id, errors as rejections, unsolicited messages by type, reconnection
// with backoff, an expired token forgotten.
import { eq, ok, test } from "./harness.js";
import { backoffDelay, createNet, socketUrl } from "../js/net.js";
import { fakeWorld } from "./fakesocket.js";

const settle = () => new Promise((resolve) => setTimeout(resolve, 0));

/** A server that welcomes, resumes "good" tokens, answers list_tables and refuses join_table. */
function polite(message) {
  const reply = (type, payload) => [{ type, reply_to: message.id, payload }];
  if (message.type === "hello") return reply("welcome", { version: 1 });
  if (message.type === "resume") {
    if (message.payload.token === "good") return reply("session", { username: "lin", token: "good", guest: false });
    return reply("error", { code: "auth_failed", reason: "unknown token" });
  }
  if (message.type === "list_tables") return reply("tables", { tables: [] });
  if (message.type === "ping") return reply("pong", {});
  if (message.type === "join_table") return reply("error", { code: "table_started", reason: "started" });
  return [];
}

function start(world, token) {
  const stored = { value: token ? { token } : null, why: null };
  const states = [];
  const net = createNet({
    url: "ws://test/ws",
    env: world.env,
    onState: (state) => states.push(state.status),
    session: { get: () => stored.value, set: (s, why) => ((stored.value = s), (stored.why = why ?? null)) },
  });
  net.start();
  return { net, stored, states };
}

test("hello, then resume, then ready; a request made early waits for it", async () => {
  const world = fakeWorld(polite);
  const { net, stored, states } = start(world, "good");
  let readies = 0;
  net.onReady(() => readies++);
  const early = net.request("list_tables", {});
  world.sockets[0].open();
  eq(await early, { tables: [] });
  eq(world.sockets[0].sent.map((m) => m.type), ["hello", "resume", "list_tables"]);
  eq(world.sockets[0].sent[0].payload.versions, [1, 2, 3], "versions 2 and 3: seats followed by the page, results read");
  eq(stored.value.username, "lin");
  eq([readies, net.ready, states.at(-1)], [1, true, "connected"]);
});

test("an error reply rejects with the server's code and reason", async () => {
  const world = fakeWorld(polite);
  const { net } = start(world, null);
  world.sockets[0].open();
  let caught = null;
  await net.request("join_table", { table: "t1" }).catch((error) => (caught = error));
  eq([caught.code, caught.reason], ["table_started", "started"]);
  eq(world.sockets[0].sent.map((m) => m.type), ["hello", "join_table"], "no resume without a token");
});

test("an unknown token is forgotten and the connection still gets ready", async () => {
  const world = fakeWorld(polite);
  const { net, stored } = start(world, "revoked");
  world.sockets[0].open();
  await net.request("list_tables", {});
  eq([stored.value, stored.why], [null, "expired"]);
});

test("unsolicited messages go to their handlers until unsubscribed", async () => {
  const world = fakeWorld(polite);
  const { net } = start(world, null);
  world.sockets[0].open();
  await net.request("list_tables", {});
  const seen = [];
  const stop = net.on("tables", (payload) => seen.push(payload.tables.length));
  world.sockets[0].deliver({ type: "tables", payload: { tables: [1, 2] } });
  world.sockets[0].deliver({ type: "update", payload: {} });
  await settle();
  stop();
  world.sockets[0].deliver({ type: "tables", payload: { tables: [1] } });
  await settle();
  eq(seen, [2]);
});

test("a dropped connection fails its pending requests, waits, reconnects and resumes", async () => {
  const silent = (message) => (message.type === "list_tables" ? [] : polite(message));
  const world = fakeWorld(silent);
  const { net, states } = start(world, "good");
  let readies = 0;
  net.onReady(() => readies++);
  world.sockets[0].open();
  await settle();
  const pending = net.request("list_tables", {});
  world.sockets[0].close();
  let caught = null;
  await pending.catch((error) => (caught = error));
  eq(caught.code, "disconnected");
  eq([states.at(-1), net.state.retryAt], ["reconnecting", 1000]);
  world.advance(999);
  eq(world.sockets.length, 1, "not before the backoff");
  world.advance(1);
  eq(world.sockets.length, 2);
  world.sockets[1].close(); // the server is still away: the next wait doubles
  await settle();
  eq(net.state.retryAt, 1000 + 2000);
  world.advance(2000);
  world.sockets[2].open();
  await settle();
  await settle();
  eq(world.sockets[2].sent.map((m) => m.type), ["hello", "resume"]);
  eq([readies, net.ready], [2, true]);
  world.sockets[2].close(); // a success resets the backoff
  await settle();
  eq(net.state.retryAt, world.clock + 1000);
});

test("retryNow skips the wait; close stops for good", async () => {
  const world = fakeWorld(polite);
  const { net } = start(world, null);
  world.sockets[0].close();
  await settle();
  net.retryNow();
  eq(world.sockets.length, 2);
  net.retryNow();
  eq(world.sockets.length, 2, "one socket at a time");
  net.close();
  await settle();
  world.advance(60_000);
  eq(world.sockets.length, 2);
});

test("backoff: 1 s doubling to 30 s, jitter within ±20%", () => {
  eq([0, 1, 2, 3, 4, 5, 6, 40].map((n) => backoffDelay(n, () => 0.5)), [1000, 2000, 4000, 8000, 16000, 30000, 30000, 30000]);
  eq(backoffDelay(0, () => 0), 800);
  eq(backoffDelay(0, () => 1), 1200);
  ok(backoffDelay(10, () => 1) <= 30000, "never above 30 s");
});

test("the socket address follows the page's scheme and host", () => {
  eq(socketUrl({ protocol: "http:", host: "127.0.0.1:8000" }), "ws://127.0.0.1:8000/ws");
  eq(socketUrl({ protocol: "https:", host: "mj.example" }), "wss://mj.example/ws");
});

test("check: a live socket runs the ready handlers again; a mute one is dropped", async () => {
  let mute = false;
  const world = fakeWorld((message) => (mute && message.type === "ping" ? [] : polite(message)));
  const { net, states } = start(world, null);
  let readies = 0;
  net.onReady(() => readies++);
  world.sockets[0].open();
  await settle();
  net.check();
  await settle();
  eq([readies, world.sockets.length], [2, 1], "pages re-sync, nothing reconnects");
  mute = true;
  net.check();
  await settle();
  world.advance(5000);
  await settle();
  eq([readies, states.at(-1)], [2, "reconnecting"]);
});
