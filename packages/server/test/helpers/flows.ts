import type { TestApp, TestEnvironment } from './app.js';

export const REDIRECT = 'https://app.example.test/auth/callback';

export interface CapturedEmail {
  id: string;
  to: string;
  subject: string;
  text: string;
  html: string;
  kind: string;
}

/** Development mail, newest first, as an application developer reads it. */
export async function outbox(t: TestApp, to: string, environment: TestEnvironment = t.project.development): Promise<CapturedEmail[]> {
  const res = await t.call({
    method: 'GET',
    url: `/v1/dev/emails?to=${encodeURIComponent(to)}&limit=100`,
    credential: environment.secretKey,
  });
  if (res.statusCode !== 200) throw new Error(`outbox read failed: ${res.statusCode} ${res.body}`);
  return (res.json() as { data: CapturedEmail[] }).data;
}

export function tokenFrom(email: CapturedEmail): string {
  const link = /(https?:\/\/\S+)/.exec(email.text)?.[1];
  const token = link ? new URL(link).searchParams.get('token') : null;
  if (!token) throw new Error(`no link with a token in: ${email.text}`);
  return token;
}

export function codeFrom(email: CapturedEmail): string {
  const code = /^(\d{6})$/m.exec(email.text)?.[1];
  if (!code) throw new Error(`no code in: ${email.text}`);
  return code;
}

export function start(t: TestApp, path: string, payload: object, environment: TestEnvironment = t.project.development) {
  return t.call({ method: 'POST', url: `/v1/auth/${path}`, credential: environment.publishableKey, payload });
}
