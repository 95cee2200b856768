/**
 * A small TCP proxy between a server (or a pool) and Postgres, for injecting
 * database faults in tests without restarting the shared Postgres server:
 * - `cut()` destroys every open connection (what a failover or a pooler
 *   restart does to a pool);
 * - `refuse(ms)` also resets every new connection for `ms` (an outage);
 * - `latency(ms)` delays every chunk, both ways;
 * - `drop("up" | "down")` silently discards what flows one way (a half-dead
 *   link: the sender sees no error, the answer never comes); `drop(undefined)` ends it;
 * - `cutOn(pattern, times)` cuts the connection that sends a chunk matching
 *   `pattern` (read as latin1), before the chunk reaches Postgres, the next
 *   `times` times: a cut that falls exactly under one statement.
 * `urlFor(databaseUrl)` rewrites a URL to go through the proxy.
 */
import net from "node:net";

export type Direction = "up" | "down";

export interface FaultProxy {
  port: number;
  urlFor(databaseUrl: string): string;
  cut(): void;
  refuse(ms: number): void;
  latency(ms: number): void;
  drop(direction: Direction | undefined): void;
  cutOn(pattern: RegExp, times: number): void;
  /** How many `cutOn` cuts fell so far. */
  targetedCuts(): number;
  /** Connections open now. */
  open(): number;
  /** Connections accepted so far (refused ones included). */
  accepted(): number;
  close(): Promise<void>;
}

export async function startFaultProxy(target: { host: string; port: number }): Promise<FaultProxy> {
  const pairs = new Set<{ client: net.Socket; upstream: net.Socket }>();
  let refuseUntil = 0;
  let delayMs = 0;
  let dropped: Direction | undefined;
  let acceptedCount = 0;
  let aimed: { pattern: RegExp; left: number } | undefined;
  let targeted = 0;

  /** Forwards `from` → `to` ("up": client to Postgres), applying the current latency and drop. */
  const forward = (from: net.Socket, to: net.Socket, direction: Direction) => {
    let chain = Promise.resolve();
    from.on("data", (chunk: Buffer) => {
      if (dropped === direction) return;
      if (direction === "up" && aimed && aimed.left > 0 && aimed.pattern.test(chunk.toString("latin1"))) {
        aimed.left -= 1;
        targeted += 1;
        from.resetAndDestroy();
        to.destroy();
        return;
      }
      const wait = delayMs;
      // Chunks keep their order whatever the latency.
      chain = chain.then(async () => {
        if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
        if (!to.destroyed) to.write(chunk);
      });
    });
  };

  const server = net.createServer((client) => {
    acceptedCount += 1;
    client.on("error", () => undefined);
    if (Date.now() < refuseUntil) {
      client.resetAndDestroy();
      return;
    }
    const upstream = net.connect(target.port, target.host);
    upstream.on("error", () => undefined);
    const pair = { client, upstream };
    pairs.add(pair);
    const end = () => {
      pairs.delete(pair);
      client.destroy();
      upstream.destroy();
    };
    for (const socket of [client, upstream]) {
      socket.on("error", end);
      socket.on("close", end);
    }
    forward(client, upstream, "up");
    forward(upstream, client, "down");
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as net.AddressInfo).port;

  const cut = () => {
    for (const { client, upstream } of pairs) {
      client.resetAndDestroy();
      upstream.destroy();
    }
    pairs.clear();
  };
  return {
    port,
    urlFor(databaseUrl) {
      const url = new URL(databaseUrl);
      url.hostname = "127.0.0.1";
      url.port = String(port);
      return url.toString();
    },
    cut,
    refuse(ms) {
      refuseUntil = Date.now() + ms;
      cut();
    },
    latency(ms) {
      delayMs = ms;
    },
    drop(direction) {
      dropped = direction;
    },
    cutOn(pattern, times) {
      aimed = { pattern, left: times };
    },
    targetedCuts: () => targeted,
    open: () => pairs.size,
    accepted: () => acceptedCount,
    async close() {
      cut();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
