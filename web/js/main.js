// The client's entry point (placeholder until the app lands).
import { html, render } from "./vendor/lit-html.js";

render(html`<h1>guobiao</h1>`, document.getElementById("app"));
