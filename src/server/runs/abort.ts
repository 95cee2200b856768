/** Waiting that an abort signal cuts short, and the abort reasons runs are stopped with. */

/** Resolves after `ms`, or at once when `signal` aborts. */
export function delay(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal?.addEventListener(
      "abort",
      () => {
        clearTimeout(timer);
        resolve();
      },
      { once: true },
    );
  });
}

/** Resolves when `signal` aborts (never without one). */
export function abortPromise(signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (!signal) return;
    if (signal.aborted) resolve();
    signal.addEventListener("abort", () => resolve(), { once: true });
  });
}

/** Abort reasons are AbortErrors, so tool calls cut short read as cancelled, not as a broken server. */
export function abortReason(message: string): Error {
  const reason = new Error(message);
  reason.name = "AbortError";
  return reason;
}
