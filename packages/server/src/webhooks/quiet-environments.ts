/** How many environments the hint remembers; past it the oldest goes (an environment without a hint wakes the worker). */
const CAPACITY = 10_000;
/** For how many polls a fan-out's finding that an environment has no enabled endpoint is trusted. */
const TRUSTED_POLLS = 10;

/**
 * Environments whose events this node's fan-out found with no enabled endpoint, and at which poll:
 * a hint for whether committed events are worth waking the worker for, never a filter (every event
 * is stored and every poll fans out all of them). Its age is counted in polls, not in time, so a
 * clock that steps back or stands still cannot keep it.
 */
export class QuietEnvironments {
  private readonly foundAt = new Map<string, number>();
  private polls = 0;
  /** Counts endpoint changes, so that a fan-out that read the endpoints before one does not mark its environment quiet. */
  private endpointChanges = 0;

  /** A run that looks for due attempts (a poll) began. */
  polled(): void {
    this.polls++;
  }

  /** Whether a fan-out of the last few polls found each of these environments without an enabled endpoint. */
  allQuiet(environmentIds: readonly string[]): boolean {
    return environmentIds.every((id) => this.polls - (this.foundAt.get(id) ?? -Infinity) < TRUSTED_POLLS);
  }

  /** Taken before a fan-out reads endpoints, and given back with what it found. */
  fanOutStarting(): number {
    return this.endpointChanges;
  }

  /** What a fan-out that began at `startedAt` (from fanOutStarting) found for an environment. */
  found(environmentId: string, enabledEndpoints: number, startedAt: number): void {
    this.foundAt.delete(environmentId);
    if (enabledEndpoints > 0 || this.endpointChanges !== startedAt) return;
    if (this.foundAt.size >= CAPACITY) this.foundAt.delete(this.foundAt.keys().next().value!);
    this.foundAt.set(environmentId, this.polls);
  }

  /** An endpoint of the environment was created or changed on this node. */
  endpointsChanged(environmentId: string): void {
    this.endpointChanges++;
    this.foundAt.delete(environmentId);
  }
}
