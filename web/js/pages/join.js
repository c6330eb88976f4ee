// `#/join/:table/:code`, the invite link of a private table: sign in if need be, take a
// seat, go to the table. When the seat cannot be had, say why and offer to watch instead.
import { matchAddress } from "../app.js";
import { html, nothing } from "../vendor/lit-html.js";
import { accountForm, resetAccountForm } from "./home.js";

const state = { table: null, code: null, joining: false, error: null };

async function join(app) {
  if (state.joining) return;
  state.joining = true;
  state.error = null;
  app.refresh();
  try {
    await app.join(state.table, { code: state.code });
    location.replace(`#/table/${encodeURIComponent(state.table)}`); // Back must not join again
  } catch (error) {
    state.error = error;
  } finally {
    state.joining = false;
    app.refresh();
  }
}

function problem(app) {
  const error = state.error;
  const id = state.table;
  const elsewhere = error.code === "already_seated" && app.myTable;
  return html`<p class="error" role="alert">${app.errorText(error)}</p>
    <div class="button-row">
      ${elsewhere
        ? html`<a class="button primary" href="#/table/${app.myTable.table}">${app.t("app.nav.my_table", { table: app.myTable.table })}</a>`
        : nothing}
      ${error.code === "table_finished" && error.match != null
        ? html`<a class="button primary" href=${matchAddress(error.match, { invite: state.code })}>${app.t("table.see_match")}</a>`
        : error.code === "wrong_invite" || error.code === "no_such_table" || error.code === "table_finished"
          ? nothing
          : html`<a class="button" href="#/watch/${encodeURIComponent(id)}">${app.t("app.join.watch")}</a>`}
      <a class="button" href="#/lobby">${app.t("app.join.lobby")}</a>
    </div>`;
}

export const joinPage = {
  enter(app, params) {
    Object.assign(state, { table: params.table, code: params.code, joining: false, error: null });
    resetAccountForm();
    app.rememberInvite(params.table, params.code); // for watching, and the table's own invite box
    if (app.session) join(app); // a request waits for the connection and the resumed session
  },
  leave() {},
  title(app) {
    return app.t("app.join.title", { table: state.table });
  },
  view(app) {
    return html`<section class="card narrow">
      <h1>${app.t("app.join.title", { table: state.table })}</h1>
      ${!app.session
        ? html`<p>${app.t("app.join.sign_in")}</p>${accountForm(app, () => join(app))}`
        : state.error
          ? problem(app)
          : html`<p aria-busy="true">${app.t("app.join.joining")}</p>`}
    </section>`;
  },
};
