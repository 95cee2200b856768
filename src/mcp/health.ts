/**
 * Server health (DESIGN §6, protocol class): a supervisor per MCP server that
 * knows whether the server is usable, marks it unhealthy when its transport
 * reports a crash or a call finds it gone, and reconnects it in the background
 * with exponential backoff and jitter until it is healthy again or closed.
 * Transport-agnostic: the actual connecting is a callback.
 */

/** Backoff for reconnect attempts. */
export interface ReconnectPolicy {
  /** Delay before the first attempt (before jitter). */
  base_ms: number;
  /** Upper bound of any delay. */
  max_ms: number;
}

/**
 * Delay before reconnect attempt `attempt` (1-based): `base · 2^(attempt-1)`
 * capped at `max`, with "equal jitter" (half fixed, half random), so servers
 * that went down together do not retry in lockstep, and no retry is immediate.
 */
export function reconnectDelayMs(attempt: number, policy: ReconnectPolicy, random: () => number = Math.random): number {
  const exponent = Math.min(Math.max(attempt, 1) - 1, 30);
  const ceiling = Math.min(policy.max_ms, policy.base_ms * 2 ** exponent);
  return Math.round(ceiling / 2 + (random() * ceiling) / 2);
}

/** What a supervisor reports (for logs and tests). */
export type HealthEvent =
  | { server: string; type: "healthy"; attempt: number }
  | { server: string; type: "unhealthy"; reason: string }
  | { server: string; type: "reconnect_scheduled"; attempt: number; delay_ms: number }
  | { server: string; type: "reconnect_failed"; attempt: number; reason: string };

export interface Supervisor {
  /** True only between a successful (re)connect and the next failure. */
  readonly healthy: boolean;
  /** The first connect. Rejects when it fails; the caller decides whether that stops start-up. */
  start(): Promise<void>;
  /** The server is gone: unhealthy now, reconnect in the background. Idempotent while reconnecting. */
  markDown(reason: string): void;
  /** Something looks wrong (e.g. a stream error): probe, and mark down only if the probe fails. */
  suspect(reason: string): void;
  /** Stops timers and waits for a connect or probe in flight; the server stays unusable. */
  close(): Promise<void>;
}

export interface SuperviseOptions {
  server: string;
  policy: ReconnectPolicy;
  /** Connects (or reconnects) and refreshes what the host knows of the server. */
  connect: () => Promise<void>;
  /** A cheap liveness check on the current connection. */
  probe: () => Promise<void>;
  onEvent: (event: HealthEvent) => void;
  random?: () => number;
}

type Phase = "starting" | "healthy" | "unhealthy" | "closed";

/** One line, no stack: what a health event says about an error. */
export function reasonOf(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  return (message.split("\n", 1)[0] ?? "").slice(0, 200) || "unknown error";
}

export function supervise(options: SuperviseOptions): Supervisor {
  const { server, policy, onEvent } = options;
  let phase: Phase = "starting";
  let timer: NodeJS.Timeout | undefined;
  /** The connect or probe currently running, so close() can wait for it. */
  let inFlight: Promise<void> | undefined;
  let probing = false;

  const track = (work: Promise<void>): void => {
    const settled = work.catch(() => undefined);
    inFlight = settled;
    void settled.finally(() => {
      if (inFlight === settled) inFlight = undefined;
    });
  };

  const schedule = (attempt: number): void => {
    if (phase === "closed") return;
    const delay = reconnectDelayMs(attempt, policy, options.random);
    onEvent({ server, type: "reconnect_scheduled", attempt, delay_ms: delay });
    timer = setTimeout(() => {
      timer = undefined;
      track(
        options.connect().then(
          () => {
            if (phase === "closed") return;
            phase = "healthy";
            onEvent({ server, type: "healthy", attempt });
          },
          (error: unknown) => {
            if (phase === "closed") return;
            onEvent({ server, type: "reconnect_failed", attempt, reason: reasonOf(error) });
            schedule(attempt + 1);
          },
        ),
      );
    }, delay);
    // A reconnect loop never keeps the process alive on its own.
    timer.unref();
  };

  const markDown = (reason: string): void => {
    if (phase === "closed" || phase === "unhealthy") return;
    phase = "unhealthy";
    onEvent({ server, type: "unhealthy", reason });
    schedule(1);
  };

  return {
    get healthy() {
      return phase === "healthy";
    },
    async start() {
      await options.connect();
      if (phase === "starting") {
        phase = "healthy";
        onEvent({ server, type: "healthy", attempt: 0 });
      }
    },
    markDown,
    suspect(reason) {
      if (phase !== "healthy" || probing) return;
      probing = true;
      track(
        options.probe().then(
          () => {
            probing = false;
          },
          (error: unknown) => {
            probing = false;
            markDown(`${reason}; probe failed: ${reasonOf(error)}`);
          },
        ),
      );
    },
    async close() {
      phase = "closed";
      if (timer) clearTimeout(timer);
      timer = undefined;
      // A connect that was running may have opened a session: the caller shuts it down after this.
      while (inFlight) await inFlight;
    },
  };
}

/** The default health log: one line per change, never prefixed like a CLI error. */
export function logHealth(event: HealthEvent, log: (line: string) => void): void {
  const line =
    event.type === "unhealthy"
      ? `server ${event.server} unavailable: ${event.reason}`
      : event.type === "reconnect_failed"
        ? `server ${event.server} reconnect attempt ${event.attempt} failed: ${event.reason}`
        : event.type === "healthy" && event.attempt > 0
          ? `server ${event.server} reconnected after ${event.attempt} attempt(s)`
          : undefined;
  if (line) log(`[warrant mcp] ${line}\n`);
}
