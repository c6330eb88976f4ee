// A scripted stand-in for the browser's WebSocket, timers and clock, shared by the tests of
// net.js and app.js: `server(message, socket)` returns the replies to each frame sent.

/** A fake WebSocket class whose instances the test drives: `server` answers each frame. */
export function fakeWorld(server) {
  const world = { sockets: [], timers: [], clock: 0 };
  class FakeSocket {
    constructor(url) {
      this.url = url;
      this.sent = [];
      this.closed = false;
      world.sockets.push(this);
    }
    send(text) {
      const message = JSON.parse(text);
      this.sent.push(message);
      for (const reply of server(message, this) || []) this.deliver(reply);
    }
    deliver(message) {
      queueMicrotask(() => !this.closed && this.onmessage({ data: JSON.stringify(message) }));
    }
    open() {
      this.onopen();
    }
    close() {
      if (this.closed) return;
      this.closed = true;
      queueMicrotask(() => this.onclose({}));
    }
  }
  world.env = {
    WebSocket: FakeSocket,
    setTimeout: (fn, ms) => world.timers.push({ fn, at: world.clock + ms }) - 1,
    clearTimeout: (id) => id != null && world.timers[id] && (world.timers[id].fn = null),
    now: () => world.clock,
    random: () => 0.5,
  };
  /** Runs the due timers after `ms`. */
  world.advance = (ms) => {
    world.clock += ms;
    for (const timer of world.timers) {
      if (timer.fn && timer.at <= world.clock) {
        const fn = timer.fn;
        timer.fn = null;
        fn();
      }
    }
  };
  return world;
}
