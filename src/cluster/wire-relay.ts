/**
 * The embedded database shared by several worker processes: a TCP relay in
 * the primary in front of PGlite's socket server, so every worker talks to
 * the one PGlite over the Postgres wire protocol as if it were a server.
 *
 * PGlite is ONE session behind every socket (src/db/database.ts):
 * an extended-protocol sequence from one connection can interleave with
 * another's, and prepared statements are shared. The relay makes that safe
 * for several connections:
 * - one exchange at a time: a connection's messages up to its `Sync` (or a
 *   simple `Query`) go upstream whole, and no other connection's go until
 *   PGlite answers `ReadyForQuery`; a connection inside a transaction keeps
 *   its turn until the transaction ends, so transactions never interleave;
 * - statement names are per connection: `Parse`, `Bind`, `Describe` and
 *   `Close` of a named statement get a `c<id>_` prefix, so two workers that
 *   prepare the same text under the same name (prepared.ts hashes the text)
 *   do not collide, and a connection that goes away has its statements
 *   deallocated (and an open transaction rolled back) before its turn ends.
 * Backend messages are passed through untouched (they never name a statement).
 */
import net from "node:net";

/** A frontend message: its type byte (0 for the untyped startup message) and its whole bytes. */
interface Message {
  type: number;
  bytes: Buffer;
}

const SYNC = 0x53; // 'S'
const QUERY = 0x51; // 'Q'
const TERMINATE = 0x58; // 'X'
const PARSE = 0x50; // 'P'
const BIND = 0x42; // 'B'
const DESCRIBE = 0x44; // 'D'
const CLOSE = 0x43; // 'C'
const READY = 0x5a; // 'Z'
/** `Describe` and `Close` name a statement ('S') or a portal ('P'). */
const STATEMENT = 0x53;
const IDLE = 0x49; // 'I'

/** One turn at a time across every connection of the relay. */
class Turns {
  #held = false;
  #waiting: (() => void)[] = [];
  async take(): Promise<void> {
    if (!this.#held) {
      this.#held = true;
      return;
    }
    await new Promise<void>((resolve) => this.#waiting.push(resolve));
  }
  give(): void {
    const next = this.#waiting.shift();
    if (next) next();
    else this.#held = false;
  }
}

/** Splits a frontend byte stream into messages; the first one is the untyped startup message. */
class FrontendReader {
  #buffer: Buffer = Buffer.alloc(0);
  #started = false;
  push(chunk: Buffer): Message[] {
    this.#buffer = this.#buffer.length === 0 ? chunk : Buffer.concat([this.#buffer, chunk]);
    const messages: Message[] = [];
    for (;;) {
      const typed = this.#started;
      const header = typed ? 5 : 4;
      if (this.#buffer.length < header) break;
      const length = this.#buffer.readInt32BE(typed ? 1 : 0) + (typed ? 1 : 0);
      if (this.#buffer.length < length) break;
      messages.push({ type: typed ? (this.#buffer[0] ?? 0) : 0, bytes: this.#buffer.subarray(0, length) });
      this.#buffer = this.#buffer.subarray(length);
      this.#started = true;
    }
    return messages;
  }
}

/** Reads a NUL-terminated string at `offset`; returns it and the offset after its NUL. */
function cString(bytes: Buffer, offset: number): [string, number] {
  const end = bytes.indexOf(0, offset);
  return [bytes.toString("utf8", offset, end), end + 1];
}

function message(type: number, body: Buffer): Buffer {
  const header = Buffer.alloc(5);
  header[0] = type;
  header.writeInt32BE(body.length + 4, 1);
  return Buffer.concat([header, body]);
}

const nul = (text: string) => Buffer.from(`${text}\0`, "utf8");

/** The message with statement names prefixed; `prepared` collects the names this connection parses. */
function renamed(input: Message, prefix: string, prepared: Set<string>): Buffer {
  const { type, bytes } = input;
  const rename = (name: string) => (name === "" ? "" : `${prefix}${name}`);
  if (type === PARSE) {
    const [name, rest] = cString(bytes, 5);
    if (name === "") return bytes;
    prepared.add(rename(name));
    return message(type, Buffer.concat([nul(rename(name)), bytes.subarray(rest)]));
  }
  if (type === BIND) {
    const [portal, afterPortal] = cString(bytes, 5);
    const [name, rest] = cString(bytes, afterPortal);
    if (name === "") return bytes;
    return message(type, Buffer.concat([nul(portal), nul(rename(name)), bytes.subarray(rest)]));
  }
  if ((type === DESCRIBE || type === CLOSE) && bytes[5] === STATEMENT) {
    const [name, rest] = cString(bytes, 6);
    if (name === "") return bytes;
    if (type === CLOSE) prepared.delete(rename(name));
    return message(type, Buffer.concat([Buffer.from([STATEMENT]), nul(rename(name)), bytes.subarray(rest)]));
  }
  return bytes;
}

/** Watches a backend byte stream for `ReadyForQuery` and reports its transaction status. */
class BackendWatcher {
  #buffer: Buffer = Buffer.alloc(0);
  constructor(private readonly onReady: (status: number) => void) {}
  push(chunk: Buffer): void {
    this.#buffer = this.#buffer.length === 0 ? chunk : Buffer.concat([this.#buffer, chunk]);
    while (this.#buffer.length >= 5) {
      const length = this.#buffer.readInt32BE(1) + 1;
      if (this.#buffer.length < length) break;
      if (this.#buffer[0] === READY) this.onReady(this.#buffer[5] ?? IDLE);
      this.#buffer = this.#buffer.subarray(length);
    }
  }
}

export interface WireRelay {
  /** `127.0.0.1:<port>` */
  address: string;
  close(): Promise<void>;
}

/** Relays connections on a loopback port to `upstream` (PGlite's socket server), one exchange at a time. */
export async function startWireRelay(upstream: { host: string; port: number }): Promise<WireRelay> {
  const turns = new Turns();
  const sockets = new Set<net.Socket>();
  let nextId = 1;
  const server = net.createServer((client) => {
    const id = nextId;
    nextId += 1;
    relayConnection(client, net.connect(upstream), `c${id}_`, turns, sockets);
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  const { port } = server.address() as net.AddressInfo;
  return {
    address: `127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

function relayConnection(
  client: net.Socket,
  server: net.Socket,
  prefix: string,
  turns: Turns,
  sockets: Set<net.Socket>,
): void {
  sockets.add(client);
  sockets.add(server);
  const reader = new FrontendReader();
  const prepared = new Set<string>();
  const pending: Message[] = [];
  let holding = false;
  let inFlight = false;
  let clientGone = false;
  let ended = false;
  let lastStatus = IDLE;
  let afterReady: ((status: number) => void) | undefined;
  const watcher = new BackendWatcher((status) => afterReady?.(status));

  const end = () => {
    if (ended) return;
    ended = true;
    sockets.delete(client);
    sockets.delete(server);
    client.destroy();
    server.destroy();
    if (holding) {
      holding = false;
      turns.give();
    }
  };
  /** Sends `bytes` upstream and resolves with the transaction status of the `ReadyForQuery` that answers it. */
  const exchange = (bytes: Buffer) =>
    new Promise<number>((resolve) => {
      afterReady = (status) => {
        afterReady = undefined;
        resolve(status);
      };
      server.write(bytes);
    });
  /** A gone client's leftovers: its open transaction and its statements, in its last turn. */
  const cleanUp = async (status: number) => {
    if (status !== IDLE) await exchange(message(QUERY, nul("rollback")));
    if (prepared.size > 0)
      await exchange(message(QUERY, nul([...prepared].map((name) => `deallocate "${name}"`).join("; "))));
  };
  const pump = async () => {
    if (inFlight || ended) return;
    const batchEnd = pending.findIndex((item) => item.type === SYNC || item.type === QUERY || item.type === 0);
    const terminating = pending.some((item) => item.type === TERMINATE);
    if (batchEnd === -1 && !terminating && !clientGone) return;
    inFlight = true;
    try {
      if (!holding) {
        await turns.take();
        holding = true;
      }
      if (batchEnd === -1) {
        // The client is leaving: whatever it left unsent is dropped, its session state is cleaned.
        pending.length = 0;
        await cleanUp(lastStatus);
        end();
        return;
      }
      const batch = pending.splice(0, batchEnd + 1);
      const status = await exchange(Buffer.concat(batch.map((item) => renamed(item, prefix, prepared))));
      lastStatus = status;
      if (status === IDLE && !clientGone) {
        holding = false;
        turns.give();
      }
    } finally {
      inFlight = false;
    }
    void pump();
  };

  server.on("data", (chunk: Buffer) => {
    watcher.push(chunk);
    if (!clientGone) client.write(chunk);
  });
  client.on("data", (chunk: Buffer) => {
    pending.push(...reader.push(chunk));
    void pump();
  });
  const clientLeft = () => {
    if (clientGone) return;
    clientGone = true;
    void pump();
  };
  client.on("close", clientLeft);
  client.on("error", clientLeft);
  server.on("error", end);
  server.on("close", end);
}
