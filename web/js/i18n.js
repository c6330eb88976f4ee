// Every text the client shows, in English and Chinese. The shell's and the table's
// dictionaries are merged here; keys are namespaced (app.*, table.*, replay.*, tile.*) so the
// two never collide, and both languages must have the same keys (web/test/app.test.js).
import appTexts from "./i18n/app.js";
import tableTexts from "./i18n/table.js";

export const LANGS = ["en", "zh"];
export const DICTIONARIES = { app: appTexts, table: tableTexts };

/** The merged dictionary of each language. */
export function mergeDictionaries(dictionaries = Object.values(DICTIONARIES)) {
  const merged = { en: {}, zh: {} };
  for (const dictionary of dictionaries) {
    for (const lang of LANGS) Object.assign(merged[lang], dictionary[lang]);
  }
  return merged;
}

const TEXTS = mergeDictionaries();

/** The keys one language has and the other lacks, e.g. `["zh lacks app.home.title"]`. */
export function missingKeys(dictionary) {
  const problems = [];
  for (const lang of LANGS) {
    for (const other of LANGS) {
      for (const key of Object.keys(dictionary[other] || {})) {
        if (!(key in (dictionary[lang] || {}))) problems.push(`${lang} lacks ${key}`);
      }
    }
  }
  return problems;
}

/** `key` in `lang` with `{name}` placeholders filled from `params`. An unknown key shows
 * itself, so a missing text is visible at once instead of an empty label. */
export function translate(lang, key, params = {}, texts = TEXTS) {
  const text = (texts[lang] && texts[lang][key]) ?? texts.en[key] ?? key;
  return text.replace(/\{(\w+)\}/g, (whole, name) => (name in params ? String(params[name]) : whole));
}

/** The language a first-time visitor gets: Chinese if the browser prefers it. */
export function defaultLang(languages = globalThis.navigator ? navigator.languages || [] : []) {
  return languages.some((l) => l.toLowerCase().startsWith("zh")) ? "zh" : "en";
}

// Server error codes with words of their own; anything else shows the server's `reason`.
const KNOWN_ERRORS = new Set([
  "auth_failed",
  "username_taken",
  "username_confusable",
  "weak_password",
  "bad_username",
  "rate_limited",
  "table_full",
  "too_many_tables",
  "seat_taken",
  "wrong_invite",
  "table_started",
  "already_seated",
  "no_such_table",
  "table_finished",
  "not_seated",
  "not_authenticated",
  "not_registered",
  "rated_table",
  "same_four_limit",
  "no_such_ladder",
  "no_such_tournament",
  "not_director",
  "registration_closed",
  "already_registered",
  "not_a_player",
  "no_seating",
  "too_few_players",
  "disconnected",
  "server_shutdown",
  "internal_error",
]);

/** What to tell a person about a refused request (an Error from net.request). */
export function errorText(lang, error, texts = TEXTS) {
  const code = error && error.code;
  if (code === "rate_limited" && error.retryAfter != null) {
    return translate(lang, "app.error.rate_limited_wait", { n: error.retryAfter }, texts);
  }
  if (code === "already_seated" && error.table) {
    return translate(lang, "app.error.already_seated_at", { table: error.table }, texts);
  }
  if (KNOWN_ERRORS.has(code)) return translate(lang, `app.error.${code}`, {}, texts);
  return (error && (error.reason || error.message)) || translate(lang, "app.error.unknown", {}, texts);
}
