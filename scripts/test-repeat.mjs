#!/usr/bin/env node
// Runs one vitest file N times in a row, each run a fresh `vitest run <file>` process, and
// reports every run (pass/fail, duration) and a summary with the machine's cores and load.
// All N runs happen even after a failure. Node builtins only.
//
//   npm run test:repeat -- test/int/crash-points.test.ts --times 20 [--log-dir repeat-logs]
//
// A failed run's output is written to <log-dir>/<file>.run<k>.log (default: the OS temp
// directory) and its path printed. The exit code is 1 when any run failed.
import { spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");

function usage(message) {
  process.stderr.write(`${message}\nusage: npm run test:repeat -- <file> [--times N] [--log-dir DIR]\n`);
  process.exit(2);
}

const args = process.argv.slice(2);
let file;
let times = 20;
let logDir = path.join(os.tmpdir(), "warrant-test-repeat");
for (let i = 0; i < args.length; i++) {
  const arg = args[i];
  if (arg === "--times") {
    times = Number(args[++i]);
    if (!Number.isInteger(times) || times < 1) usage("--times needs a positive integer");
  } else if (arg === "--log-dir") {
    logDir = path.resolve(args[++i] ?? usage("--log-dir needs a directory"));
  } else if (arg.startsWith("--")) {
    usage(`unknown option ${arg}`);
  } else if (file === undefined) {
    file = arg;
  } else {
    usage(`one file at a time (got ${file} and ${arg})`);
  }
}
if (file === undefined) usage("name the test file");
if (!fs.existsSync(path.resolve(root, file))) usage(`no such file: ${file}`);

const vitest = path.join(root, "node_modules", "vitest", "vitest.mjs");
const cores = os.cpus().length;
const load = () =>
  os
    .loadavg()
    .map((value) => value.toFixed(2))
    .join(" ");
const seconds = (ms) => `${(ms / 1000).toFixed(1)} s`;

let current;
// Stopping the script stops the run in progress: vitest leads a process group of its own (its workers are in it).
for (const signal of ["SIGINT", "SIGTERM"]) {
  process.on(signal, () => {
    if (current?.exitCode === null) {
      try {
        process.kill(-current.pid, "SIGTERM");
      } catch {}
    }
    process.exit(130);
  });
}

function runOnce() {
  return new Promise((resolve) => {
    const started = Date.now();
    const child = spawn(process.execPath, [vitest, "run", file], {
      cwd: root,
      env: { ...process.env, FORCE_COLOR: "0" },
      stdio: ["ignore", "pipe", "pipe"],
      detached: true,
    });
    current = child;
    let output = "";
    child.stdout.setEncoding("utf8").on("data", (text) => (output += text));
    child.stderr.setEncoding("utf8").on("data", (text) => (output += text));
    child.on("close", (code, signal) =>
      resolve({ ok: code === 0, code: code ?? signal, output, ms: Date.now() - started }),
    );
  });
}

const startLoad = load();
const startedAll = Date.now();
const durations = [];
let passed = 0;
process.stdout.write(`${file}: ${times} runs, cores: ${cores}, load at start: ${startLoad}\n`);
for (let run = 1; run <= times; run++) {
  const result = await runOnce();
  durations.push(result.ms);
  let line = `run ${run}/${times}: ${result.ok ? "pass" : `FAIL (exit ${result.code})`} ${seconds(result.ms)}, load: ${load()}`;
  if (result.ok) {
    passed++;
  } else {
    fs.mkdirSync(logDir, { recursive: true });
    const log = path.join(logDir, `${path.basename(file)}.run${run}.log`);
    fs.writeFileSync(log, result.output);
    line += `, output: ${log}`;
  }
  process.stdout.write(`${line}\n`);
}
const total = Date.now() - startedAll;
const slowest = Math.max(...durations);
process.stdout.write(
  `${file}: ${passed}/${times} passed, cores: ${cores}, load: ${startLoad} at start, ${load()} at end; ` +
    `${seconds(total)} in all, slowest run ${seconds(slowest)}\n`,
);
process.exit(passed === times ? 0 : 1);
