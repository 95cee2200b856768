/**
 * `npm run eval [-- --repeats N] [--tasks id,…] [--configurations id,…] [--out DIR]`:
 * runs the task suite on every configuration and writes `report.md`,
 * `runs.json` and the two SVG charts to DIR, by default a fresh scratch
 * directory it prints (the tracked sample in `eval/results/` is rewritten
 * only with `--out eval/results`).
 * Exit codes: 0 written (whatever the scores), 1 a configuration or
 * infrastructure error, 2 a usage error.
 */
import { mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { parseArgs } from "node:util";
import { loadSettings } from "../src/env.js";
import { loadConfig } from "../src/policy/config.js";
import { summarize } from "./aggregate.js";
import { costChart, successChart } from "./charts.js";
import { configurationsFor, type Available } from "./configurations.js";
import { runEvaluation } from "./harness.js";
import { stderrProgress } from "./progress.js";
import { SIMULATED_PROFILES, startSimulatedModel } from "./sim/endpoint.js";
import { renderReport } from "./report.js";
import { outputDirectory } from "./output-dir.js";
import { runRetrievalSuite } from "./retrieval/report.js";
import { openStorage } from "./storage.js";
import { CATEGORIES } from "./task.js";
import { TASKS } from "./tasks/index.js";

/** Chosen so a full run with no model takes a few minutes on a 2-core machine (see the README's Evaluation section). */
export const DEFAULT_REPEATS = 2;

const USAGE = `Usage: npm run eval -- [--repeats N] [--tasks ID,...] [--configurations ID,...] [--out DIR]

Runs every task of eval/tasks/ on the fixed workflow, the rules agent, the
simulated model profiles (eval/sim/) and, when OPENAI_BASE_URL / WARRANT_MODEL
are set, the real model; writes report.md, runs.json, success-rate.svg and
cost-per-success.svg to DIR (default: a new scratch directory, printed; the
tracked sample report is rewritten only with --out eval/results); the
retrieval suite (eval/retrieval/) adds its section to report.md and retrieval.svg.

  --repeats N           runs per task and configuration (default ${DEFAULT_REPEATS})
  --tasks ID,...        only these tasks
  --configurations ID,... only these configurations (e.g. workflow,agent-rules)
  --out DIR             where to write the results (e.g. --out eval/results)
`;

class UsageError extends Error {}

function parseOptions(argv: string[]) {
  const { values } = parseArgs({
    args: argv,
    options: {
      repeats: { type: "string" },
      tasks: { type: "string" },
      configurations: { type: "string" },
      out: { type: "string" },
      help: { type: "boolean", default: false },
    },
    strict: true,
    allowPositionals: false,
  });
  const repeats = values.repeats === undefined ? DEFAULT_REPEATS : Number(values.repeats);
  if (!Number.isSafeInteger(repeats) || repeats < 1 || repeats > 100)
    throw new UsageError("--repeats must be a whole number from 1 to 100");
  const list = (value: string | undefined) =>
    value === undefined
      ? undefined
      : value
          .split(",")
          .map((item) => item.trim())
          .filter((item) => item !== "");
  return {
    help: values.help === true,
    repeats,
    tasks: list(values.tasks),
    configurations: list(values.configurations),
    out: values.out,
  };
}

/**
 * @langchain/core warns on stderr whenever a reply's tool calls all failed to
 * parse (the simulated hostile profile sends such replies on purpose); the
 * run records what happened, and the warning would only break the progress bar.
 */
function quietLangChainToolCallWarning(): void {
  const warn = console.warn.bind(console);
  console.warn = (...args: unknown[]) => {
    if (typeof args[0] === "string" && args[0].startsWith("New LangChain packages are available")) return;
    warn(...args);
  };
}

async function main(argv: string[]): Promise<number> {
  let options: ReturnType<typeof parseOptions>;
  try {
    options = parseOptions(argv);
  } catch (error) {
    process.stderr.write(`eval: ${error instanceof Error ? error.message : String(error)}\n\n${USAGE}`);
    return 2;
  }
  if (options.help) {
    process.stdout.write(USAGE);
    return 0;
  }
  quietLangChainToolCallWarning();
  const settings = loadSettings();
  const baseConfig = await loadConfig(settings.configPath);
  const skipped: string[] = [];
  const realModel =
    settings.planner === "model" || settings.model.baseUrl !== undefined
      ? { model: settings.model.name, endpoint: settings.model.baseUrl }
      : undefined;
  if (!realModel) skipped.push("real-model configurations: no OPENAI_BASE_URL / WARRANT_MODEL set");
  const available: Available = { ...(realModel ? { realModel } : {}), simulatedProfiles: SIMULATED_PROFILES };
  const configurations = configurationsFor(available).filter(
    (configuration) => !options.configurations || options.configurations.includes(configuration.id),
  );
  const tasks = TASKS.filter((task) => !options.tasks || options.tasks.includes(task.id));
  const unknown = [
    ...(options.tasks ?? []).filter((id) => !TASKS.some((task) => task.id === id)),
    ...(options.configurations ?? []).filter((id) => !configurations.some((configuration) => configuration.id === id)),
  ];
  if (unknown.length > 0 || tasks.length === 0 || configurations.length === 0) {
    process.stderr.write(`eval: nothing to run${unknown.length > 0 ? ` (unknown: ${unknown.join(", ")})` : ""}\n`);
    return 2;
  }

  const startedAt = new Date();
  const storage = await openStorage(settings.databaseUrl);
  const progress = stderrProgress();
  let records: Awaited<ReturnType<typeof runEvaluation>>;
  try {
    records = await runEvaluation({
      tasks,
      configurations,
      repeats: options.repeats,
      settings,
      baseConfig,
      storage,
      simulator: { startSimulatedModel, SIMULATED_PROFILES },
      onRun: (done, total, record) => progress.update(done, total, `${record.task_id} · ${record.configuration}`),
    });
  } finally {
    progress.finish();
    await storage.close();
  }
  const durationMs = Date.now() - startedAt.getTime();
  const summaries = summarize(
    records,
    tasks,
    configurations.map((configuration) => configuration.id),
  );
  const series = configurations.map((configuration) => ({
    configuration: configuration.id,
    simulated: configuration.simulated,
  }));
  const command = ["npm run eval", ...(argv.length > 0 ? ["--", ...argv] : [])].join(" ");
  const report = renderReport(
    {
      command,
      started_at: startedAt.toISOString(),
      duration_ms: durationMs,
      repeats: options.repeats,
      storage: storage.label,
      configurations,
      skipped,
      real_model: realModel
        ? { model: realModel.model, endpoint: realModel.endpoint ?? "the OpenAI default endpoint" }
        : undefined,
      tasks,
    },
    summaries,
    records,
  );
  // The retrieval suite (eval/retrieval/): in process, a few seconds; its section follows the task report.
  const retrieval = await runRetrievalSuite();
  const out = await outputDirectory(options.out);
  await mkdir(out.dir, { recursive: true });
  /** runs.json: the command, when and how long, the configurations, their summaries and every run. */
  const runsFile = {
    command,
    started_at: startedAt.toISOString(),
    duration_ms: durationMs,
    repeats: options.repeats,
    configurations,
    summaries,
    runs: records,
  };
  await Promise.all([
    writeFile(path.join(out.dir, "report.md"), `${report}\n${retrieval.markdown}`),
    writeFile(path.join(out.dir, "retrieval.svg"), retrieval.svg),
    writeFile(path.join(out.dir, "runs.json"), `${JSON.stringify(runsFile, null, 2)}\n`),
    writeFile(path.join(out.dir, "success-rate.svg"), successChart(summaries, series, CATEGORIES)),
    writeFile(path.join(out.dir, "cost-per-success.svg"), costChart(summaries, series, CATEGORIES)),
  ]);
  const shown = out.scratch ? out.dir : path.relative(process.cwd(), out.dir) || ".";
  const scratchNote = out.scratch ? " (a scratch directory; --out eval/results updates the tracked sample)" : "";
  process.stderr.write(
    `eval: ${records.length} runs in ${(durationMs / 1000).toFixed(0)} s; wrote ${shown}/report.md, runs.json, ` +
      `success-rate.svg, cost-per-success.svg, retrieval.svg${scratchNote}\n`,
  );
  return 0;
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(`eval: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
  },
);
