// "Your turn" beep: WebAudio, generated (no sound files). Off unless the player turns it on.
let context = null;

/** A short soft beep; silently nothing where WebAudio is missing or not yet allowed. */
export function beep() {
  const Context = window.AudioContext || window.webkitAudioContext;
  if (!Context) return;
  context = context || new Context();
  const oscillator = context.createOscillator();
  const gain = context.createGain();
  oscillator.frequency.value = 880;
  gain.gain.setValueAtTime(0.08, context.currentTime);
  gain.gain.exponentialRampToValueAtTime(0.0001, context.currentTime + 0.18);
  oscillator.connect(gain).connect(context.destination);
  oscillator.start();
  oscillator.stop(context.currentTime + 0.2);
}
