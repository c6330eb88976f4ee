// The table's sounds, synthesised with WebAudio (no sound files): the "your turn" beep, and
// the discard's click and the claim's call. Each is off unless the player turns it on.
let context = null;

/** One tone: `frequency` Hz from `at` seconds from now for `seconds`, fading out, at
 * `volume`; `type` the oscillator's wave. */
function tone(frequency, { at = 0, seconds = 0.18, volume = 0.08, type = "sine" } = {}) {
  const start = context.currentTime + at;
  const oscillator = context.createOscillator();
  const gain = context.createGain();
  oscillator.type = type;
  oscillator.frequency.value = frequency;
  gain.gain.setValueAtTime(volume, start);
  gain.gain.exponentialRampToValueAtTime(0.0001, start + seconds);
  oscillator.connect(gain).connect(context.destination);
  oscillator.start(start);
  oscillator.stop(start + seconds + 0.02);
}

/** The audio context, made on first use; null where WebAudio is missing. */
function ready() {
  const Context = window.AudioContext || window.webkitAudioContext;
  if (!Context) return false;
  context = context || new Context();
  return true;
}

/** A short soft beep; silently nothing where WebAudio is missing or not yet allowed. */
export function beep() {
  if (ready()) tone(880);
}

/** A tile laid on the table: a short low knock. */
export function discardSound() {
  if (ready()) tone(180, { seconds: 0.07, volume: 0.12, type: "triangle" });
}

/** A claim (chow, pung, kong, win): two rising notes, the win's higher. */
export function claimSound(call) {
  if (!ready()) return;
  const base = call === "win" ? 660 : 440;
  tone(base, { seconds: 0.12, volume: 0.07, type: "square" });
  tone(base * 1.5, { at: 0.1, seconds: 0.2, volume: 0.07, type: "square" });
}
