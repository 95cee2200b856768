/**
 * Which process holds the server side of a loopback TCP connection (Linux
 * /proc): how a test finds the worker a request landed on when several
 * workers share one port.
 */
import fs from "node:fs/promises";

/** The inode of the IPv4 socket with local port `localPort` and remote port `remotePort`, if any. */
async function socketInode(localPort: number, remotePort: number): Promise<string | undefined> {
  const table = await fs.readFile("/proc/net/tcp", "utf8");
  for (const line of table.split("\n").slice(1)) {
    const fields = line.trim().split(/\s+/);
    const local = Number.parseInt(fields[1]?.split(":")[1] ?? "", 16);
    const remote = Number.parseInt(fields[2]?.split(":")[1] ?? "", 16);
    if (local === localPort && remote === remotePort) return fields[9];
  }
  return undefined;
}

/** Of `pids`, the one with an open descriptor on the server side of the connection from `clientPort` to `serverPort`. */
export async function connectionOwner(
  pids: readonly number[],
  serverPort: number,
  clientPort: number,
): Promise<number | undefined> {
  const inode = await socketInode(serverPort, clientPort);
  if (inode === undefined) return undefined;
  for (const pid of pids) {
    const descriptors = await fs.readdir(`/proc/${pid}/fd`).catch(() => [] as string[]);
    for (const descriptor of descriptors) {
      const target = await fs.readlink(`/proc/${pid}/fd/${descriptor}`).catch(() => "");
      if (target === `socket:[${inode}]`) return pid;
    }
  }
  return undefined;
}
