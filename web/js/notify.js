// The opt-in notification "your turn" (the table's option `notify`): shown only while the
// tab is hidden, only once the player ticked the box and the browser granted the permission
// (asked when the box is ticked, never before).

/** Whether this browser can show notifications at all. */
export function canNotify() {
  return typeof Notification !== "undefined";
}

/** The box was ticked: ask for the permission if need be; true when granted. */
export async function askToNotify() {
  if (!canNotify() || Notification.permission === "denied") return false;
  // Asked even when granted already: the browser answers at once then, without a prompt.
  return (await Notification.requestPermission()) === "granted";
}

/** Tell the player it is her turn at `table`, if she asked for it and cannot see the page. */
export function notifyTurn(app, table) {
  if (!app.settings.notify || !canNotify() || Notification.permission !== "granted") return;
  if (!document.hidden) return;
  const note = new Notification(app.t("table.notify.title"), {
    body: app.t("table.notify.body", { table }),
    tag: `guobiao-turn-${table}`, // one at a time per table: a newer one replaces it
    icon: "/icons/icon-192.png",
  });
  note.onclick = () => {
    window.focus();
    note.close();
  };
}
