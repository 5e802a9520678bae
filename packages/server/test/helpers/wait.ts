/** Polls until `check` holds, or fails after `withinMs`: for what another node or process does. */
export async function within(withinMs: number, check: () => Promise<boolean>, pollMs = 10): Promise<void> {
  const deadline = Date.now() + withinMs;
  for (;;) {
    if (await check()) return;
    if (Date.now() > deadline) throw new Error(`not true within ${withinMs} ms`);
    await new Promise((r) => setTimeout(r, pollMs));
  }
}
