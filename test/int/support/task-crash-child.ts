/**
 * The host process of calendar-tasks-crash.test.ts: resumes (approves) a thread whose pending review is the
 * calendar write, with create_study_event run as a task, and SIGKILLs itself at one moment of that task:
 * `before_task_id` (the task answer arrived, its id not yet recorded), `while_polling` (the id recorded, the task
 * working) or `after_completion` (the task completed, the ledger row not yet updated). Any other end is exit 3.
 *
 * Usage: node --import tsx task-crash-child.ts DATABASE_URL DATA_PATH THREAD_ID MOMENT
 */
import os from "node:os";
import { openDatabase } from "../../../src/stores/open-database.js";
import { connectTools, type ToolHost } from "../../../src/mcp/tool-host.js";
import { loadConfig } from "../../../src/policy/config.js";
import { scriptedPlanner } from "../../support/scripted-planner.js";
import { agentHarness, settings } from "./agent.js";
import { APPROVE, DONE } from "./calendar.js";
import { MOMENTS, type Moment, taskConfig } from "./calendar-tasks.js";

const [databaseUrl, dataPath, threadId, moment] = process.argv.slice(2);
if (!databaseUrl || !dataPath || !threadId || !MOMENTS.includes(moment as Moment)) {
  process.stderr.write("usage: task-crash-child.ts DATABASE_URL DATA_PATH THREAD_ID MOMENT\n");
  process.exit(2);
}
const die = (): never => {
  process.kill(process.pid, "SIGKILL");
  throw new Error("unreachable");
};

const database = await openDatabase({ databaseUrl, dataDir: os.tmpdir() });
const host = await connectTools(taskConfig(await loadConfig(settings.configPath), dataPath));
const dying: ToolHost = Object.assign(Object.create(host) as ToolHost, {
  async call(...args: Parameters<ToolHost["call"]>) {
    const [tool, toolArgs, options] = args;
    if (tool.name !== "create_study_event" || !options.task) return host.call(...args);
    const { started } = options.task;
    const hooks = {
      async started(taskId: string) {
        if (moment === "before_task_id") die();
        await started(taskId);
        if (moment === "while_polling") die();
      },
    };
    const outcome = await host.call(tool, toolArgs, { ...options, task: hooks });
    if (moment === "after_completion" && outcome.ok) die();
    return outcome;
  },
});
const agent = agentHarness({ database, tools: dying, planner: scriptedPlanner([DONE]) });
await agent.resume("alice", threadId, APPROVE).catch(() => undefined);
process.stderr.write(`task-crash-child: survived ${moment}\n`);
process.exit(3);
