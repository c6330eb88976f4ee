// sha256.js against the standard vectors and the server's commitment of a seed above 2^53.
import { eq, ok, test } from "./harness.js";
import { hexBytes, sha256, textBytes } from "../js/sha256.js";
import { checkReveal, fairnessOf, seedDecimal, verifyCommand } from "../js/fairness.js";
import { translate } from "../js/i18n.js";

test("sha256: FIPS 180-4 vectors", () => {
  eq(sha256(textBytes("")), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855", "empty");
  eq(sha256(textBytes("abc")), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad", "abc");
  eq(sha256(textBytes("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq")),
    "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1", "448 bits");
  eq(sha256(textBytes("a".repeat(1000))), "41edece42d63e8d9bf515a9ba6932e1c20cbc9f5a5d134645adb5db1b9737ea3", "1000 a (several blocks)");
});

// From Python: hashlib.sha256(bytes(range(32)) + (2**63 + 12345).to_bytes(8, "big")).
const SALT = "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f";
const COMMITMENT = "3a1ca7eb72babb8b045993637f839f2f5473d9d20ca780bbb5f02892d3d1e2ec";

test("sha256: salt || seed as 8 bytes big-endian, as the server commits", () => {
  const joined = hexBytes(SALT + "8000000000003039");
  eq(sha256(joined), COMMITMENT);
});

test("fairness: seed_hex is used, exact above 2^53, and a wrong commitment fails", () => {
  const reveal = { seed: 9223372036854788153, seed_hex: "8000000000003039", salt: SALT, commitment: COMMITMENT, dealer_position: 2 };
  ok(checkReveal(reveal, COMMITMENT).ok, "matches the commitment");
  ok(!checkReveal(reveal, "00".repeat(32)).ok, "another commitment fails");
  ok(!checkReveal({ ...reveal, seed_hex: "8000000000003038" }, COMMITMENT).ok, "another seed fails");
  eq(seedDecimal(reveal), "9223372036854788153", "decimal seed for the command");
  eq(verifyCommand(reveal, "custom"),
    `guobiao verify --seed 9223372036854788153 --salt ${SALT} --commitment ${COMMITMENT} --dealer-position 2 --rules custom`);
  ok(!verifyCommand(reveal, "mcr").includes("--rules"), "plain MCR needs no --rules");
});

test("fairness: a commitment never seen is 'unseen', told neutrally, never a mismatch", async () => {
  const reveal = { seed: 9223372036854788153, seed_hex: "8000000000003039", salt: SALT, commitment: COMMITMENT, dealer_position: 2 };
  eq(fairnessOf(reveal, COMMITMENT, "mcr").status, "ok");
  eq(fairnessOf(reveal, "00".repeat(32), "mcr").status, "bad", "another commitment seen before");
  eq(fairnessOf({ ...reveal, commitment: "00".repeat(32) }, COMMITMENT, "mcr").status, "bad", "a reveal that contradicts itself");
  const unseen = fairnessOf(reveal, undefined, "mcr");
  eq(unseen.status, "unseen");
  eq(unseen.command, verifyCommand(reveal, "mcr"), "the command to check it elsewhere");
  // Drawn: the neutral line, in both languages, with no cross and no accusation.
  const { render } = await import("../js/vendor/lit-html.js");
  const { fairnessView } = await import("../js/render.js");
  for (const lang of ["en", "zh"]) {
    const node = document.createElement("div");
    render(fairnessView((key, p) => translate(lang, key, p), unseen), node);
    const line = node.querySelector(".fairness");
    ok(line.classList.contains("unseen") && !line.classList.contains("bad"), `${lang}: unseen, not bad`);
    ok(!line.textContent.includes("✗"), `${lang}: no cross`);
    eq(line.querySelector("p").textContent.trim().slice(2), translate(lang, "table.fair.unseen"));
    const bad = document.createElement("div");
    render(fairnessView((key, p) => translate(lang, key, p), { status: "bad", command: "x" }), bad);
    ok(bad.textContent.includes("✗") && bad.querySelector(".fairness.bad"), `${lang}: a mismatch is still said`);
  }
});

test("hexBytes refuses what is not hex", () => {
  let threw = false;
  try {
    hexBytes("abc");
  } catch {
    threw = true;
  }
  ok(threw, "odd length");
});
