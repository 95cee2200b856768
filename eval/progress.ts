/** A one-line progress bar on stderr (redrawn in place on a terminal, a line per tenth otherwise). */
export interface Progress {
  update(done: number, total: number, label: string): void;
  finish(): void;
}

const WIDTH = 30;

/** The bar's text: `[#####-----] 12/40 label`. Pure, for tests. */
export function progressLine(done: number, total: number, label: string): string {
  const filled = total === 0 ? WIDTH : Math.round((done / total) * WIDTH);
  return `[${"#".repeat(filled)}${"-".repeat(WIDTH - filled)}] ${done}/${total} ${label}`;
}

export function stderrProgress(stream: NodeJS.WriteStream = process.stderr): Progress {
  let lastTenth = -1;
  return {
    update(done, total, label) {
      const line = progressLine(done, total, label);
      if (stream.isTTY) {
        stream.write(`\r${line.slice(0, (stream.columns ?? 100) - 1).padEnd((stream.columns ?? 100) - 1)}`);
        return;
      }
      const tenth = Math.floor((done / Math.max(total, 1)) * 10);
      if (tenth !== lastTenth || done === total) stream.write(`${line}\n`);
      lastTenth = tenth;
    },
    finish() {
      if (stream.isTTY) stream.write("\n");
    },
  };
}
