/**
 * The one test sandbox: whatever a test sets up (a temporary directory, a
 * database or schema, a started server, a browser, an environment variable)
 * is registered here as it is made, and torn down by one hook in the reverse
 * order, each step run even when an earlier one throws (the first error is
 * rethrown after all have run). Tests say what they start, not how to stop it.
 *
 *   const sandbox = useSandbox();            // afterAll of this describe (or file)
 *   beforeAll(async () => {
 *     fake = sandbox.add(await startFakeOpenAI());
 *     server = sandbox.add(await createServerSandbox());
 *   });
 *
 * `useSandbox("each")` tears down after every test instead.
 */
import { mkdtemp, rm } from "node:fs/promises";
import type { Server } from "node:http";
import os from "node:os";
import path from "node:path";
import { afterAll, afterEach } from "vitest";

/**
 * Something the sandbox knows how to stop: `cleanup()` (server sandboxes, backends), `drop()` (test databases),
 * `remove()` (temporary directories) or `close()` (servers, browsers, databases, fakes).
 */
export type Disposable = { close(): unknown } | { cleanup(): unknown } | { drop(): unknown } | { remove(): unknown };

export interface Sandbox {
  /** Registers `resource` to be closed (or cleaned up) at teardown, before anything registered earlier; returns it. */
  add<T extends Disposable>(resource: T): T;
  /** Registers a teardown step of any other shape. */
  defer(step: () => unknown): void;
  /** A fresh directory under the system's temporary directory, removed at teardown. */
  tempDir(prefix: string): Promise<string>;
  /** Sets (or, with undefined, unsets) `process.env[name]` until teardown, which puts back what was there. */
  setEnv(name: string, value: string | undefined): void;
  /** Stops an http.Server (dropping its open connections) at teardown. */
  addServer<T extends Server>(server: T): T;
  /** Runs every registered step, last registered first; then the sandbox is empty and may be used again. */
  cleanup(): Promise<void>;
}

export function createSandbox(): Sandbox {
  const steps: (() => unknown)[] = [];
  const sandbox: Sandbox = {
    add(resource) {
      steps.push(() => {
        if ("cleanup" in resource) return resource.cleanup();
        if ("drop" in resource) return resource.drop();
        if ("remove" in resource) return resource.remove();
        return resource.close();
      });
      return resource;
    },
    defer(step) {
      steps.push(step);
    },
    async tempDir(prefix) {
      const directory = await mkdtemp(path.join(os.tmpdir(), prefix));
      steps.push(() => rm(directory, { recursive: true, force: true }));
      return directory;
    },
    setEnv(name, value) {
      const before = Object.hasOwn(process.env, name) ? process.env[name] : undefined;
      steps.push(() => {
        if (before === undefined) delete process.env[name];
        else process.env[name] = before;
      });
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    },
    addServer(server) {
      steps.push(() => {
        server.closeAllConnections();
        return new Promise<void>((resolve) => server.close(() => resolve()));
      });
      return server;
    },
    async cleanup() {
      const errors: unknown[] = [];
      for (let step = steps.pop(); step !== undefined; step = steps.pop()) {
        try {
          await step();
        } catch (error) {
          errors.push(error);
        }
      }
      if (errors.length > 0) throw errors[0];
    },
  };
  return sandbox;
}

/**
 * A sandbox torn down by `afterAll` (the default) or `afterEach` of the
 * enclosing describe, or of the file when called at the top level.
 */
export function useSandbox(scope: "all" | "each" = "all", timeoutMs = 60_000): Sandbox {
  const sandbox = createSandbox();
  (scope === "each" ? afterEach : afterAll)(() => sandbox.cleanup(), timeoutMs);
  return sandbox;
}
