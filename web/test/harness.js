// A very small test runner for the client's pure modules, run inside a real page:
// /test/ imports every suite (suites.js), runs them and leaves the results in
// window.testResults, which tests/web/test_units.py reads and reports.

const registered = [];

/** Register a test: `fn` may be async; it fails by throwing. */
export function test(name, fn) {
  registered.push({ name, fn });
}

/** Deep equality by structure (JSON form), with both values in the message. */
export function eq(actual, expected, what = "value") {
  const a = JSON.stringify(actual);
  const e = JSON.stringify(expected);
  if (a !== e) throw new Error(`${what}: expected ${e}, got ${a}`);
}

export function ok(condition, what = "condition") {
  if (!condition) throw new Error(`${what}: not true`);
}

/** Runs every registered test; one `{name, ok, error}` per test. */
export async function run() {
  const results = [];
  for (const { name, fn } of registered) {
    try {
      await fn();
      results.push({ name, ok: true, error: null });
    } catch (error) {
      results.push({ name, ok: false, error: String(error && error.stack ? error.stack : error) });
    }
  }
  return results;
}
