import { describe, expect, it } from 'vitest';
import { renderEmail } from '../../src/mail/templates.js';

describe('email templates', () => {
  it('carries the project name, logo, link and expiry in both parts', () => {
    const email = renderEmail({
      kind: 'magic_link',
      projectName: 'Acme',
      logoUrl: 'https://cdn.acme.test/logo.png',
      link: 'https://app.acme.test/cb?token=abc',
      expiresInMinutes: 10,
    });
    expect(email.subject).toBe('Sign in to Acme');
    expect(email.text).toContain('https://app.acme.test/cb?token=abc');
    expect(email.text).toContain('10 minutes');
    expect(email.html).toContain('<img src="https://cdn.acme.test/logo.png"');
    expect(email.html).toContain('href="https://app.acme.test/cb?token=abc"');
    expect(email.html).toContain('10 minutes');
  });

  it('carries a code', () => {
    const email = renderEmail({ kind: 'email_code', projectName: 'Acme', logoUrl: null, code: '123456', expiresInMinutes: 10 });
    expect(email.text).toContain('123456');
    expect(email.html).toContain('123456');
    expect(email.html).not.toContain('<img');
  });

  it('escapes everything interpolated into HTML', () => {
    const email = renderEmail({
      kind: 'password_reset',
      projectName: '<script>alert(1)</script>',
      logoUrl: 'https://x.test/"onerror="alert(1)',
      link: 'https://x.test/?a="><script>',
      expiresInMinutes: 10,
    });
    expect(email.html).not.toContain('<script>');
    expect(email.html).not.toContain('"onerror="');
  });
});
