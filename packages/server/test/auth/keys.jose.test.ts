import type { AddressInfo } from 'node:net';
import { createRemoteJWKSet, customFetch, jwksCache, jwtVerify, type JSONWebKeySet } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { JWKS_MAX_AGE_SECONDS, VERIFIER_COOLDOWN_MS } from '../../src/sessions/key-schedule.js';
import { BASE_URL, startTestApp, type TestApp } from '../helpers/app.js';
import { decodeJwt, json, refresh, signUp } from '../helpers/identity.js';

/**
 * A real verifier, jose's createRemoteJWKSet, fetching the JWKS over HTTP from the app on a real
 * port, through a whole rotation.
 *
 * Time. The server's rotation waits 6 minutes and jose's cooldown is 30 s of real time, which jose
 * reads from Date.now() and no option can move. Sleeping through real minutes is out, and freezing
 * the server clock while jose runs in real time would test nothing. So both sides run on one time
 * base, compressed by SCALE: the server's injected clock advances SCALE ms per real ms, and each
 * verifier's durations (cooldown, cache lifetime) are its real-world values divided by SCALE. Every
 * ratio that decides whether a token is refused (max-age : cooldown : activation delay : token
 * lifetime) is as in production, and the server's constants are not changed for the test. Claims
 * (`exp`, `nbf`) are checked against the server clock, as a verifier whose clock agrees would.
 *
 * SCALE = 30 makes jose's 30 s cooldown 1 s of real time: long enough that, with the rotation made
 * right after the verifiers' first fetch, a rotation that signs at once (the staging removed) is
 * refused within the cooldown every time, even on a loaded machine; and the 6-minute delay 12 s.
 */
const SCALE = 30;
const JOSE_DEFAULT_CACHE_MAX_AGE_MS = 600_000;

function scaledClock() {
  const realStart = Date.now();
  return { now: () => Math.floor(realStart + (Date.now() - realStart) * SCALE) };
}

/**
 * A shared HTTP cache (a CDN or proxy) in front of a verifier, keeping each JWKS response for the
 * max-age it advertises, on the scaled time base. `seed`: the copy it holds to begin with.
 */
function httpCache(seed: { jwks: JSONWebKeySet; at: number }) {
  let stored = { body: JSON.stringify(seed.jwks), at: seed.at, maxAgeMs: (JWKS_MAX_AGE_SECONDS * 1000) / SCALE };
  return async (url: string, init: RequestInit): Promise<Response> => {
    if (Date.now() >= stored.at + stored.maxAgeMs) {
      const response = await fetch(url, init);
      const maxAge = Number(/max-age=(\d+)/.exec(response.headers.get('cache-control') ?? '')?.[1] ?? 0);
      stored = { body: await response.text(), at: Date.now(), maxAgeMs: (maxAge * 1000) / SCALE };
    }
    return new Response(stored.body, { status: 200, headers: { 'content-type': 'application/json' } });
  };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

interface Verifier {
  name: string;
  verify(token: string): Promise<void>;
  fetches: number;
}

describe('a verifier using jose createRemoteJWKSet through a staged rotation', () => {
  const clock = scaledClock();
  let t: TestApp;
  let jwksUrl: URL;
  let issuer: string;

  beforeAll(async () => {
    t = await startTestApp({ now: clock.now, rateLimit: false });
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    const { port } = t.app.server.address() as AddressInfo;
    jwksUrl = new URL(`http://127.0.0.1:${port}/v1/environments/${t.project.development.id}/.well-known/jwks.json`);
    issuer = `${BASE_URL}/v1/environments/${t.project.development.id}`;
  });
  afterAll(() => t.close());

  function verifier(
    name: string,
    options: {
      cooldownMs: number;
      cacheMaxAgeMs: number;
      fetched?: { jwks: JSONWebKeySet; at: number };
      via?: (url: string, init: RequestInit) => Promise<Response>;
    },
  ): Verifier {
    const self: Verifier = {
      name,
      fetches: 0,
      async verify(token) {
        await jwtVerify(token, jwks, { issuer, typ: 'at+jwt', algorithms: ['RS256'], currentDate: new Date(clock.now()) });
      },
    };
    const jwks = createRemoteJWKSet(jwksUrl, {
      cooldownDuration: options.cooldownMs / SCALE,
      cacheMaxAge: options.cacheMaxAgeMs / SCALE,
      // jose's own way to start from a JWKS fetched earlier (as serverless verifiers carry it).
      ...(options.fetched ? { [jwksCache]: { jwks: options.fetched.jwks, uat: options.fetched.at } } : {}),
      [customFetch]: (url: string, init: RequestInit) => {
        self.fetches += 1;
        return (options.via ?? fetch)(url, init);
      },
    });
    return self;
  }

  it('refuses no token issued before, during or after the rotation', async () => {
    const refusals: string[] = [];
    const verified = { before: 0, pendingOldKey: 0, afterOldKey: 0, afterNewKey: 0 };
    const verifiers = [
      // Honours the JWKS max-age as its cache lifetime.
      verifier('max-age', { cooldownMs: VERIFIER_COOLDOWN_MS, cacheMaxAgeMs: JWKS_MAX_AGE_SECONDS * 1000 }),
      // jose's defaults (10 min cache, 30 s cooldown): it meets the new kid with a JWKS that lacks it.
      verifier('jose defaults', { cooldownMs: VERIFIER_COOLDOWN_MS, cacheMaxAgeMs: JOSE_DEFAULT_CACHE_MAX_AGE_MS }),
    ];
    const check = async (token: string, phase: keyof typeof verified, among = verifiers) => {
      for (const v of among) {
        try {
          await v.verify(token);
          verified[phase] += 1;
        } catch (error) {
          refusals.push(`${v.name} refused a token (${phase}, kid ${decodeJwt(token).header.kid}): ${String(error)}`);
        }
      }
    };

    const users = [await signUp(t), await signUp(t)];
    const oldKid = decodeJwt(users[0]!.accessToken).header.kid;
    // Each verifier loads the JWKS now, so its cooldown is running when the rotation happens.
    for (const user of users) await check(user.accessToken, 'before');

    const jwksBefore = (await (await fetch(jwksUrl)).json()) as JSONWebKeySet;
    const rotation = await t.call({
      method: 'POST',
      url: `/v1/platform/environments/${t.project.development.id}/signing-keys/rotate`,
      credential: t.platformKey,
    });
    expect(rotation.statusCode).toBe(201);
    // And verifiers whose fetch completed just as the rotation was made, with the JWKS as it was
    // before: their cooldown starts now, whatever time the key generation took on this machine.
    for (const [name, cacheMaxAgeMs] of [
      ['max-age, fetched during the rotation', JWKS_MAX_AGE_SECONDS * 1000],
      ['jose defaults, fetched during the rotation', JOSE_DEFAULT_CACHE_MAX_AGE_MS],
    ] as const) {
      verifiers.push(verifier(name, { cooldownMs: VERIFIER_COOLDOWN_MS, cacheMaxAgeMs, fetched: { jwks: jwksBefore, at: Date.now() } }));
    }
    // And one behind an HTTP cache that stored the JWKS as the rotation was made. Its own copy is a
    // little older, so it refetches through the cache shortly before that copy expires, gets the
    // copy without the new key, and starts its cooldown then: the case the delay's max-age and
    // cooldown terms are both there for.
    const rotatedAt = Date.now();
    verifiers.push(
      verifier('behind an HTTP cache', {
        cooldownMs: VERIFIER_COOLDOWN_MS,
        cacheMaxAgeMs: JWKS_MAX_AGE_SECONDS * 1000,
        fetched: { jwks: jwksBefore, at: rotatedAt - 10_000 / SCALE },
        via: httpCache({ jwks: jwksBefore, at: rotatedAt }),
      }),
    );
    // The staging itself (state, activatesAt) is asserted in keys.test.ts; here only what a
    // verifier sees counts, so the test shows refusals if the staging is taken away.
    const { kid: newKid, activatesAt } = json(rotation) as { kid: string; activatesAt: number };

    // A verifier that first fetches shortly before the activation: its cooldown spans the switch.
    let lateComer: Verifier | undefined;
    const signedBeforeActivation: Array<{ token: string; exp: number }> = [];
    const refreshTokens = users.map((u) => u.refreshToken);
    const end = activatesAt + 2 * VERIFIER_COOLDOWN_MS;
    while (clock.now() < end) {
      if (!lateComer && clock.now() >= activatesAt - VERIFIER_COOLDOWN_MS / 2) {
        lateComer = verifier('fetched just before activation', {
          cooldownMs: VERIFIER_COOLDOWN_MS,
          cacheMaxAgeMs: JWKS_MAX_AGE_SECONDS * 1000,
        });
      }
      const among = lateComer ? [...verifiers, lateComer] : verifiers;
      for (const [i, refreshToken] of refreshTokens.entries()) {
        const response = await refresh(t, refreshToken);
        expect(response.statusCode, response.body).toBe(200);
        const session = json(response).session as { accessToken: string; refreshToken: string };
        refreshTokens[i] = session.refreshToken;
        const { header, payload } = decodeJwt(session.accessToken);
        if (header.kid === oldKid) {
          await check(session.accessToken, clock.now() < activatesAt ? 'pendingOldKey' : 'afterOldKey', among);
          signedBeforeActivation.push({ token: session.accessToken, exp: payload.exp as number });
        } else {
          expect(header.kid).toBe(newKid);
          await check(session.accessToken, 'afterNewKey', among);
        }
      }
      // Tokens the old key signed stay valid after the switch, until they expire. Sampled among those
      // two minutes from expiry or more: the checks take real milliseconds, each 30 on this clock.
      if (clock.now() >= activatesAt) {
        const live = signedBeforeActivation.filter((s) => s.exp * 1000 > clock.now() + 120_000);
        const sample = live[Math.floor(Math.random() * live.length)];
        if (sample) await check(sample.token, 'afterOldKey', among);
      }
      await sleep(100);
    }

    expect(refusals).toEqual([]);
    // The run went through every phase: the old key before and while the new one was pending, and
    // both keys after the activation.
    expect(verified.before).toBeGreaterThan(0);
    expect(verified.pendingOldKey).toBeGreaterThan(0);
    expect(verified.afterOldKey).toBeGreaterThan(0);
    expect(verified.afterNewKey).toBeGreaterThan(0);
    expect(lateComer).toBeDefined();
  });

  it('signs with the new key at once after an emergency rotation, which a verifier in its cooldown refuses', async () => {
    const user = await signUp(t);
    // jose with its real defaults (30 s cooldown, unscaled): it fetches the JWKS now.
    const cached = createRemoteJWKSet(jwksUrl);
    const options = { issuer, typ: 'at+jwt', algorithms: ['RS256'] };
    await jwtVerify(user.accessToken, cached, { ...options, currentDate: new Date(clock.now()) });

    const rotation = await t.call({
      method: 'POST',
      url: `/v1/platform/environments/${t.project.development.id}/signing-keys/rotate`,
      credential: t.platformKey,
      payload: { immediate: true },
    });
    expect(rotation.statusCode).toBe(201);
    const key = json(rotation);
    expect(key.state).toBe('active');
    const next = json(await refresh(t, user.refreshToken)).session;
    expect(decodeJwt(next.accessToken).header.kid).toBe(key.kid);

    // The documented cost: within its cooldown, the verifier refuses the new key's tokens.
    await expect(jwtVerify(next.accessToken, cached, { ...options, currentDate: new Date(clock.now()) })).rejects.toMatchObject({
      code: 'ERR_JWKS_NO_MATCHING_KEY',
    });
    // A verifier that fetches now knows the new key, and the old key is still published.
    const fresh = verifier('fresh', { cooldownMs: VERIFIER_COOLDOWN_MS, cacheMaxAgeMs: JWKS_MAX_AGE_SECONDS * 1000 });
    await fresh.verify(next.accessToken);
    await fresh.verify(user.accessToken);
  });
});
