import { describe, expect, it } from 'vitest';
import { routeTarget } from '../../../contract/src/route-target.js';

describe('route targets: a path parameter cannot climb the path', () => {
  it('refuses "..", "." and an empty id, which would reach another route', () => {
    for (const userId of ['..', '.', '']) {
      expect(() =>
        routeTarget('DELETE /v1/organizations/{organizationId}/members/{userId}', { params: { organizationId: 'org_1', userId } }),
      ).toThrow(TypeError);
    }
    // What a URL makes of the path the check refuses: the member route becomes the organization's.
    expect(new URL('https://gh.example/v1/organizations/org_1/members/..').pathname).toBe('/v1/organizations/org_1/');
  });

  it('encodes every other value inside its one segment', () => {
    const { method, path } = routeTarget('GET /v1/users/{userId}', {
      params: { userId: '../x/%2e?a=b#c' },
      query: { limit: 5, cursor: undefined },
    });
    expect(method).toBe('GET');
    expect(path).toBe('/v1/users/..%2Fx%2F%252e%3Fa%3Db%23c?limit=5');
    expect(new URL(`https://gh.example${path}`).pathname).toBe('/v1/users/..%2Fx%2F%252e%3Fa%3Db%23c');
  });
});
