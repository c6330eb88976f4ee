// The live table page (seated player and spectator). Minimal placeholder; grows below.
import { html } from "../vendor/lit-html.js";

export const tablePage = {
  enter(app, params) {},
  leave(app) {},
  view(app) {
    return html`<section class="table-page">${app.t("table.loading")}</section>`;
  },
};
