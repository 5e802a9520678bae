import type { EnvironmentId } from '../../src/lib/ids.js';

/** Tests name environments that the code under test would only ever receive from a credential. */
export function testEnvironmentId(id: string): EnvironmentId {
  return id as EnvironmentId;
}
