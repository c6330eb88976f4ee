// The fairness check of one hand: the server committed to the wall before play
// (`commit`: sha256(salt || seed as 8 bytes big-endian)) and reveals the seed and salt at the
// hand's end (`reveal`). The browser recomputes the hash itself (sha256.js) and shows the
// `guobiao verify` command that also rebuilds the wall.
import { hexBytes, sha256 } from "./sha256.js";

/** The seed's 8 bytes as hex: `reveal.seed_hex` when the server sends it (a JSON number above
 * 2^53 loses digits in JavaScript), else from `reveal.seed` (exact only below 2^53). */
export function seedHex(reveal) {
  if (typeof reveal.seed_hex === "string") return reveal.seed_hex;
  return BigInt(reveal.seed).toString(16).padStart(16, "0");
}

/** The seed as decimal digits for the command line, exact even above 2^53. */
export const seedDecimal = (reveal) => BigInt("0x" + seedHex(reveal)).toString(10);

/** `{ok, computed, committed}`: whether sha256(salt || seed) equals the commitment the server
 * sent before the hand (`committed`, from `commit`; else the one repeated in `reveal`). */
export function checkReveal(reveal, committed = reveal.commitment) {
  const salt = hexBytes(reveal.salt);
  const seed = hexBytes(seedHex(reveal));
  const joined = new Uint8Array(salt.length + seed.length);
  joined.set(salt);
  joined.set(seed, salt.length);
  const computed = sha256(joined);
  return { ok: computed === committed && reveal.commitment === committed, computed, committed };
}

/** The command that checks the hash and rebuilds the hand's wall. */
export function verifyCommand(reveal, preset) {
  const rules = preset && preset !== "mcr" ? ` --rules ${preset}` : "";
  return (
    `guobiao verify --seed ${seedDecimal(reveal)} --salt ${reveal.salt} ` +
    `--commitment ${reveal.commitment} --dealer-position ${reveal.dealer_position}${rules}`
  );
}

/** What the page says of a revealed hand: `status` "ok" when the revealed seed and salt hash to
 * the commitment this page was given before the reveal (`committed`), "bad" when they do
 * not, "unseen" when no commitment of that hand reached this page (nothing to hold the
 * reveal against: said neutrally, never as a mismatch); and the `command` that checks it. */
export function fairnessOf(reveal, committed, preset) {
  const command = verifyCommand(reveal, preset);
  if (committed === undefined) return { status: "unseen", command };
  return { status: checkReveal(reveal, committed).ok ? "ok" : "bad", command };
}
