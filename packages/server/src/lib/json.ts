/**
 * Whether `value` nests deeper than `max` levels (an object or array is one level). The recursion
 * stops at `max`: a body of 500,000 nested arrays (JSON.parse takes it) overflows no stack here,
 * while JSON.stringify would.
 */
export function exceedsDepth(value: unknown, max: number): boolean {
  if (typeof value !== 'object' || value === null) return false;
  if (max <= 0) return true;
  for (const child of Object.values(value)) if (exceedsDepth(child, max - 1)) return true;
  return false;
}
