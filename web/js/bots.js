// The server bots' levels (docs/protocol.md, "Bots"): their names in both languages, the
// level picker (Easy / Normal / Strong) shown wherever bots are offered (Play now, the
// lobby's and the table's "add bots"), and the level this device remembers
// (app.settings.botLevel), sent with add_bots and the casual queue's queue_join.
import { html } from "./vendor/lit-html.js";

/** The levels players choose from, weakest first (engine.bots.LEVELS). */
export const LEVELS = ["easy", "normal", "strong"];
export const DEFAULT_LEVEL = "normal";

/** The level this device remembers, or normal. */
export function chosenLevel(app) {
  const level = app.settings && app.settings.botLevel;
  return LEVELS.includes(level) ? level : DEFAULT_LEVEL;
}

/** The bot of a seat label "bot:NAME": its level (`default` is normal's old name), `fast`, or
 * whatever else a newer server names; null for a person or a free seat. */
export function botLevel(label) {
  if (!label || !label.startsWith("bot:")) return null;
  const name = label.slice(4);
  return name === "default" ? "normal" : name;
}

/** A level's name in the current language ("Strong", "困难"); the load-test bot's too; an
 * unknown name as it is. */
export function levelName(t, level) {
  return LEVELS.includes(level) || level === "fast" ? t(`app.bot.level.${level}`) : level;
}

/** A bot's seat as the lobby and the player pages name it: "Bot · Strong". */
export function botName(t, label) {
  return t("app.seat.bot_level", { level: levelName(t, botLevel(label)) });
}

function choose(app, level) {
  app.settings.botLevel = level;
  app.saveSettings();
}

/** The picker: three radio buttons named by their levels in a group named "Bots' level";
 * `id` tells one page's group from another's. */
export function levelPicker(app, id) {
  const chosen = chosenLevel(app);
  return html`<div class="levels" role="radiogroup" aria-labelledby=${`${id}-label`}>
    <span class="levels-label" id=${`${id}-label`}>${app.t("app.bot.picker")}</span>
    <span class="levels-options">${LEVELS.map(
      (level) => html`<label class="level"><input type="radio" name=${id} value=${level}
        .checked=${level === chosen} @change=${() => choose(app, level)}><span>${levelName(app.t, level)}</span></label>`,
    )}</span>
  </div>`;
}
