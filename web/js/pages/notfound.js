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

/** The page for a thing an address names that does not exist or cannot be shown (a match,
 * a table): a heading, a sentence saying so, and a link back (`href`, its label `back`). */
export function missingView({ title, text, href, back }) {
  return html`<section class="card narrow missing">
    <h1>${title}</h1>
    <p role="alert">${text}</p>
    <a class="button primary" href=${href}>${back}</a>
  </section>`;
}
