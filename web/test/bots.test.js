// The bots' levels in the client (bots.js): a seat label's level, its name in both
// languages at the lobby and at the table, the level remembered, the picker and what it sends.
import { eq, ok, test } from "./harness.js";
import { render } from "../js/vendor/lit-html.js";
import { translate } from "../js/i18n.js";
import { LEVELS, botLevel, botName, chosenLevel, levelName, levelPicker } from "../js/bots.js";
import { playerName } from "../js/render.js";
import { joinPayload } from "../js/queue.js";

const en = (key, params) => translate("en", key, params);
const zh = (key, params) => translate("zh", key, params);

test("bots: a seat label's level; default is normal's old name; people have none", () => {
  eq(LEVELS, ["easy", "normal", "strong"]);
  eq(["bot:easy", "bot:normal", "bot:strong", "bot:default", "bot:fast", "lin", null].map(botLevel),
    ["easy", "normal", "strong", "normal", "fast", null, null]);
});

test("bots: named by their level in both languages, at the lobby and at the table", () => {
  eq(LEVELS.map((level) => levelName(en, level)), ["Easy", "Normal", "Strong"]);
  eq(LEVELS.map((level) => levelName(zh, level)), ["简单", "普通", "困难"]);
  eq(levelName(en, "fast"), "Load test");
  eq(levelName(en, "wizard"), "wizard", "a newer server's bot keeps its name");
  eq([botName(en, "bot:strong"), botName(zh, "bot:strong")], ["Bot · Strong", "机器人·困难"]);
  eq(botName(en, "bot:default"), "Bot · Normal");
  const seats = ["lin", "bot:easy", "bot:strong", "bot:default"];
  eq([1, 2, 3].map((p) => playerName(en, seats, p)), ["Bot 2 · Easy", "Bot 3 · Strong", "Bot 4 · Normal"]);
  eq(playerName(zh, seats, 2), "机器人3·困难");
  eq(playerName(en, seats, 0), "lin");
});

test("bots: the level chosen is remembered; anything else is normal", () => {
  eq(chosenLevel({ settings: { botLevel: "strong" } }), "strong");
  eq(chosenLevel({ settings: { botLevel: "fast" } }), "normal", "never the load-test bot");
  eq(chosenLevel({ settings: {} }), "normal");
  eq(joinPayload(true, null, "easy"), { casual: true, bot: "easy" });
  eq(joinPayload(false, "mcr", "easy"), { ladder: "mcr" }, "the rated queue seats no bots");
});

test("bots: the picker, three radio buttons in a named group; a choice is saved", () => {
  let saved = 0;
  const app = { settings: { botLevel: "easy" }, t: en, saveSettings: () => saved++ };
  const root = document.body.appendChild(document.createElement("div"));
  render(levelPicker(app, "t-level"), root);
  const group = root.querySelector("[role=radiogroup]");
  eq(root.querySelector(`#${group.getAttribute("aria-labelledby")}`).textContent, "Bots’ level");
  const radios = [...root.querySelectorAll("input[type=radio]")];
  eq(radios.map((r) => r.closest("label").textContent.trim()), ["Easy", "Normal", "Strong"]);
  eq(radios.map((r) => r.checked), [true, false, false]);
  radios[2].click();
  eq([app.settings.botLevel, saved], ["strong", 1]);
  ok(radios.every((r) => r.name === "t-level"), "one group");
  root.remove();
});
