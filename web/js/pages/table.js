// The live table: `#/table/:id` for the seated player, `#/watch/:id` for a spectator (the
// same page, mode "watch"). Keeps the latest update, always with a whole view (protocol
// version 2: the seats an update leaves out are followed here, follow.js), and what the
// hand's events taught (last discard, hand result, commitments), sends actions, and hands
// the drawing to render.js. Keyboard shortcuts: see `keys` below and docs/client.md.
import { html, nothing } from "../vendor/lit-html.js";
import { matchAddress } from "../app.js";
import { chosenLevel, levelPicker } from "../bots.js";
import { fairnessOf } from "../fairness.js";
import { wholeUpdate } from "../follow.js";
import { actionButtons, aidsView, callsOf, describeEvents, foldResult, lastDiscard, legalGroups, ownHand, playerName, resultView, secondsLeft, signed, tableView } from "../render.js";
import { changeText, deltaClass, gradeText } from "../rating.js";
import { askToNotify, canNotify, notifyTurn } from "../notify.js";
import { inviteBox, matchLength, rulesName } from "./lobby.js";
import { missingView } from "./notfound.js";
import { beep, claimSound, discardSound } from "../sound.js";

const DIGIT_KEYS = "1234567890-="; // pick tiles 1..12 of the own hand
const RESULT_GIVES_WAY_S = 8; // seconds left to decide when the last result closes by itself
const CALL_SHOWN_MS = 1800; // how long a claim's announcement stays at the claimer's seat
// Refusals that mean this page has no table to show, for good: no such table, an id the
// server cannot even read (`bad_message`: too long), or a table closed to this visitor. The
// page says so instead of loading forever; any other (a dropped connection) is tried again.
const NO_TABLE = new Set(["no_such_table", "table_finished", "bad_message", "not_watchable", "wrong_invite", "not_seated"]);

let s = null; // the page's state while it is shown

function fresh(app, params) {
  return {
    app, table: params.table, mode: params.mode === "watch" ? "watch" : "play",
    summary: null, update: null, last: null, selected: null, answered: null,
    deadlineAt: null, sentDeadlineAt: null, notStored: null, commits: {}, reveals: {}, handNo: null, acc: null, result: null, resultOpen: false, readHand: null,
    names: null, matchEnd: null, grades: {}, error: null, noTable: null, off: [], timer: null,
    analysis: null, analysing: null, analysed: null, connecting: false, syncing: null,
    calls: {}, callTimers: new Set(), visitor: false,
  };
}

export const tablePage = {
  enter(app, params) {
    s = fresh(app, params);
    const net = app.net;
    s.off.push(
      net.on("update", (p) => p.table === s.table && onUpdate(p)),
      net.on("table", (p) => p.table === s.table && onSummary(p)),
      net.on("commit", (p) => p.table === s.table && ((s.commits[p.hand_no] = p.commitment), app.refresh())),
      net.on("reveal", (p) => p.table === s.table && onReveal(p)),
      net.on("match_end", (p) => p.table === s.table && onMatchEnd(p)),
      net.on("error", (p) => p.table === s.table && onRefused(p)),
      net.onReady(() => connect()),
    );
    s.timer = setInterval(() => s.deadlineAt && app.refresh(), 500);
    document.addEventListener("keydown", onKey);
    // Its match's end, told before this page listened (on coming back after it ended, the
    // end comes with the session, often before this module loaded): shown as if live.
    const end = app.lastEnd;
    if (end && end.matchEnd.table === s.table) {
      if (end.summary) onSummary(end.summary);
      if (end.update) onUpdate(end.update);
      if (end.reveal) onReveal(end.reveal);
      onMatchEnd(end.matchEnd);
    }
    if (net.ready) connect(); // else onReady does, once the session is resumed
  },
  title(app) {
    return app.t(s && s.mode === "watch" ? "table.title_watch" : "table.title", { table: s ? s.table : "" });
  },
  leave() {
    if (!s) return;
    tellRead(); // a result left unread: the table is not held for a reader who went elsewhere
    s.off.forEach((off) => off());
    clearInterval(s.timer);
    s.callTimers.forEach(clearTimeout);
    document.removeEventListener("keydown", onKey);
    s = null;
  },
  view(app) {
    if (!s) return nothing;
    return html`<section class="table-page" data-mode=${s.mode}>${body(app)}</section>`;
  },
};

/** Ask for the table's state: a spectator watches, a player syncs (its seat is resumed by
 * the server on `resume`/`join_table`; sync answers `update` in play, `table` before). */
async function connect() {
  const here = s;
  if (!here) return;
  here.connecting = true; // a full update is on its way: what cannot be followed waits for it
  try {
    if (!here.app.session && here.mode === "play") {
      // A visitor (no session) cannot play: the table is watched instead (the server lets a
      // connection without a session watch), the page saying how to play. A table that is
      // not there is said so, as to a spectator.
      here.mode = "watch";
      here.visitor = true;
    }
    if (here.mode === "watch") {
      // `watching` is the table's summary: the seats' names, private tables included.
      const watching = await here.app.net.request("watch", { table: here.table, invite_code: here.app.invites?.[here.table] ?? null });
      if (s === here) onSummary(watching);
    }
    await sync(here);
  } catch (error) {
    return failed(here, error);
  } finally {
    here.connecting = false;
  }
  // A seated player's page opened mid-match has the names from the seat's `table` messages
  // (app.myTable) or, failing that, from the listing.
  if (s !== here || here.summary) return;
  try {
    const listed = (await here.app.net.request("list_tables", {})).tables.find((x) => x.table === here.table);
    if (listed && s === here && !here.summary) onSummary(listed);
  } catch (error) {
    failed(here, error);
  }
}

function failed(here, error) {
  if (s !== here) return;
  // The match's end is here (told on coming back after it ended): its table is gone, which
  // is no news.
  if (here.matchEnd && (error.code === "no_such_table" || error.code === "table_finished")) return;
  here.error = here.app.errorText(error);
  here.noTable = NO_TABLE.has(error.code) ? error : null;
  here.app.refresh();
}

/** `sync`: a full update in play (it replaces whatever the page had), the table's summary
 * before the first deal. One request at a time: who asks while one is out gets its answer. */
function sync(here) {
  here.syncing ??= here.app.net
    .request("sync", { table: here.table })
    .then((reply) => s === here && (reply.view ? onUpdate(reply) : onSummary(reply)))
    .finally(() => (here.syncing = null));
  return here.syncing;
}

/** An update that could not be followed is not shown. A full one is on its way while the
 * page connects or has asked already (updates that came before it cannot be followed: that
 * is expected); else the page says so and asks for one. */
function resync(p, error) {
  const here = s;
  if (here.connecting || here.syncing) return;
  const after = here.update ? `after ${here.update.seq}` : "first";
  console.warn(`table ${here.table}: update ${p.seq} (${after}) not followed (${error.message}): asking for a full one`);
  sync(here).catch((problem) => problem.code !== "disconnected" && failed(here, problem)); // a reconnection syncs
}

function onSummary(summary) {
  s.summary = summary;
  s.app.refresh();
}

function onUpdate(sent) {
  const before = s.update;
  if (before && !sent.full && sent.seq < before.seq) return; // an older update arrived late
  let p;
  try {
    p = wholeUpdate(before, sent); // the seats followed when the view came without them
  } catch (error) {
    return resync(sent, error);
  }
  // The hand's commitment comes with its deal and with every full update (a page that came
  // after `commit` went by gets it so); the first one seen counts.
  if (p.commitment && s.commits[p.hand_no] === undefined) s.commits[p.hand_no] = p.commitment;
  if (p.full) s.last = null;
  s.last = lastDiscard(s.last, p.events);
  if (p.full && p.last_hand) learnMissed(p, Boolean(before));
  for (const e of p.events) learn(e, p);
  const asked = (p.view.legal || []).length > 0;
  const kept = before && s.selected !== null ? shownTiles(before)[s.selected] : null;
  s.update = p;
  if (!before || before.seq !== p.seq) s.answered = s.notStored = null; // the same update twice: still answered
  s.deadlineAt = asked && s.answered === null && p.deadline_ms !== undefined ? performance.now() + p.deadline_ms : null;
  s.error = null;
  const newlyAsked = asked && !(before && (before.view.legal || []).length);
  if (newlyAsked && s.app.settings.sound) beep();
  if (newlyAsked && s.mode === "play") notifyTurn(s.app, s.table);
  if (before && before.seq !== p.seq) announce(p.events); // a first or repeated update tells nothing new
  // A raised tile stays raised while the player may still discard it (an update that
  // changes nothing of the hand must not undo a tap); else the drawn tile starts raised.
  if (kept === null || shownTiles(p)[s.selected] !== kept || !legalGroups(legalNow()).discards.has(kept)) s.selected = null;
  if (asked) autoAnswer(p);
  if (p.view.phase === "turn" && asked && s.selected === null) preselectDrawn(p);
  analyse(p);
  s.app.refresh();
}

/** The claims of `events` shown at the claimers' seats for a moment (render.js `callout`),
 * and the table's sounds when the player has turned them on. */
function announce(events) {
  const calls = callsOf(events);
  const here = s;
  for (const { player, call } of calls) {
    const shown = { call }; // this announcement: a later one at the same seat replaces it
    here.calls[player] = shown;
    const timer = setTimeout(() => {
      here.callTimers.delete(timer);
      if (here.calls[player] === shown) delete here.calls[player];
      if (s === here) here.app.refresh();
    }, CALL_SHOWN_MS);
    here.callTimers.add(timer);
  }
  if (!s.app.settings.tableSounds) return;
  if (calls.length) claimSound(calls.at(-1).call);
  else if (events.some((e) => e.kind === "discard")) discardSound();
}

/** Aids (opt-in, and only where the table allows them): ask the server to analyse the own
 * hand whenever it changed, one question at a time (the server limits the rate). */
async function analyse(p) {
  const mine = p.view.seats.find((x) => x.player === p.view.you);
  if (!aidsOn() || !mine || mine.concealed === undefined || p.view.phase === "over") return (s.analysis = null);
  const key = `${p.hand_no}|${mine.concealed}|${mine.melds.join()}|${(p.view.legal || []).some((a) => a.type === "discard")}`;
  if (key === s.analysed || s.analysing) return;
  const here = s;
  here.analysing = key;
  try {
    const answer = await here.app.net.request("analyze", { table: here.table });
    if (s === here) Object.assign(here, { analysis: answer, analysed: key });
  } catch {
    // rate-limited or refused: the next update asks again; aids are a help, never a blocker
  } finally {
    if (s === here) {
      here.analysing = null;
      here.app.refresh();
    }
  }
}

const aidsOn = () => s.mode === "play" && !!s.app.settings.aids && !!s.summary?.aids;

/** What an event tells beyond the view: the hand's result (`acc` while the hand ends),
 * shown until the player closes it, even after the next hand has begun. */
function learn(e, p) {
  if (e.kind === "match") s.handNo = e.hand_no; // an update may end one hand and start the next
  const before = s.acc;
  s.acc = foldResult(s.acc, e, s.handNo ?? p.hand_no, p.scores);
  if (!s.acc || s.acc === before) return;
  const fresh = s.result?.hand_no !== s.acc.hand_no;
  s.acc.fairness = fresh ? null : s.result.fairness;
  s.result = s.acc;
  if (fresh) s.resultOpen = true;
  if (s.result.hands) s.app.rememberResult(resultKey(s.result));
  attachFairness();
}

/** A full update in a hand after the first says how the hand before ended (`last_hand`):
 * after a reconnection that came once that hand was over, its result is shown as if it had
 * been seen live; after a reload that had shown it already, or to a spectator who just came,
 * it is only offered ("Last hand's result"). */
function learnMissed(p, following) {
  const last = p.last_hand;
  if (s.result?.hand_no === last.hand_no) return; // shown, or being shown
  if (last.reveal) s.reveals[last.hand_no] = last.reveal; // the reveal that went by with it
  let result = null;
  for (const e of last.events || []) result = foldResult(result, e, last.hand_no, p.scores);
  if (!result || !result.hands) return;
  const key = resultKey(result);
  s.result = result; // no fairness line: the reveal went by with the hand
  s.resultOpen = !s.app.resultShown(key) && (s.mode === "play" || following);
  if (s.resultOpen) s.app.rememberResult(key);
  attachFairness();
}

/** A hand's result among those this device has shown: its table, hand and the scores after. */
const resultKey = (r) => `${s.table}|${r.hand_no}|${(r.scores || []).join(",")}`;

function onReveal(p) {
  s.reveals[p.hand_no] = p;
  attachFairness();
  s.app.refresh();
}

/** The fairness check of the shown result, once its reveal is in (fairness.js); at a table
 * of a duplicate session, which sends no reveal, what to wait for instead: the session's end. */
function attachFairness() {
  const r = s.result;
  const reveal = r && s.reveals[r.hand_no];
  if (reveal) r.fairness = fairnessOf(reveal, s.commits[r.hand_no], s.summary?.rules);
  else if (r && heldTournament(s.summary)) r.fairness = { status: "held" };
}

async function onMatchEnd(p) {
  s.matchEnd = p;
  s.app.refresh();
  const here = s;
  const people = (seatNames(s.app) || []).filter((n) => n && !n.startsWith("bot:"));
  for (const name of people) {
    try {
      const reply = await fetch(`/api/players/${encodeURIComponent(name)}`);
      if (reply.ok && s === here) here.grades[name] = (await reply.json()).grade;
    } catch {
      // a grade that does not load is left out; the scores are what matter
    }
  }
  if (s === here) here.app.refresh();
}

/** Auto-pass: claims are passed for the player (never a win), when the option is on. */
function autoAnswer(p) {
  const legal = p.view.legal;
  if (!s.app.settings.autoPass) return;
  if (legal.some((a) => a.type === "pass") && !legal.some((a) => a.type === "win")) send({ type: "pass" });
}

/** On the player's own turn the drawn tile starts raised: one more tap discards it. */
function preselectDrawn(p) {
  const hand = handOf(p);
  if (hand && hand.drawn && legalGroups(p.view.legal).discards.has(hand.drawn)) s.selected = hand.tiles.length;
}

function handOf(p) {
  const mine = p.view.seats.find((x) => x.player === p.view.you);
  return mine && mine.concealed !== undefined ? ownHand(mine, p.view.drawn, p.view.wild_tiles || []) : null;
}

function shownTiles(p) {
  const hand = handOf(p);
  return hand ? (hand.drawn ? [...hand.tiles, hand.drawn] : hand.tiles) : [];
}

function legalNow() {
  if (!s.update || s.answered === s.update.seq || s.mode === "watch") return [];
  return s.update.view.legal || [];
}

function send(action) {
  const p = s.update;
  if (!p || s.answered === p.seq) return;
  s.answered = p.seq;
  s.selected = null;
  s.sentDeadlineAt = s.deadlineAt;
  s.deadlineAt = null;
  s.app.net.send("action", { table: s.table, seq: p.seq, action });
  s.app.refresh();
}

/** Her move refused because the server could not store it (`internal_error`, naming this
 * table): it was not taken and nothing changed. Her options and her clock come back, and
 * the table asks her again once it can store moves (docs/protocol.md). */
function onRefused(payload) {
  if (payload.code !== "internal_error" || s.answered === null || s.answered !== s.update?.seq) return;
  s.notStored = s.answered; // said until a move of hers is taken: asked again, it stays
  s.answered = null;
  s.deadlineAt = s.sentDeadlineAt;
  s.app.refresh();
}

/** A tap on an own tile: raise it, or discard it when it is already raised. */
function onTile(index, tile) {
  if (s.selected === index) send({ type: "discard", tile });
  else s.selected = index;
  s.app.refresh();
}

function raisedTile() {
  if (s.selected === null || !s.update) return null;
  const tile = shownTiles(s.update)[s.selected];
  return tile && legalGroups(legalNow()).discards.has(tile) ? tile : null;
}

/** Keyboard: ←/→ or 1-9 0 - = pick a tile, Enter/Space discard it; H win, P pung, K kong,
 * C chow (several chows or kongs: each press picks the next, Enter sends), Esc/Space pass. */
function onKey(event) {
  if (!s || !s.update || event.ctrlKey || event.metaKey || event.altKey) return;
  if (event.target.closest && event.target.closest("input, textarea, select")) return;
  const legal = legalNow();
  const key = event.key;
  const discards = legalGroups(legal).discards;
  const tiles = shownTiles(s.update);
  const pickable = tiles.map((x, i) => (discards.has(x) ? i : -1)).filter((i) => i >= 0);
  const act = (action) => (event.preventDefault(), send(action));
  if (key === "Escape" && s.resultOpen) return closeResult();
  if (!legal.length) return;
  if ((key === "ArrowLeft" || key === "ArrowRight") && pickable.length) {
    const at = pickable.indexOf(s.selected);
    const next = key === "ArrowRight" ? at + 1 : (at < 0 ? pickable.length : at) - 1;
    s.selected = pickable[(next + pickable.length) % pickable.length];
    event.preventDefault();
    return s.app.refresh();
  }
  const digit = DIGIT_KEYS.indexOf(key);
  if (digit >= 0 && pickable.includes(digit)) {
    s.selected = digit;
    return s.app.refresh();
  }
  const raised = raisedTile();
  if ((key === "Enter" || key === " ") && raised && !event.target.closest?.("button")) return act({ type: "discard", tile: raised });
  const buttons = actionButtons(legal);
  const byKey = (k) => buttons.filter((b) => b.key === k);
  if (key === "Escape" || (key === " " && !raised)) {
    const pass = byKey("Esc")[0];
    if (pass) return act(pass.action);
  }
  const letter = key.length === 1 ? key.toUpperCase() : "";
  const matching = "HPKC".includes(letter) && letter ? byKey(letter) : [];
  if (matching.length === 1) return act(matching[0].action);
  if (matching.length > 1) {
    // Several choices: each press focuses the next one; Enter on it sends it.
    const all = [...document.querySelectorAll(`.actions button[data-key="${letter}"]`)];
    all[(all.indexOf(document.activeElement) + 1) % all.length]?.focus();
    event.preventDefault();
  }
}

// ------------------------------------------------------------------- views ---

function body(app) {
  const t = app.t;
  if (!app.session && s.mode === "play") return html`<p class="loading">${t("table.loading")}</p>`; // (watched once connected)
  const names = seatNames(app);
  if (!s.update && !s.summary && s.noTable) return noTableView(app, s.noTable);
  const error = s.error || (s.notStored !== null && s.answered === null ? t("table.not_stored") : null);
  const top = html`${s.visitor ? visitorNote(app) : nothing}${error ? html`<p class="table-error" role="alert">${error}</p>` : nothing}`;
  if (!s.update) return html`${top}${waitingRoom(app)}`;
  const p = s.update;
  const legal = legalNow();
  // The last hand's result stays up into the next hand (the pause between hands is short)
  // until closed, or until the player's own clock runs low: the table must be seen then.
  if (s.resultOpen && s.result && s.result.hand_no !== p.hand_no && s.deadlineAt && secondsLeft(s.deadlineAt, performance.now()) <= RESULT_GIVES_WAY_S) {
    s.resultOpen = false;
  }
  const ctx = {
    t, state: p, names, perspective: p.view.you ?? p.view.seats[0].player, last: s.last,
    legal, interactive: s.mode === "play", selected: s.selected, raisedTile: raisedTile(),
    deadlineAt: s.deadlineAt, now: performance.now(), onTile, onAction: send,
    calls: Object.fromEntries(Object.entries(s.calls).map(([player, shown]) => [player, shown.call])),
    aids: aidsOn() ? aidsView(t, s.analysis, raisedTile()) : nothing,
  };
  return html`${top}
    ${s.mode === "watch" && !s.visitor ? html`<p class="watching">${t("table.spectating")}</p>` : nothing}
    <p class="table-log" aria-live="polite">${waitingForOthers(p) ? t("table.waiting_next") : describeEvents(t, names, p.events) || "\u00a0"}</p>
    ${tableView(ctx)}
    ${dialog(app, names, p)}
    ${optionsView(app)}`;
}

/** To a visitor who opened a player's address of the table: she watches it, and is told
 * how to play. */
function visitorNote(app) {
  const t = app.t;
  return html`<section class="visitor-note">
    <h1>${t("table.visitor_title", { table: s.table })}</h1>
    <p>${t("table.visitor_text")}</p>
    <a class="button primary" href="#/">${t("table.visitor_login")}</a> <a class="button" href="#/lobby">${t("table.to_lobby")}</a>
  </section>`;
}

/** Whether the player has read the hand just over and the table waits for the others. */
function waitingForOthers(p) {
  return s.mode === "play" && !s.matchEnd && p.view.phase === "over" && s.readHand === p.hand_no;
}

/** The seats' names: the table's summary, or the seat's own (app.myTable: a private table is
 * not listed), kept once seen, as both go when the match ends (the ranking names them). */
function seatNames(app) {
  const seats = (s.summary || (app.myTable?.table === s.table ? app.myTable : null))?.seats;
  if (seats && seats.some(Boolean)) s.names = seats;
  return s.names || seats || null;
}

/** Closes the hand's result: the player has read it. For the hand just over the server is
 * told (`next_hand`, protocol version 3): it deals the next hand once every seated player has
 * read the result (or after its `result_seconds`), so reading costs no turn time. */
function closeResult() {
  s.resultOpen = false;
  tellRead();
  s.app.refresh();
}

/** Tells the server the result of the hand just over has been read (once per hand): on
 * Continue, and when the player leaves the page with it unread (nobody reads it here). */
function tellRead() {
  const p = s.update;
  const r = s.result;
  if (s.mode === "play" && r && p && p.hand_no === r.hand_no && p.view.phase === "over" && s.readHand !== r.hand_no) {
    s.readHand = r.hand_no;
    s.app.net.send("next_hand", { table: s.table, hand_no: r.hand_no });
  }
}

/** The hand's result (and, once the match is over, its final ranking above it) in one
 * dialog; closed, a button brings the hand's result back. */
function dialog(app, names, p) {
  const t = app.t;
  const hand = s.result && s.resultOpen
    ? html`${resultView(t, app.lang, names, s.result, p.view.wild_tiles || [])}
      <button class="primary close-result" @click=${closeResult}>${t("table.result.close")}</button>`
    : s.result ? html`<button class="reopen-result" @click=${() => ((s.resultOpen = true), app.refresh())}>${t("table.result.show")}</button>` : nothing;
  if (s.matchEnd) return html`<div class="result match-end" role="dialog" aria-label=${t("table.match_end")}>${matchEndView(app, names)}${hand}</div>`;
  if (!s.result) return nothing;
  // While the hand is over no clock runs: a phone's sheet may then cover more of the board.
  const over = p.view.phase === "over" ? "hand-over" : "";
  return s.resultOpen ? html`<div class="result ${over}" role="dialog" aria-modal="false" aria-label=${t("table.result.title")}>${hand}</div>` : hand;
}

/** The page when the table cannot be shown (`NO_TABLE`): why, and the way to the lobby; to
 * a player back at a table gone after its match (`table_finished`), the way to the match. */
function noTableView(app, error) {
  const t = app.t;
  if (error.code === "table_finished" && error.match != null) {
    const href = matchAddress(error.match, { invite: app.invites?.[error.table] ?? null }); // (a private table's match needs its code)
    return missingView({ title: t("table.finished"), text: app.errorText(error), href, back: t("table.see_match") });
  }
  const gone = error.code === "no_such_table" || error.code === "bad_message";
  const text = error.code === "bad_message" ? t("table.bad_address") : app.errorText(error);
  return missingView({ title: t(gone ? "table.missing" : "table.unavailable"), text, href: "#/lobby", back: t("table.to_lobby") });
}

function waitingRoom(app) {
  const t = app.t;
  const sum = s.summary;
  if (!sum) return html`<p class="loading">${t("table.loading")}</p>`;
  const seated = s.mode === "play";
  const empty = sum.seats.some((x) => x === null);
  return html`<div class="waiting-room">
    <h2>${t("table.waiting", { table: sum.table })}</h2>
    <p>${t("table.rules_line", { rules: rulesName(app, sum.rules), seconds: sum.turn_seconds })}</p>
    <p class="match-facts">${sum.hands ? t("table.length_line", { length: matchLength(app, sum.hands) }) : nothing}
      ${sum.private ? html`<span class="badge">${t("app.lobby.private")}</span>` : nothing}</p>
    <ol class="seats">${sum.seats.map((name, i) => html`<li class=${name ? "taken" : "free"}>${name ? playerName(t, sum.seats, i) : t("table.free_seat")}</li>`)}</ol>
    ${sum.rated ? html`<p class="hint">${t("table.rated_note")}</p>` : nothing}
    ${seated && empty && !sum.rated ? html`${levelPicker(app, "table-level")}<button class="primary" @click=${() => addBots(app)}>${t("table.add_bots")}</button>` : nothing}
    ${seated ? html`<button @click=${() => leave(app)}>${t("table.leave")}</button>` : nothing}
    ${sum.private ? inviteBox(app, sum.table) : nothing}
  </div>`;
}

async function addBots(app) {
  try {
    onSummary(await app.net.request("add_bots", { table: s.table, bot: chosenLevel(app) }));
  } catch (error) {
    app.fail(error);
  }
}

async function leave(app) {
  try {
    await app.leave(s.table);
  } catch (error) {
    app.fail(error);
  }
  app.navigate("#/lobby");
}

/** The tournament whose duplicate session this table plays (`{id, session, table}`), or
 * null: such a table's match is held back, its page refused (403), until every table of the
 * session has finished (docs/tournaments.md, "Duplicate MCR"); its tables send no `reveal`. */
export function heldTournament(summary) {
  return summary && summary.tournament && summary.reveals === false ? summary.tournament : null;
}

function matchEndView(app, names) {
  const t = app.t;
  const m = s.matchEnd;
  const order = m.scores.map((score, p) => ({ p, score })).sort((a, b) => b.score - a.score);
  const ratings = m.ratings || []; // a rated match's rating changes; none for a casual one
  const held = heldTournament(s.summary);
  const tournament = s.summary?.tournament; // any tournament's table: the way back to it
  return html`<section class="final">
    <h2>${t("table.match_end")}</h2>
    <table class="payments"><tbody>${order.map(({ p, score }, rank) => {
      const name = names?.[p];
      const grade = name && s.grades[name];
      const change = ratings.find((r) => r.player === p);
      return html`<tr><td>${rank + 1}.</td><td>${name && !name.startsWith("bot:") ? html`<a href="#/player/${encodeURIComponent(name)}">${name}</a>` : playerName(t, names, p)}</td>
        <td class="num">${signed(score)}</td><td>${grade !== undefined && grade !== null ? t("table.grade", { grade: gradeText(app.lang, grade) }) : ""}</td>
        ${ratings.length ? html`<td class="rating-change ${deltaClass(change?.rating_before, change?.rating_after)}">${change ? html`<span class="visually-hidden">${t("table.rating")} </span>${changeText(app.lang, change.rating_before, change.rating_after)}` : ""}</td>` : nothing}</tr>`;
    })}</tbody></table>
    ${ratings.length ? html`<p class="hint">${t("table.rating_note")} <a href="#/ladder/${encodeURIComponent(s.summary?.rules || "")}">${t("table.see_ladder")}</a></p>` : nothing}
    ${held
      ? html`<p class="hint held-result">${t("app.tournament.held_match_end")}</p>
        <p><a class="button primary" href="#/tournament/${held.id}/${held.session}">${t("app.tournament.to_tournament")}</a> <a class="button" href="#/lobby">${t("table.back_lobby")}</a></p>`
      : html`<p><a class="button primary" href=${matchAddress(m.match, { invite: inviteOf(app) })}>${t("table.see_match")}</a>
        ${tournament ? html`<a class="button" href="#/tournament/${tournament.id}">${t("app.tournament.to_tournament")}</a>` : nothing}
        <a class="button" href="#/lobby">${t("table.back_lobby")}</a></p>`}
  </section>`;
}

/** This table's invite code, when this device has it (only a private table has one, and
 * its match's page opens only with it: protocol.md, GET /api/matches/{id}). Not read from
 * the summary: a seated page may have none by the end (a private table is never listed). */
function inviteOf(app) {
  return app.invites?.[s.table] ?? null;
}

/** The notification option: on only once the browser grants the permission. */
async function notifyToggle(app, box) {
  const on = box.checked && (await askToNotify());
  if (box.checked && !on) app.toast(app.t("table.notify.denied"));
  box.checked = on;
  app.settings.notify = on;
  app.saveSettings();
}

function optionsView(app) {
  const t = app.t;
  const toggle = (key) => (event) => {
    app.settings[key] = event.target.checked;
    app.saveSettings();
    if (key === "aids" && s.update) analyse(s.update); // at once, not at the next update
    app.refresh();
  };
  return html`<details class="table-options">
    <summary>${t("table.options")}</summary>
    <label><input type="checkbox" .checked=${!!app.settings.autoPass} @change=${toggle("autoPass")}> ${t("table.auto_pass")}</label>
    <label><input type="checkbox" .checked=${!!app.settings.sound} @change=${toggle("sound")}> ${t("table.sound")}</label>
    <label><input type="checkbox" .checked=${!!app.settings.tableSounds} @change=${toggle("tableSounds")}> ${t("table.table_sounds")}</label>
    ${canNotify() && s.mode === "play" ? html`<label><input type="checkbox" .checked=${!!app.settings.notify} @change=${(e) => notifyToggle(app, e.target)}> ${t("table.notify.toggle")}</label>` : nothing}
    ${s.summary?.aids && s.mode === "play" ? html`<label><input type="checkbox" .checked=${!!app.settings.aids} @change=${toggle("aids")}> ${t("table.aids.toggle")}</label>` : nothing}
    <div class="help keys-only"><h3>${t("table.keys")}</h3><p>${t("table.keys_help")}</p></div>
  </details>`;
}
