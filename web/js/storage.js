// A value kept as JSON in a browser storage (localStorage, sessionStorage), read and written
// so that a corrupt, refused or full storage never stops the client: it just keeps nothing.

/** The value under `key` in `storage`, or `fallback` (none, unreadable, no storage). */
export function readJson(storage, key, fallback) {
  try {
    const text = storage.getItem(key);
    return text ? JSON.parse(text) : fallback;
  } catch {
    return fallback; // a corrupt or unavailable storage must not stop the client
  }
}

/** Keep `value` under `key` in `storage` (null: forget it). */
export function writeJson(storage, key, value) {
  try {
    if (value === null) storage.removeItem(key);
    else storage.setItem(key, JSON.stringify(value));
  } catch {
    // private mode or a full storage: kept as long as the page, no worse
  }
}
