// Any hash no route knows: say so and point home.
import { html } from "../vendor/lit-html.js";

export const notFoundPage = {
  title(app) {
    return app.t("app.notfound.title");
  },
  view(app) {
    return html`<section class="card narrow">
      <h1>${app.t("app.notfound.title")}</h1>
      <p>${app.t("app.notfound.text")}</p>
      <a class="button primary" href="#/">${app.t("app.nav.home")}</a>
    </section>`;
  },
};
