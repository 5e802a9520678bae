import { startTestApp } from './test/helpers/app.js';
import { signUp, GOOD_PASSWORD, json } from './test/helpers/identity.js';
import { enablePasskeys, registerPasskey, passkeyOptions, passkeyVerify, LOCAL_ORIGIN } from './test/helpers/passkeys.js';
import { SoftAuthenticator } from './test/helpers/webauthn.js';
const t = await startTestApp();
await t.setSettings(t.project.development.id, { rateLimitPerMinute: 10_000_000 } as any);
await enablePasskeys(t);
const env = t.project.development;
const user = await signUp(t, { password: GOOD_PASSWORD });
const auth = new SoftAuthenticator(LOCAL_ORIGIN, 'ES256', false);
await registerPasskey(t, user.accessToken, auth);
let refreshToken = user.refreshToken ?? json(await t.call({ method: 'POST', url: '/v1/auth/signin', credential: env.publishableKey, payload: { email: user.email, password: GOOD_PASSWORD } })).session.refreshToken;
// pre-signed assertions are not possible (fresh challenge): sign inside, and measure signing separately
const ops: Record<string, () => Promise<unknown>> = {
  options: () => passkeyOptions(t, auth),
  passkey: async () => { const o = await passkeyOptions(t, auth); const r = await passkeyVerify(t, env, o.attemptId, auth.get(o.options)); if (r.statusCode !== 200) throw new Error(r.body); },
  refresh: async () => { const r = await t.call({ method: 'POST', url: '/v1/auth/refresh', credential: env.publishableKey, payload: { refreshToken } }); if (r.statusCode !== 200) throw new Error(r.body); refreshToken = json(r).session.refreshToken; },
  sign: async () => auth.get({ challenge: 'A'.repeat(43), rpId: 'localhost', allowCredentials: [] }),
};
const cpu = () => { const u = process.cpuUsage(); return u.user + u.system; };
const res: Record<string, number[]> = {};
for (let r = 0; r < Number(process.env.R ?? 6); r++) for (const [n, f] of Object.entries(ops)) {
  const N = n === 'sign' ? 2000 : 400; const c = cpu();
  for (let i = 0; i < N; i++) await f();
  (res[n] ??= []).push((cpu() - c) / N);
}
const med = (a: number[]) => [...a].sort((x, y) => x - y)[a.length >> 1]!;
for (const [n, v] of Object.entries(res)) console.log(n.padEnd(8), med(v.slice(1)).toFixed(0), 'µs CPU/op (process)');
console.log('passkey - sign / refresh =', ((med(res.passkey!.slice(1)) - med(res.sign!.slice(1))) / med(res.refresh!.slice(1))).toFixed(2));
await t.close();
