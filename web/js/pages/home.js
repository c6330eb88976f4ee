// The home page: "play now against three bots" in one click, and the account box
// (log in, register, play as a guest; or who you are and log out).
import { html, nothing } from "../vendor/lit-html.js";
import { levelPicker } from "../bots.js";
import { loadQueueSizes, queueBox } from "../queue.js";

// busy: which button is working ("play", "login", ...); failed: which one the error is about;
// coolUntil: a rate limit's end (Date.now() ms), the account buttons wait for it
const state = { busy: null, error: "", failed: null, coolUntil: 0 };

/** The error of the buttons in `whats`, where those buttons are. */
function errorFor(whats) {
  if (!state.error || !whats.includes(state.failed)) return nothing;
  return html`<p class="error" role="alert">${state.error}</p>`;
}

/** Hold the account buttons for the `seconds` the server asked (asking sooner only earns
 * another refusal), then clear the message that said so. */
function cool(app, seconds) {
  state.coolUntil = Date.now() + seconds * 1000;
  setTimeout(() => {
    if (Date.now() < state.coolUntil) return; // a later refusal set a later end
    state.coolUntil = 0;
    state.error = "";
    app.refresh();
  }, seconds * 1000 + 50);
}

async function busy(app, what, step) {
  state.busy = what;
  state.error = "";
  app.refresh();
  try {
    await step();
  } catch (error) {
    state.error = app.errorText(error);
    state.failed = what;
    if (error.code === "rate_limited" && error.retryAfter) cool(app, error.retryAfter);
  } finally {
    state.busy = null;
    app.refresh();
  }
}

function submitAccount(app, event, after) {
  event.preventDefault();
  const form = event.target.closest("form");
  const what = event.submitter && event.submitter.value === "register" ? "register" : "login";
  const username = form.elements.username.value.trim();
  const password = form.elements.password.value;
  busy(app, what, async () => {
    await (what === "register" ? app.register(username, password) : app.login(username, password));
    form.reset();
    await after();
  });
}

/** Log in, register or play as a guest; `after` runs once the session is there (the join page
 * uses the same form and then takes the seat). */
export function accountForm(app, after = async () => {}) {
  const working = state.busy !== null || state.coolUntil > Date.now();
  return html`<form class="account-form" @submit=${(e) => submitAccount(app, e, after)} aria-labelledby="account-title">
    <h2 id="account-title">${app.t("app.account.title")}</h2>
    <label class="field"><span>${app.t("app.account.username")}</span>
      <input name="username" autocomplete="username" required minlength="3" maxlength="20"
        pattern="[A-Za-z0-9_\\-]+" spellcheck="false" autocapitalize="off"></label>
    <label class="field"><span>${app.t("app.account.password")}</span>
      <input name="password" type="password" autocomplete="current-password" required maxlength="256"></label>
    <p class="hint">${app.t("app.account.hint")}</p>
    <div class="button-row">
      <button class="button primary" type="submit" value="login" ?disabled=${working}>${app.t("app.account.login")}</button>
      <button class="button" type="submit" value="register" ?disabled=${working}>${app.t("app.account.register")}</button>
    </div>
    <p class="or">${app.t("app.account.or")}</p>
    <button class="button ghost" type="button" ?disabled=${working}
      @click=${() => busy(app, "guest", async () => (await app.guest(), await after()))}>${app.t("app.account.guest")}</button>
    ${errorFor(["login", "register", "guest"])}
  </form>`;
}

function signedIn(app) {
  const { username, guest } = app.session;
  return html`<section class="card account" aria-labelledby="account-title">
    <h2 id="account-title">${app.t("app.account.title")}</h2>
    <p>${app.t(guest ? "app.account.as_guest" : "app.account.as", { name: username })}</p>
    ${guest ? html`<p class="hint">${app.t("app.account.guest_hint")}</p>` : nothing}
    <div class="button-row">
      <a class="button" href="#/player/${encodeURIComponent(username)}">${app.t("app.account.profile")}</a>
      <button class="button" type="button" ?disabled=${state.busy !== null}
        @click=${() => busy(app, "logout", () => app.logout())}>${app.t("app.account.logout")}</button>
    </div>
    ${errorFor(["logout"])}
  </section>`;
}

/** Forget the last visit's error and busy button (the join page shares them). */
export function resetAccountForm() {
  Object.assign(state, { busy: null, error: "", failed: null }); // a rate limit outlasts a visit
}

export const homePage = {
  enter(app) {
    resetAccountForm();
    loadQueueSizes(app);
  },
  leave() {},
  title(app) {
    return app.t("app.home.title");
  },
  view(app) {
    const playing = state.busy === "play";
    return html`<section class="hero">
        <h1>${app.t("app.home.title")}</h1>
        <p class="lede">${app.t("app.home.lede")}</p>
        ${levelPicker(app, "home-level")}
        <button class="button primary big" type="button" ?disabled=${state.busy !== null}
          @click=${() => busy(app, "play", () => app.playNow())}>
          ${playing ? app.t("app.home.setting_up") : app.t("app.home.play_now")}</button>
        ${errorFor(["play"])}
        <p><a class="text-link" href="#/lobby">${app.t("app.home.to_lobby")}</a></p>
      </section>
      ${queueBox(app)}
      <div class="home-grid">
        ${app.session ? signedIn(app) : html`<section class="card">${accountForm(app)}</section>`}
        <section class="card about" aria-labelledby="about-title">
          <h2 id="about-title">${app.t("app.about.title")}</h2>
          <p>${app.t("app.about.text")}</p>
          <ul>
            <li>${app.t("app.about.rules")}</li>
            <li>${app.t("app.about.fair")}</li>
            <li>${app.t("app.about.friends")}</li>
          </ul>
        </section>
      </div>`;
  },
};
