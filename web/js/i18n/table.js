// TABLE's dictionary: table.*, replay.*, tile.* keys in both languages.
export default {
  en: { "table.loading": "Loading…" },
  zh: { "table.loading": "加载中…" },
};
