// Runs the suites and publishes the results (see harness.js).
import { run } from "./harness.js";
import "./suites.js";

const results = await run();
window.testResults = results;
const failed = results.filter((r) => !r.ok);
document.getElementById("summary").textContent =
  `${results.length - failed.length} of ${results.length} passed`;
for (const r of failed) {
  const item = document.createElement("pre");
  item.textContent = `${r.name}\n${r.error}`;
  document.body.append(item);
}
document.body.dataset.done = "true";
