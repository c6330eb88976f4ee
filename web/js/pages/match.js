// The match page and replay viewer. Minimal placeholder; grows below.
import { html } from "../vendor/lit-html.js";

export const matchPage = {
  enter(app, params) {},
  leave(app) {},
  view(app) {
    return html`<section class="match-page">${app.t("table.loading")}</section>`;
  },
};
