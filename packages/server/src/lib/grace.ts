// The stop of a background worker (the email outbox's, the webhooks').

/** How long a stopping worker lets a send under way (an email, a webhook delivery) finish before giving its message back. */
export const STOP_GRACE_MS = 8_000;

/** Resolves after `ms`, on a timer that keeps no process alive; `cancel` clears it. */
export function graceTimer(ms: number): { elapsed: Promise<'elapsed'>; cancel(): void } {
  let timer: NodeJS.Timeout | undefined;
  const elapsed = new Promise<'elapsed'>((resolve) => {
    timer = setTimeout(() => resolve('elapsed'), ms);
    timer.unref();
  });
  return { elapsed, cancel: () => clearTimeout(timer) };
}
