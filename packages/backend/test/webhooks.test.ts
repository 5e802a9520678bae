import { randomBytes } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { describe, expect, it } from 'vitest';
import { verifyWebhook, WebhookVerificationError } from '../src/index.js';

/** Deliveries signed by the reference implementation of Standard Webhooks (the `standardwebhooks` package). */
const secret = `whsec_${randomBytes(24).toString('base64')}`;
const reference = new Webhook(secret);
const body = JSON.stringify({
  type: 'user.created',
  timestamp: '2026-11-24T12:00:00.000Z',
  data: { id: 'user_1', email: 'ada@example.test' },
});

function delivery(options: { at?: Date; id?: string; payload?: string; signWith?: Webhook[] } = {}) {
  const at = options.at ?? new Date();
  const id = options.id ?? `msg_${randomBytes(8).toString('hex')}`;
  const payload = options.payload ?? body;
  const signature = (options.signWith ?? [reference]).map((w) => w.sign(id, at, payload)).join(' ');
  return {
    payload,
    headers: { 'webhook-id': id, 'webhook-timestamp': String(Math.floor(at.getTime() / 1000)), 'webhook-signature': signature },
  };
}

function refusal(fn: () => unknown): WebhookVerificationError {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(WebhookVerificationError);
    return error as WebhookVerificationError;
  }
  throw new Error('expected a WebhookVerificationError');
}

describe('verifyWebhook against the Standard Webhooks reference', () => {
  it('accepts a delivery the reference signed, and returns the parsed {type, timestamp, data}', () => {
    const { payload, headers } = delivery();
    expect(verifyWebhook(payload, headers, secret)).toEqual(JSON.parse(body));
    // The reference agrees on the same input.
    expect(reference.verify(payload, headers)).toEqual(JSON.parse(body));
  });

  it('takes the body as a string, a Buffer or bytes, and headers as node’s object or a fetch Headers', () => {
    const { payload, headers } = delivery();
    expect(verifyWebhook(Buffer.from(payload), headers, secret).type).toBe('user.created');
    expect(verifyWebhook(new TextEncoder().encode(payload), new Headers(headers), secret).type).toBe('user.created');
    const shouting = Object.fromEntries(Object.entries(headers).map(([k, v]) => [k.toUpperCase(), v]));
    expect(verifyWebhook(payload, shouting, secret).type).toBe('user.created');
  });

  it('accepts any one of several v1 signatures (a secret in rotation signs twice)', () => {
    const old = new Webhook(`whsec_${randomBytes(24).toString('base64')}`);
    const { payload, headers } = delivery({ signWith: [old, reference] });
    expect(headers['webhook-signature'].split(' ')).toHaveLength(2);
    expect(verifyWebhook(payload, headers, secret).type).toBe('user.created');
    // Other versions are ignored, not an error.
    const mixed = { ...headers, 'webhook-signature': `v2,abc ${headers['webhook-signature']}` };
    expect(verifyWebhook(payload, mixed, secret).type).toBe('user.created');
  });

  it('allows 5 minutes of timestamp tolerance either way', () => {
    const { payload, headers } = delivery({ at: new Date(Date.now() - 4 * 60_000) });
    expect(verifyWebhook(payload, headers, secret).type).toBe('user.created');
    const ahead = delivery({ at: new Date(Date.now() + 4 * 60_000) });
    expect(verifyWebhook(ahead.payload, ahead.headers, secret).type).toBe('user.created');
  });

  it('insists on the raw body: a parsed object is refused with a message saying what to pass', () => {
    const { headers } = delivery();
    const error = refusal(() => verifyWebhook(JSON.parse(body), headers, secret));
    expect(error.message).toMatch(/raw request body/);
  });

  it('refuses a delivery without the three headers', () => {
    const { payload, headers } = delivery();
    for (const name of ['webhook-id', 'webhook-timestamp', 'webhook-signature'] as const) {
      const { [name]: _omitted, ...rest } = headers;
      refusal(() => verifyWebhook(payload, rest, secret));
    }
  });
});
