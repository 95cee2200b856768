/** Running a child process to its end and reading what it printed (CLIs, servers started for --help). */
import type { ChildProcess } from "node:child_process";

/** How a child process ended and everything it printed. */
export interface Finished {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Collects a child's stdout and stderr until it closes; rejects if it cannot be started. */
export function outputOf(child: ChildProcess): Promise<Finished> {
  let stdout = "";
  let stderr = "";
  child.stdout?.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk));
  child.stderr?.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
  return new Promise((resolve, reject) => {
    child.once("error", reject);
    child.once("close", (code) => resolve({ code, stdout, stderr }));
  });
}

/** The last line of stdout, parsed as JSON (the CLIs' `--json` output); `fallback` when stdout is empty. */
export function lastJsonLine<T>(output: Pick<Finished, "stdout">, fallback = ""): T {
  return JSON.parse(output.stdout.trim().split("\n").at(-1) || fallback) as T;
}

/** The lines a Warrant CLI printed about itself on stderr (`warrant: …`). */
export function warrantLines(stderr: string): string[] {
  return stderr.split("\n").filter((line) => line.startsWith("warrant:"));
}
