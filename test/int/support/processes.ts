/**
 * Child processes of this test process, read from /proc (Linux): which MCP
 * servers are running, and whether a host left any behind.
 */
import { readdir, readFile } from "node:fs/promises";
import { setTimeout as sleep } from "node:timers/promises";

export interface ChildInfo {
  pid: number;
  command: string;
}

async function describe(pid: number): Promise<{ ppid: number; state: string; command: string } | undefined> {
  try {
    const stat = await readFile(`/proc/${pid}/stat`, "utf8");
    // The command name is in parentheses and may contain spaces: fields start after the last ")".
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    const command = (await readFile(`/proc/${pid}/cmdline`, "utf8")).split("\u0000").join(" ").trim();
    return { state: fields[0] ?? "", ppid: Number(fields[1]), command };
  } catch {
    return undefined;
  }
}

/** Live (non-zombie) children of this process. */
export async function childProcesses(): Promise<ChildInfo[]> {
  const children: ChildInfo[] = [];
  for (const entry of await readdir("/proc")) {
    if (!/^[0-9]+$/.test(entry)) continue;
    const info = await describe(Number(entry));
    if (info && info.ppid === process.pid && info.state !== "Z")
      children.push({ pid: Number(entry), command: info.command });
  }
  return children;
}

/** Children whose command line contains `fragment`. */
export async function childrenRunning(fragment: string): Promise<ChildInfo[]> {
  return (await childProcesses()).filter((child) => child.command.includes(fragment));
}

/** Polls `condition` every 50 ms until it holds; throws with `what` after `timeoutMs`. */
export async function waitFor(
  condition: () => boolean | Promise<boolean>,
  what: string,
  timeoutMs = 20_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(50);
  }
}

function processGroupAlive(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Polls `condition` every 250 ms until it holds (true) or `timeoutMs` passes (false). */
export async function until(condition: () => boolean | Promise<boolean>, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await condition()) return true;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  return false;
}

/** Ends a detached child's whole process group (npm, its scripts, the API, its MCP servers); SIGKILL if SIGTERM is not enough. */
export async function stopGroup(child: { pid?: number | undefined } | undefined): Promise<void> {
  const pgid = child?.pid;
  if (pgid === undefined || !processGroupAlive(pgid)) return;
  process.kill(-pgid, "SIGTERM");
  if (await until(() => !processGroupAlive(pgid), 15_000)) return;
  process.kill(-pgid, "SIGKILL");
  if (!(await until(() => !processGroupAlive(pgid), 5_000))) throw new Error(`process group ${pgid} survived SIGKILL`);
}
