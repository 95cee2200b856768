/** Collecting async streams (SDK run streams, event logs) into arrays. */

/**
 * Every item of a stream, each passed through `pick` (to keep only what a test compares), up to and
 * including the first for which `stopAfter` holds.
 */
export async function collect<T, U = T>(
  stream: AsyncIterable<T>,
  options: { pick?: (item: T) => U; stopAfter?: (item: T) => boolean } = {},
): Promise<U[]> {
  const items: U[] = [];
  for await (const item of stream) {
    items.push(options.pick ? options.pick(item) : (item as unknown as U));
    if (options.stopAfter?.(item)) break;
  }
  return items;
}
