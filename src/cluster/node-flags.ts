/**
 * The V8 flags a Warrant server process runs with: `npm start` passes them (package.json), the primary gives them
 * to every worker it forks, and the bench starts Warrant with them as `npm start` does.
 *
 * `--max-semi-space-size=64` (MiB; Node 20's default is 16): a served run allocates a lot of short-lived objects
 * (each superstep's state copies, the stream's JSON, the statements' parameters), and with the default young
 * generation the scavenger ran often enough to take about 10% of a busy server's CPU. With 32 MiB it took about 6%
 * in the same profile (`npm run bench -- --only throughput`, 50 concurrent 5-step threads); with 64 MiB the server's
 * CPU a tool step fell by another 15-20% in alternating runs of the same served load (128 MiB bought nothing more).
 * The price is up to 3 × 64 MiB of young generation per process, reached only under load.
 */
export const SERVER_NODE_FLAGS: readonly string[] = ["--max-semi-space-size=64"];

/** `execArgv` with the server's flags added where it does not set them already (its own setting wins). */
export function withServerFlags(execArgv: readonly string[]): string[] {
  const named = (flag: string) => flag.split("=")[0] ?? flag;
  const given = new Set(execArgv.map(named));
  return [...execArgv, ...SERVER_NODE_FLAGS.filter((flag) => !given.has(named(flag)))];
}
