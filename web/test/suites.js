// Every suite of the client's pure modules (each file registers its tests on import).
import "./harness.test.js";
import "./tiles.test.js";
import "./follow.test.js";
import "./sha256.test.js";
import "./table.test.js";
import "./app.test.js";
import "./net.test.js";
import "./lobby.test.js";
import "./appcontext.test.js";
import "./ladder.test.js";
import "./tournament.test.js";
import "./bots.test.js";
