// The runner itself: a failing assertion must fail.
import { eq, ok, test } from "./harness.js";

test("eq compares structure", () => {
  eq({ a: [1, 2] }, { a: [1, 2] });
  let threw = false;
  try {
    eq([1], [2]);
  } catch {
    threw = true;
  }
  ok(threw, "eq([1], [2]) throws");
});
