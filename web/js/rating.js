// Ladder figures in words, shared by the leaderboard, the player and match pages and the
// match end at the table. A rating on screen is always the conservative figure (mu - 3
// sigma, what the leaderboard orders by) with one decimal; a grade (级别) has two.

const LOCALES = { en: "en-US", zh: "zh-CN" };
const formats = new Map();

function format(lang, digits) {
  const key = `${lang}|${digits}`;
  if (!formats.has(key)) {
    formats.set(key, new Intl.NumberFormat(LOCALES[lang] || LOCALES.en, {
      minimumFractionDigits: digits,
      maximumFractionDigits: digits,
    }));
  }
  return formats.get(key);
}

/** `1204.26` → "1,204.3" (one decimal, grouped the visitor's way). */
export function ratingText(lang, value) {
  return value === null || value === undefined ? "–" : format(lang, 1).format(value);
}

/** A grade (级别) with two decimals. */
export function gradeText(lang, value) {
  return value === null || value === undefined ? "–" : format(lang, 2).format(value);
}

/** The change from `before` to `after` as shown: "+0.7", "−1.2" (a true minus), "±0.0".
 * Rounded first, so the sign never disagrees with the figure beside it. */
export function deltaText(lang, before, after) {
  const delta = Math.round((after - before) * 10) / 10;
  const figure = format(lang, 1).format(Math.abs(delta));
  return delta > 0 ? `+${figure}` : delta < 0 ? `\u2212${figure}` : `\u00b1${figure}`;
}

/** "plus", "minus" or "": the class a change is drawn with. */
export function deltaClass(before, after) {
  const delta = Math.round((after - before) * 10) / 10;
  return delta > 0 ? "plus" : delta < 0 ? "minus" : "";
}

/** A rating change in one line: "12.4 → 13.1 (+0.7)". */
export function changeText(lang, before, after) {
  return `${ratingText(lang, before)} \u2192 ${ratingText(lang, after)} (${deltaText(lang, before, after)})`;
}

/** "2026-12-01" of an ISO time, in the visitor's own time zone ("" for none). */
export function dateText(iso) {
  if (!iso) return "";
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return iso;
  const pad = (n) => String(n).padStart(2, "0");
  return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}`;
}

/** "0:07", "1:05", "1:02:03": a wait in seconds, as a clock shows it. */
export function clockText(seconds) {
  const total = Math.max(0, Math.floor(seconds));
  const h = Math.floor(total / 3600);
  const m = Math.floor((total % 3600) / 60);
  const s = String(total % 60).padStart(2, "0");
  return h > 0 ? `${h}:${String(m).padStart(2, "0")}:${s}` : `${m}:${s}`;
}
