// The one renderer of the table: an update-like payload ({view, events, scores, hand_no,
// hands_total, ...}) drawn the same way for live play, spectating and the replay viewer.
// Pure helpers first (tested in web/test/table.test.js), then the templates. What a seat
// may not see is simply absent from the payload: a seat without `concealed` is drawn as
// backs, "[????]" as a face-down kong; nothing here guesses.
import { html, nothing } from "./vendor/lit-html.js";
import { botLevel, levelName } from "./bots.js";
import { chowTiles, claimedIndex, parseMeld, parseTiles, sortTiles, tileImg, tileKey, withoutOne } from "./tiles.js";

export const SIDES = ["bottom", "right", "top", "left"]; // turn order from the viewer: next player on the right

/** The seats around the viewer: {bottom, right, top, left} → seat objects of `view.seats`
 * (which lists them in position order E S W N, the order of play). */
export function seatsAround(view, player) {
  const n = view.seats.length;
  const mine = Math.max(0, view.seats.findIndex((s) => s.player === player));
  return Object.fromEntries(SIDES.map((side, k) => [side, view.seats[(mine + k) % n]]));
}

/** Who discarded last and still has that tile at the end of the river, after `events`
 * (`previous` carried over from the last update): a claim takes the tile away, a new hand
 * forgets it. */
export function lastDiscard(previous, events) {
  let last = previous;
  for (const e of events) {
    if (e.kind === "discard") last = e.player;
    else if (e.kind === "claim" || e.kind === "hand_start") last = null;
  }
  return last;
}

/** The claims and kongs and wins of `events` as announcements at the claimer's seat:
 * [{player, call}] with `call` one of chow, pung, kong, win (a concealed or added kong is a
 * kong, a self-drawn win a win), in the order they happened. */
export function callsOf(events) {
  const calls = [];
  for (const e of events) {
    if (e.kind === "claim") calls.push({ player: e.player, call: e.type });
    else if (e.kind === "concealed_kong" || e.kind === "add_kong") calls.push({ player: e.player, call: "kong" });
    else if (e.kind === "win") calls.push({ player: e.winner, call: "win" });
  }
  return calls;
}

/** `view.legal` grouped for the buttons: discards (a Set of tiles), chows (lowest tiles),
 * concealed and added kongs (tiles), and flags for pung, kong, win, pass. */
export function legalGroups(legal = []) {
  const g = { discards: new Set(), chows: [], concealedKongs: [], addKongs: [], pung: null, kong: null, win: null, pass: null };
  for (const a of legal) {
    if (a.type === "discard") g.discards.add(a.tile);
    else if (a.type === "chow") g.chows.push(a);
    else if (a.type === "concealed_kong") g.concealedKongs.push(a);
    else if (a.type === "add_kong") g.addKongs.push(a);
    else if (a.type in g) g[a.type] = a;
  }
  return g;
}

/** The claims and kongs and the win of `legal` in the order the buttons show them, each
 * with its shortcut key and the tiles it shows (chow groups, kong tiles). */
export function actionButtons(legal = []) {
  const g = legalGroups(legal);
  const out = [];
  if (g.win) out.push({ action: g.win, key: "H", label: "table.action.win", tiles: [] });
  if (g.kong) out.push({ action: g.kong, key: "K", label: "table.action.kong", tiles: [] });
  for (const a of g.concealedKongs) out.push({ action: a, key: "K", label: "table.action.concealed_kong", tiles: [a.tile] });
  for (const a of g.addKongs) out.push({ action: a, key: "K", label: "table.action.add_kong", tiles: [a.tile] });
  if (g.pung) out.push({ action: g.pung, key: "P", label: "table.action.pung", tiles: [] });
  for (const a of g.chows) out.push({ action: a, key: "C", label: "table.action.chow", tiles: chowTiles(a.tile) });
  if (g.pass) out.push({ action: g.pass, key: "Esc", label: "table.action.pass", tiles: [] });
  return out;
}

/** The own hand as shown: the concealed tiles sorted (wild tiles first) and the drawn tile
 * apart at the right (`drawn` null when there is none). */
export function ownHand(seat, drawn, wild = []) {
  const tiles = parseTiles(seat.concealed || "");
  if (drawn && tiles.includes(drawn)) return { tiles: sortTiles(withoutOne(tiles, drawn), wild), drawn };
  return { tiles: sortTiles(tiles, wild), drawn: null };
}

/** A winning hand's text ("[678s,1]678m56m44p7m") as its melds and its concealed tiles, the
 * winning tile last. */
export function splitHand(text) {
  const melds = text.match(/\[[^\]]*\]/g) || [];
  return { melds, tiles: parseTiles(text.replace(/\[[^\]]*\]/g, "")) };
}

/** The hand's result so far after event `e` (`result`: what the hand's earlier events
 * gave, null before its end): {hand_no, win, head_bump, hands, scores}. */
export function foldResult(result, e, handNo, scores) {
  if (e.kind === "hand_start") return null;
  if (e.kind === "head_bump") return { ...(result || {}), hand_no: handNo, head_bump: e };
  if (e.kind === "win" || e.kind === "exhausted") {
    return { hand_no: handNo, win: e.kind === "win" ? e : null, head_bump: result?.head_bump || null, hands: null, scores: null };
  }
  if (e.kind === "hand_end" && result) return { ...result, hands: e.hands, scores };
  return result;
}

const TOLD = new Set(["flower", "draw", "discard", "claim", "concealed_kong", "add_kong", "win", "exhausted"]);

/** What happened, in words: "Bot 2 discards 7 Dots · Bot 3: pung". */
export function describeEvents(t, names, events) {
  const who = (p) => playerName(t, names, p);
  const tile = (x) => (x ? t(tileKey(x)) : "");
  return events.filter((e) => TOLD.has(e.kind)).map((e) => {
    const p = e.kind === "win" ? e.winner : e.player;
    const what = e.kind === "claim" ? `table.event.${e.type}` : `table.event.${e.kind}`;
    return t(what, { name: who(p), tile: tile(e.tile || e.flower) }).trim();
  }).join(" · ");
}

// The twelve starred fans (document 000's extras, scored only under the custom rules): the
// protocol names a fan but does not flag these, so the client knows them by name.
const STARRED = new Set([
  "Heavenly Hand", "Earthly Hand", "Human Hand", "Big Four Winds and Green Dragon", "Four Wilds",
  "Four Mixed-Suit Shifted Pungs", "Mixed-Suit Shifted Pungs", "Four Mixed-Suit Shifted Chows",
  "Mixed-Suit Shifted Chows", "Pair of 2, 5 or 8", "Pair of 1 or 9", "Seat Flower",
]);

/** A fan's name in the current language, starred (★) when it is one of the custom extras. */
export const fanLabel = (fan, lang) => `${STARRED.has(fan.name) ? "★ " : ""}${lang === "zh" ? fan.name_zh : fan.name}`;

/** Whole seconds left before `deadlineAt` (a performance.now() time), never below 0. */
export const secondsLeft = (deadlineAt, now) => Math.max(0, Math.ceil((deadlineAt - now) / 1000));

/** "+8", "-16", "0". */
export const signed = (n) => (n > 0 ? `+${n}` : `${n}`);

/** A seat's display name: its username, or "Bot 2 · Strong" for a bot seat (its level), or
 * "Player 2" when the table's seats are not known. */
export function playerName(t, names, player) {
  const name = names && names[player];
  if (!name) return t("table.player", { n: player + 1 });
  if (name.startsWith("bot:")) return t("table.bot_level", { n: player + 1, level: levelName(t, botLevel(name)) });
  return name;
}

// ------------------------------------------------------------------ templates ---

/** A meld: its tiles, the claimed one turned and marked with who gave it. */
function meldView(ctx, text, wild) {
  const meld = parseMeld(text);
  const claimed = claimedIndex(meld);
  const from = ctx.t(`table.offer.${meld.kind === "chow" ? 1 : meld.offer}`);
  // A concealed kong shows its outer tiles face down, as on a real table.
  const faces = meld.concealed && !meld.hidden ? meld.tiles.map((x, i) => (i === 0 || i === 3 ? "back" : x)) : meld.tiles;
  const label = meld.hidden ? ctx.t("table.hidden_kong") : `${ctx.t(`table.meld.${meld.kind}`)}${claimed >= 0 ? ` (${from})` : ""}`;
  return html`<span class="meld meld-${meld.kind}" role="group" aria-label=${label} title=${label}>${faces.map((tile, i) =>
    tileImg(ctx.t, tile, { wild: wild.includes(tile), cls: i === claimed ? "claimed-in" : "" }))}</span>`;
}

function riverView(ctx, seat, isLast, wild) {
  const river = seat.river;
  return html`<div class="river" role="list" aria-label=${ctx.t("table.river")}>${river.map((entry, i) => {
    const claimed = entry.endsWith("*");
    const tile = claimed ? entry.slice(0, -1) : entry;
    const last = isLast && i === river.length - 1 && !claimed;
    const cls = `${claimed ? "taken" : ""} ${last ? "last" : ""}`;
    const title = `${ctx.t(`tile.${tile}`)}${claimed ? ` · ${ctx.t("table.claimed")}` : ""}${last ? ` · ${ctx.t("table.last_discard")}` : ""}`;
    return html`<span role="listitem">${tileImg(ctx.t, tile, { wild: wild.includes(tile), cls, title })}</span>`;
  })}</div>`;
}

/** Another seat's concealed tiles: face up once they are known (hand over, replay), else
 * as many backs as it holds. */
function hiddenHand(ctx, seat, wild) {
  if (seat.concealed !== undefined) {
    const tiles = sortTiles(parseTiles(seat.concealed), wild);
    return html`<span class="hand shown">${tiles.map((x) => tileImg(ctx.t, x, { wild: wild.includes(x) }))}</span>`;
  }
  const backs = Array.from({ length: seat.concealed_count }, () => tileImg(ctx.t, "back"));
  return html`<span class="hand backs" aria-label=${ctx.t("table.concealed_count", { n: seat.concealed_count })}>${backs}</span>
    <span class="count" aria-hidden="true">×${seat.concealed_count}</span>`;
}

function seatHead(ctx, seat, side) {
  const { state } = ctx;
  const view = state.view;
  const score = state.scores ? state.scores[seat.player] : 0;
  const turn = view.current === seat.player && view.phase !== "over";
  return html`<header class="seat-head ${turn ? "turn" : ""}">
    <span class="wind" title=${ctx.t("table.seat_wind")}>${ctx.t(`table.wind.${seat.wind}`)}</span>
    <span class="name">${playerName(ctx.t, ctx.names, seat.player)}${side === "bottom" && view.you === seat.player ? html` <small>(${ctx.t("table.you")})</small>` : nothing}</span>
    ${view.dealer === seat.player ? html`<span class="dealer" title=${ctx.t("table.dealer")}>${ctx.t("table.dealer_mark")}</span>` : nothing}
    <span class="score">${signed(score)}</span>
    ${seat.flowers.length ? html`<span class="flowers" aria-label=${ctx.t("table.flowers")}>${seat.flowers.map((f) => tileImg(ctx.t, f))}</span>` : nothing}
    ${callout(ctx, seat)}
  </header>`;
}

/** Whether it is `seat`'s move: the glow on its place at the table. */
const onTurn = (view, seat) => view.current === seat.player && view.phase !== "over";

/** The claim just made at this seat ("Pung", "碰"), shown for a moment over the seat's name
 * line (`ctx.calls`: {player: call}): over the middle of the seat it hid the seat's river,
 * the discards the other players read to decide their next move. */
function callout(ctx, seat) {
  const call = ctx.calls && ctx.calls[seat.player];
  return call ? html`<div class="callout callout-${call}" role="status">${ctx.t(`table.call.${call}`)}</div>` : nothing;
}

function otherSeat(ctx, seat, side, wild) {
  return html`<section class="seat seat-${side} ${onTurn(ctx.state.view, seat) ? "turn" : ""}" data-player=${seat.player} aria-label=${playerName(ctx.t, ctx.names, seat.player)}>
    <div class="seat-info">
      ${seatHead(ctx, seat, side)}
      <div class="seat-tiles">${hiddenHand(ctx, seat, wild)}<span class="melds">${seat.melds.map((m) => meldView(ctx, m, wild))}</span></div>
    </div>
    ${riverView(ctx, seat, ctx.last === seat.player, wild)}
  </section>`;
}

/** The own hand: buttons for the discardable tiles (tap to raise, tap again to discard). */
function ownSeat(ctx, seat, wild) {
  const { view } = ctx.state;
  if (seat.concealed === undefined) return otherSeat(ctx, seat, "bottom", wild); // spectator
  const hand = ownHand(seat, view.drawn, wild);
  const groups = legalGroups(ctx.legal);
  const shown = hand.drawn ? [...hand.tiles, hand.drawn] : hand.tiles;
  const tileButton = (tile, i) => {
    const can = groups.discards.has(tile) && ctx.interactive;
    const raised = ctx.selected === i;
    const cls = `${i === hand.tiles.length ? "drawn" : ""} ${raised ? "raised" : ""}`;
    const face = tileImg(ctx.t, tile, { wild: wild.includes(tile) });
    if (!can) return html`<span class="htile ${cls}" data-tile=${tile}>${face}</span>`;
    return html`<button class="htile ${cls}" data-tile=${tile} data-index=${i} aria-pressed=${raised ? "true" : "false"}
      @click=${() => ctx.onTile(i, tile)}>${face}</button>`;
  };
  return html`<section class="seat seat-bottom own ${onTurn(view, seat) ? "turn" : ""}" data-player=${seat.player} aria-label=${ctx.t("table.your_hand")}>
    ${riverView(ctx, seat, ctx.last === seat.player, wild)}
    ${seatHead(ctx, seat, "bottom")}
    <div class="own-tiles">
      <span class="melds">${seat.melds.map((m) => meldView(ctx, m, wild))}</span>
      <span class="hand own-hand" role="group" aria-label=${ctx.t("table.your_hand")}>${shown.map(tileButton)}</span>
    </div>
  </section>`;
}

/** The middle of the table: a compass of the seats' winds (each on the side of its seat, the
 * one to move lit) around the round and the turn's clock; the wall and the dice beside it. */
function centre(ctx, around) {
  const { state } = ctx;
  const view = state.view;
  const d = view.dice;
  const seconds = ctx.deadlineAt ? secondsLeft(ctx.deadlineAt, ctx.now) : null;
  const rules = view.rules;
  const wind = (side) => {
    const seat = around[side];
    return html`<span class="cw cw-${side} ${onTurn(view, seat) ? "turn" : ""} ${view.dealer === seat.player ? "dealer" : ""}"
      title=${`${ctx.t("table.seat_wind")}: ${playerName(ctx.t, ctx.names, seat.player)}`}>${ctx.t(`table.wind_mark.${seat.wind}`)}</span>`;
  };
  return html`<div class="centre" aria-label=${ctx.t("table.info")}>
    <div class="compass">
      ${["top", "left", "right", "bottom"].map(wind)}
      <div class="compass-core">
        <span class="round-wind" aria-hidden="true">${ctx.t(`table.wind_mark.${view.round_wind}`)}</span>
        ${seconds !== null ? html`<div class="countdown ${seconds <= 5 ? "urgent" : ""}" role="timer" aria-label=${ctx.t("table.seconds_left", { n: seconds })}>${seconds}</div>` : nothing}
      </div>
    </div>
    <div class="centre-facts">
      <div class="round">${ctx.t(`table.round.${view.round_wind}`)} · ${state.hands_total ? ctx.t("table.hand_of", { n: state.hand_no, total: state.hands_total }) : ctx.t("table.hand_no", { n: state.hand_no })}</div>
      <div class="wall" title=${ctx.t("table.wall")}>${ctx.t("table.wall_left", { n: view.wall_remaining })}</div>
      <div class="dice">${ctx.t("table.dice")} ${d[0][0]}+${d[0][1]} · ${d[1][0]}+${d[1][1]}</div>
      ${rules ? html`<div class="rules-mark">${ctx.t("table.custom_rules", { name: rules.name })}
        ${view.indicator ? html`<span class="indicator">${ctx.t("table.indicator")} ${tileImg(ctx.t, view.indicator)}</span>` : nothing}
        ${view.wild_tiles && view.wild_tiles.length ? html`<span class="wilds">${ctx.t("table.wild_tiles")} ${view.wild_tiles.map((x) => tileImg(ctx.t, x, { wild: true }))}</span>` : nothing}</div>` : nothing}
    </div>
  </div>`;
}

/** The buttons of exactly `ctx.legal` (claims, kongs, win, pass) and, while a tile is raised,
 * its discard; what is being claimed is shown beside them. */
export function actionBar(ctx) {
  if (!ctx.interactive || !ctx.legal.length) return nothing;
  const claim = ctx.state.view.claim;
  const buttons = actionButtons(ctx.legal);
  const raised = ctx.raisedTile;
  // After a chow or pung the hand has no drawn tile to start raised: the player is told.
  const claimed = ctx.state.view.phase === "claimed" && legalGroups(ctx.legal).discards.size > 0;
  if (!buttons.length && !raised && !claimed) return nothing; // a discard to choose: the tiles are the buttons
  return html`<div class="actions" role="toolbar" aria-label=${ctx.t("table.actions")}>
    ${claimed && !raised ? html`<span class="prompt" role="status">${ctx.t("table.choose_discard")}</span>` : nothing}
    ${claim && buttons.length ? html`<span class="claim-tile">${tileImg(ctx.t, claim.tile)} <span>${ctx.t("table.claim_from", { name: playerName(ctx.t, ctx.names, claim.from) })}</span></span>` : nothing}
    ${buttons.map((b) => html`<button class="act act-${b.action.type}" data-action=${b.action.type} data-tile=${b.action.tile || nothing} data-key=${b.key}
      @click=${() => ctx.onAction(b.action)}>${ctx.t(b.label)}${b.tiles.map((x) => tileImg(ctx.t, x))}<kbd>${b.key}</kbd></button>`)}
    ${raised ? html`<button class="act act-discard" data-action="discard" @click=${() => ctx.onAction({ type: "discard", tile: raised })}>${ctx.t("table.action.discard")} ${tileImg(ctx.t, raised)}<kbd>Enter</kbd></button>` : nothing}
  </div>`;
}

/** The whole table. `ctx`: {t, state (update-like), names (by player), perspective (the
 * player at the bottom), last (lastDiscard), legal, interactive, selected, raisedTile,
 * deadlineAt, now, onTile(index, tile), onAction(action), calls (optional: the claims to
 * announce, {player: call}), aids (optional: the aids panel, `aidsView`)}. The aids and the
 * action bar stay together under the own hand, on screen: what a raised tile's discard
 * leaves is read where the tile was raised. */
export function tableView(ctx) {
  const view = ctx.state.view;
  const wild = view.wild_tiles || [];
  const around = seatsAround(view, ctx.perspective);
  return html`<div class="board phase-${view.phase}">
    ${["top", "left", "right"].map((side) => otherSeat(ctx, around[side], side, wild))}
    ${centre(ctx, around)}
    ${ownSeat(ctx, around.bottom, wild)}
  </div>
  <div class="table-foot">${ctx.aids || nothing}${actionBar(ctx)}</div>`;
}

// ---------------------------------------------------------------- hand end ---

/** A hand laid out: concealed tiles then melds. */
export function handLine(t, concealed, melds, wild = []) {
  const ctx = { t };
  return html`<span class="hand-line">${parseTiles(concealed).map((x) => tileImg(t, x, { wild: wild.includes(x) }))}
    ${melds.map((m) => meldView(ctx, m, wild))}</span>`;
}

/** The end of a hand: how it scored first (the fans in the current language and their
 * total, the payments by player: what a small sheet on a phone must show without a scroll),
 * then the winning hand, every hand revealed, and the fairness check. `result`:
 * {hand_no, win, head_bump, hands, scores, fairness}: `fairness` {status, command} (status
 * "ok", "bad" or "unseen"), null while the reveal is awaited, absent where there is none to
 * check (a replay). */
export function resultView(t, lang, names, result, wild = []) {
  const win = result.win;
  const name = (p) => playerName(t, names, p);
  const fanName = (f) => fanLabel(f, lang);
  const winning = win ? splitHand(win.hand) : null;
  return html`<div class="result-body">
    <h2>${t("table.result.heading", { n: result.hand_no, what: win
      ? win.discarder === null ? t("table.result.self_drawn", { name: name(win.winner) }) : t("table.result.won_on", { name: name(win.winner), from: name(win.discarder) })
      : t("table.result.drawn") })}</h2>
    ${win ? html`<table class="fans"><tbody>${win.fans.map((f) => html`<tr><td>${fanName(f)}${f.count > 1 ? ` ×${f.count}` : ""}</td><td class="num">${f.points * f.count}</td></tr>`)}
        <tr class="total"><td>${t("table.result.total")}</td><td class="num">${win.total} ${t("table.fan")}</td></tr></tbody></table>` : nothing}
    <table class="payments"><thead><tr><th>${t("table.result.player")}</th><th class="num">${t("table.result.delta")}</th><th class="num">${t("table.result.score")}</th></tr></thead>
      <tbody>${(win ? win.deltas : [0, 0, 0, 0]).map((d, p) => html`<tr class=${d > 0 ? "plus" : d < 0 ? "minus" : ""}><td>${name(p)}</td><td class="num">${signed(d)}</td><td class="num">${result.scores ? signed(result.scores[p]) : ""}</td></tr>`)}</tbody></table>
    ${win ? html`<h3>${t("table.result.winning_hand")}</h3><div class="winning-hand">${winning.tiles.map((x, i) => tileImg(t, x, { wild: wild.includes(x), cls: i === winning.tiles.length - 1 ? "winning" : "" }))}
        ${winning.melds.map((m) => meldView({ t }, m, wild))}</div>` : nothing}
    ${result.head_bump ? html`<p>${t("table.result.head_bump", { names: result.head_bump.others.map(name).join(", ") })}</p>` : nothing}
    ${result.hands ? html`<div class="revealed"><h3>${t("table.result.hands")}</h3>${result.hands.map((h, p) =>
      html`<div class="revealed-hand"><span class="who">${name(p)}</span>${handLine(t, h.concealed, h.melds, wild)}</div>`)}</div>` : nothing}
    ${result.fairness !== undefined ? fairnessView(t, result.fairness) : nothing}
  </div>`;
}

const FAIR_MARKS = { ok: "✓", bad: "✗", unseen: "?" };

/** The fairness line: ✓ when the revealed seed and salt hash to the commitment sent before
 * the hand, ✗ when not, a neutral ? when this page never got that hand's commitment, and
 * the command that also rebuilds the wall; `held`: a duplicate session's hand, whose seed
 * comes with the session's end. */
export function fairnessView(t, fairness) {
  if (!fairness) return html`<p class="fairness pending">${t("table.fair.waiting")}</p>`;
  if (fairness.status === "held") return html`<p class="fairness pending">${t("table.fair.held")}</p>`;
  const status = fairness.status;
  return html`<div class="fairness ${status}">
    <p><span class="fair-mark" aria-hidden="true">${FAIR_MARKS[status]}</span> ${t(`table.fair.${status}`)}</p>
    <details><summary>${t("table.fair.command")}</summary><code class="verify">${fairness.command}</code></details>
  </div>`;
}

// ------------------------------------------------------------------- aids ---

/** One wait of an `analysis` in words: "2 Dots ×3 · 7 fan on a discard: needs 8 · 9 fan
 * self-drawn". A total not worked out (`null`) says so. */
export function waitText(t, wait, minFan) {
  const outcome = (o, how) => {
    if (!o) return null;
    const total = o.total === null ? "?" : o.total;
    const short = o.meets_minimum === false ? ` ${t("table.aids.needs", { n: minFan })}` : "";
    return `${t(`table.aids.${how}`, { n: total })}${short}`;
  };
  const tile = t(tileKey(wait.tile));
  return [`${tile} ×${wait.unseen}`, outcome(wait.discard, "on_discard"), outcome(wait.self_drawn, "self_drawn")]
    .filter(Boolean).join(" · ");
}

/** What the aids panel shows: the waits of a 13-tile hand; on the player's turn what the
 * raised tile's discard leaves, or the best three discards. */
export function aidsPicks(analysis, raised) {
  if (!analysis) return null;
  if (analysis.waits) return { kind: "waits", shanten: analysis.shanten, waits: analysis.waits };
  const discards = analysis.discards || [];
  const chosen = raised ? discards.filter((d) => d.tile === raised) : discards.slice(0, 3);
  return { kind: "discards", shanten: analysis.shanten, discards: chosen };
}

/** The aids panel (opt-in): see `aidsPicks`. */
export function aidsView(t, analysis, raised) {
  const picks = aidsPicks(analysis, raised);
  if (!picks) return nothing;
  const waits = (list) => list.length
    ? html`<ul>${list.map((w) => html`<li>${tileImg(t, w.tile)} ${waitText(t, w, analysis.min_fan)}</li>`)}</ul>`
    : html`<p>${t("table.aids.not_ready")}</p>`;
  const shanten = (n) => (n <= 0 ? "" : t("table.aids.shanten", { n }));
  return html`<aside class="aids" aria-label=${t("table.aids.title")}><h3>${t("table.aids.title")}</h3>
    ${picks.kind === "waits"
      ? html`<p>${picks.shanten < 0 ? t("table.aids.complete") : shanten(picks.shanten) || t("table.aids.waits")}</p>${picks.shanten === 0 ? waits(picks.waits) : nothing}`
      : picks.discards.map((d) => html`<div class="aids-choice"><p>${t("table.aids.discard", { tile: t(`tile.${d.tile}`), left: shanten(d.shanten) }).trim()}</p>${d.shanten === 0 ? waits(d.waits) : nothing}</div>`)}
  </aside>`;
}
