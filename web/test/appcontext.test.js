// The app context (app.js) over a scripted server: Play now's steps, the session kept and
// forgotten, the player taken to its table when the match starts, the invites remembered.
import { eq, ok, test } from "./harness.js";
import { createApp } from "../js/app.js";
import { fakeWorld } from "./fakesocket.js";

const settle = async () => {
  for (let i = 0; i < 5; i++) await new Promise((resolve) => setTimeout(resolve, 0));
};

function memoryStorage(data = {}) {
  return {
    data,
    getItem: (key) => (key in data ? data[key] : null),
    setItem: (key, value) => (data[key] = String(value)),
    removeItem: (key) => delete data[key],
  };
}

const summary = (table, seats, state = "waiting") => ({
  table, rules: "mcr", turn_seconds: 15, seats, state, hand_no: state === "playing" ? 1 : 0, private: false,
});

/** A server for one guest, "guest-7", who makes table t1 and fills it with bots. */
function server(message) {
  const reply = (type, payload) => ({ type, reply_to: message.id, payload });
  const push = (type, payload) => ({ type, payload });
  const me = "guest-7";
  switch (message.type) {
    case "hello":
      return [reply("welcome", { version: 1 })];
    case "guest":
      return [reply("session", { username: me, token: "tok7", guest: true, expires: "2026-12-04T00:00:00Z" })];
    case "resume":
      return [reply("error", { code: "auth_failed", reason: "unknown token" })];
    case "create_table":
      return [reply("table_created", { table: "t1", invite_code: null })];
    case "join_table":
      return [reply("joined", { table: "t1", seat: 0 }), push("table", summary("t1", [me, null, null, null]))];
    case "add_bots": {
      const full = [me, "bot:default", "bot:default", "bot:default"];
      return [reply("table", summary("t1", full)), push("table", summary("t1", full, "playing"))];
    }
    default:
      return [];
  }
}

function start(storage = memoryStorage(), hash = "#/") {
  const world = fakeWorld(server);
  const location = { hash, origin: "http://host", pathname: "/", protocol: "http:", host: "host" };
  let renders = 0;
  const app = createApp({ onRender: () => renders++, env: { storage, location, net: world.env } });
  app.net.start();
  world.sockets[0].open();
  return { app, world, location, storage, renders: () => renders };
}

test("Play now: a guest, a table, seat 0, to the table, then the bots", async () => {
  const { app, world, location, storage, renders } = start();
  await settle();
  await app.playNow();
  await settle();
  eq(world.sockets[0].sent.map((m) => m.type), ["hello", "guest", "create_table", "join_table", "add_bots"]);
  eq(world.sockets[0].sent[2].payload, { rules: "mcr" });
  eq(world.sockets[0].sent[3].payload, { table: "t1", invite_code: null, seat: 0 });
  eq(world.sockets[0].sent[4].payload, { table: "t1", bot: "normal" }, "normal until one is chosen");
  eq(location.hash, "#/table/t1");
  eq(JSON.parse(storage.data["guobiao.session"]).token, "tok7", "the session is kept");
  eq([app.myTable.table, app.myTable.state], ["t1", "playing"]);
  ok(renders() > 0, "changes are drawn");
});

test("Play now adds bots of the level this device remembers", async () => {
  const storage = memoryStorage({ "guobiao.settings": JSON.stringify({ botLevel: "strong" }) });
  const { app, world } = start(storage);
  await settle();
  await app.playNow();
  await settle();
  eq(world.sockets[0].sent[4].payload, { table: "t1", bot: "strong" });
});

/** The app on the lobby page, the guest "guest-7" logged in; its socket. */
async function guestInLobby() {
  const { app, world, location } = start(memoryStorage(), "#/lobby");
  app.route = { name: "lobby", params: {} };
  await settle();
  await app.guest();
  return { app, socket: world.sockets[0], location };
}

test("a player waiting in the lobby is taken to its table when the match starts", async () => {
  const { app, socket, location } = await guestInLobby();
  socket.deliver({ type: "table", payload: summary("t2", ["x", "y", "z", null]) });
  socket.deliver({ type: "table", payload: summary("t2", ["x", "y", "z", "w"], "playing") });
  await settle();
  eq([location.hash, app.myTable], ["#/lobby", null], "another's table changes nothing");
  socket.deliver({ type: "table", payload: summary("t3", ["guest-7", null, null, null]) });
  await settle();
  eq(app.myTable.table, "t3");
  socket.deliver({ type: "table", payload: summary("t3", ["guest-7", "a", "b", "c"], "playing") });
  await settle();
  eq(location.hash, "#/table/t3");
  socket.deliver({ type: "table", payload: summary("t3", ["guest-7", "a", "b", "c"], "finished") });
  await settle();
  eq(app.myTable, null, "a finished table is nobody's seat");
});

test("a waiting player is taken to its table whichever summary says first that it began", async () => {
  const { app, socket, location } = await guestInLobby();
  socket.deliver({ type: "table", payload: summary("t4", ["guest-7", "a", "b", null]) });
  await settle();
  app.tableSummary(summary("t4", ["guest-7", "a", "b", "c"], "playing")); // the lobby's listing
  await settle();
  eq(location.hash, "#/table/t4");
  eq(app.myTable.state, "playing");
});

test("an expired session is forgotten, said so, and the connection goes on", async () => {
  const storage = memoryStorage({ "guobiao.session": JSON.stringify({ username: "lin", token: "old" }) });
  const { app, world } = start(storage);
  eq(app.session.username, "lin", "read back from storage");
  await settle();
  eq(world.sockets[0].sent.map((m) => m.type), ["hello", "resume"]);
  eq([app.session, storage.data["guobiao.session"], app.net.ready], [null, undefined, true]);
  eq(app.toasts.map((t) => t.text), ["Your session has expired: please log in again."]);
});

test("invite codes: remembered across visits, the latest twenty", () => {
  const storage = memoryStorage();
  const { app } = start(storage);
  for (let i = 0; i < 25; i++) app.rememberInvite(`t${i}`, `code${i}`);
  app.rememberInvite("t10", "again");
  const kept = JSON.parse(storage.data["guobiao.invites"]);
  eq(Object.keys(kept).length, 20);
  eq([kept.t24, kept.t10, kept.t5, kept.t4], ["code24", "again", "code5", undefined]);
  eq(app.inviteLink("t24", "code24"), "http://host/#/join/t24/code24");
});
