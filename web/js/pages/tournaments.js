// The tournaments: `#/tournaments`, the public ones of GET /api/tournaments (name, rules,
// state, session n of N, players, the duplicate badge) each linking to its page, and the
// form that creates one. The form is shown to every registered account: who may direct is
// the server's to say, and a refusal (`not_director`) is shown in words.
import { html, nothing } from "../vendor/lit-html.js";
import { registered } from "../queue.js";
import { PRESETS, rulesName } from "./lobby.js";
import { METHODS, getJson, refusalText } from "./tournament.js";

const LIMITS = {
  sessions: { min: 1, max: 32, value: 4 },
  hands: { min: 1, max: 16, value: 16 },
  time_cap_minutes: { min: 0, max: 600, value: 0 },
  spectator_delay_seconds: { min: 0, max: 3600, value: 0 },
};

let s = null; // the page's state while it is shown

async function load(here) {
  try {
    here.list = (await getJson("/api/tournaments")).tournaments;
    if (s === here) here.error = null;
  } catch (error) {
    if (s === here) here.error = refusalText(here.app, error); // (in words: never the server's English)
  }
  if (s === here) here.app.refresh();
}

/** The `tournament_create` payload of the form's fields (an empty turn time or the default
 * seating are left to the server). */
export function createPayload(fields) {
  const payload = {
    name: fields.name.trim(),
    rules: fields.rules,
    sessions: Number(fields.sessions),
    hands: Number(fields.hands),
    time_cap_minutes: Number(fields.time_cap_minutes),
    spectator_delay_seconds: Number(fields.spectator_delay_seconds),
    registration: fields.registration,
    fill: fields.fill,
    check_in: Boolean(fields.check_in),
    duplicate: Boolean(fields.duplicate),
    public: Boolean(fields.public),
    aids: Boolean(fields.aids),
  };
  if (String(fields.turn_seconds).trim()) payload.turn_seconds = Number(fields.turn_seconds);
  if (fields.seating) payload.seating = fields.seating;
  return payload;
}

async function create(app, event) {
  event.preventDefault();
  const here = s;
  const f = event.target.elements;
  const fields = Object.fromEntries(
    [...f].filter((el) => el.name).map((el) => [el.name, el.type === "checkbox" ? el.checked : el.value]),
  );
  here.busy = true;
  here.formError = "";
  app.refresh();
  try {
    const made = await app.net.request("tournament_create", createPayload(fields));
    if (s === here) app.navigate(`#/tournament/${made.id}`);
  } catch (error) {
    if (s === here) here.formError = refusalText(app, error, "tournament_create");
  } finally {
    if (s === here) {
      here.busy = false;
      app.refresh();
    }
  }
}

function numberField(app, name, label) {
  const limit = LIMITS[name];
  return html`<label class="field"><span>${app.t(label)}</span>
    <input name=${name} type="number" inputmode="numeric" min=${limit.min} max=${limit.max} value=${limit.value} required></label>`;
}

function createForm(app) {
  const t = app.t;
  if (!registered(app)) {
    return html`<section class="card" aria-labelledby="create-tournament-title">
      <h2 id="create-tournament-title">${t("app.tournaments.create")}</h2>
      <p class="hint">${t("app.tournaments.create_sign_in")} <a href="#/">${t("app.lobby.to_login")}</a></p>
    </section>`;
  }
  return html`<form class="card create-tournament" @submit=${(e) => create(app, e)} aria-labelledby="create-tournament-title">
    <h2 id="create-tournament-title">${t("app.tournaments.create")}</h2>
    <p class="hint">${t("app.tournaments.create_hint")}</p>
    <label class="field"><span>${t("app.tournaments.name")}</span>
      <input name="name" type="text" minlength="1" maxlength="80" required autocomplete="off"></label>
    <label class="field"><span>${t("app.create.rules")}</span>
      <select name="rules">${PRESETS.map((p) => html`<option value=${p}>${t(`app.rules.${p}`)}</option>`)}</select></label>
    <div class="form-pair">
      ${numberField(app, "sessions", "app.tournaments.sessions")}
      ${numberField(app, "hands", "app.tournaments.hands")}
    </div>
    <div class="form-pair">
      ${numberField(app, "time_cap_minutes", "app.tournaments.time_cap")}
      <label class="field"><span>${t("app.tournaments.turn")}</span>
        <input name="turn_seconds" type="number" inputmode="numeric" min="1" max="600" placeholder=${t("app.tournaments.server_default")}></label>
    </div>
    <label class="field"><span>${t("app.tournaments.seating")}</span>
      <select name="seating"><option value="">${t("app.tournaments.seating_default")}</option>
        ${METHODS.map((m) => html`<option value=${m}>${t(`app.tournament.method_${m}`)}</option>`)}</select></label>
    <label class="field"><span>${t("app.tournaments.registration")}</span>
      <select name="registration"><option value="open">${t("app.tournaments.registration_open")}</option>
        <option value="director">${t("app.tournaments.registration_director")}</option></select></label>
    <label class="field"><span>${t("app.tournaments.fill")}</span>
      <select name="fill"><option value="byes">${t("app.tournament.fill_byes")}</option>
        <option value="substitutes">${t("app.tournament.fill_substitutes")}</option></select></label>
    ${numberField(app, "spectator_delay_seconds", "app.tournaments.delay")}
    <label class="check"><input name="check_in" type="checkbox" checked> <span>${t("app.tournaments.check_in")}</span></label>
    <label class="check"><input name="duplicate" type="checkbox"> <span>${t("app.tournaments.duplicate_box")}</span></label>
    <label class="check"><input name="public" type="checkbox" checked> <span>${t("app.tournaments.public")}</span></label>
    <label class="check"><input name="aids" type="checkbox" checked> <span>${t("app.create.aids")}</span></label>
    ${s.formError ? html`<p class="error" role="alert">${s.formError}</p>` : nothing}
    <button class="button primary" type="submit" ?disabled=${s.busy}>${t("app.tournaments.create_submit")}</button>
  </form>`;
}

function list(app) {
  const t = app.t;
  if (s.list === null) return s.error ? nothing : html`<p class="hint">${t("app.lobby.loading")}</p>`;
  if (s.list.length === 0) return html`<p class="empty">${t("app.tournaments.empty")}</p>`;
  return html`<ul class="tournament-list">${s.list.map((x) => html`<li class="table-card tournament-card">
    <h3><a href="#/tournament/${x.id}">${x.name}</a></h3>
    <p class="facts">
      <span class="badge">${t(`app.tournaments.state_${x.state}`)}</span>
      ${x.duplicate ? html`<span class="badge duplicate">${t("app.tournaments.duplicate")}</span>` : nothing}
      <span>${rulesName(app, x.rules)}</span>
      <span>${x.session > 0 ? t("app.tournaments.session_of", { n: x.session, of: x.sessions }) : (x.sessions === 1 ? t("app.tournaments.one_session_planned") : t("app.tournaments.sessions_planned", { n: x.sessions }))}</span>
      <span>${t("app.tournaments.players", { n: x.players })}</span>
      ${x.state === "registering" && x.registration_open ? html`<span>${t("app.tournament.registration_open")}</span>` : nothing}
    </p>
  </li>`)}</ul>`;
}

export const tournamentsPage = {
  enter(app) {
    s = { app, list: null, error: null, busy: false, formError: "" };
    load(s);
  },
  leave() {
    s = null;
  },
  title(app) {
    return app.t("app.tournaments.title");
  },
  view(app) {
    if (!s) return nothing;
    return html`<h1>${app.t("app.tournaments.title")}</h1>
      ${s.error ? html`<p class="error" role="alert">${s.error}</p>` : nothing}
      <div class="lobby-grid">
        <section aria-labelledby="tournaments-title">
          <h2 id="tournaments-title" class="visually-hidden">${app.t("app.tournaments.title")}</h2>
          ${list(app)}
        </section>
        ${createForm(app)}
      </div>`;
  },
};
