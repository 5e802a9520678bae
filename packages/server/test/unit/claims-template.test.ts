import { describe, expect, it } from 'vitest';
import { compileSessionClaims, SessionClaimsCompiler, type ClaimsUser } from '../../src/sessions/claims-template.js';

const user: ClaimsUser = {
  id: 'user_1',
  email: 'ada@example.com',
  emailVerified: true,
  firstName: 'Ada',
  lastName: null,
  username: null,
  imageUrl: null,
  publicMetadata: { plan: 'pro', limits: { seats: 3 } },
  createdAt: 1,
};

describe('session claims templates', () => {
  it('renders placeholders with their JSON type when whole, as text inside text', () => {
    const compiled = compileSessionClaims({
      seats: '{{user.publicMetadata.limits.seats}}',
      line: '{{ user.firstName }} has {{user.publicMetadata.limits}} and {{user.lastName}}.',
      list: ['{{user.emailVerified}}', 3, null, { deep: '{{user.id}}' }],
    });
    expect(compiled.readsUser).toBe(true);
    expect(compiled.render(user)).toEqual({
      seats: 3,
      line: 'Ada has {"seats":3} and .',
      list: [true, 3, null, { deep: 'user_1' }],
    });
    expect(compileSessionClaims({ fixed: 'no placeholders here', n: 1 }).readsUser).toBe(false);
  });

  it('compiles a template once per settings object, and once per text for settings read afresh', () => {
    const compiler = new SessionClaimsCompiler();
    const template = { plan: '{{user.publicMetadata.plan}}' };
    const first = compiler.get(template);
    expect(compiler.get(template)).toBe(first);
    expect(compiler.get({ plan: '{{user.publicMetadata.plan}}' })).toBe(first); // the same text, another object
    expect(compiler.get({ plan: '{{user.email}}' })).not.toBe(first);
  });

  it('a stored template that was never checked renders nothing instead of failing a sign-in', () => {
    const compiler = new SessionClaimsCompiler();
    const compiled = compiler.get({ sub: 'forged', x: '{{user.privateMetadata}}' });
    expect(compiled.render(user)).toBeUndefined();
  });
});
