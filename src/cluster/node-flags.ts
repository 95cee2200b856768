/**
 * The V8 flags a Warrant server process runs with: `npm start` passes them (package.json), the primary gives them
 * to every worker it forks, and the bench starts Warrant with them as `npm start` does.
 *
 * `--max-semi-space-size=32` (MiB; Node 20's default is 16): a served run allocates a lot of short-lived objects
 * (each superstep's state copies, the stream's JSON, the statements' parameters), and with the default young
 * generation the scavenger ran often enough to take about 10% of a busy server's CPU. With 32 MiB it took about 6%
 * in the same profile (`npm run bench -- --only throughput`, 50 concurrent 5-step threads); the price is up to
 * 3 × 32 MiB of young generation per process.
 */
export const SERVER_NODE_FLAGS: readonly string[] = ["--max-semi-space-size=32"];

/** `execArgv` with the server's flags added where it does not set them already (its own setting wins). */
export function withServerFlags(execArgv: readonly string[]): string[] {
  const named = (flag: string) => flag.split("=")[0] ?? flag;
  const given = new Set(execArgv.map(named));
  return [...execArgv, ...SERVER_NODE_FLAGS.filter((flag) => !given.has(named(flag)))];
}
