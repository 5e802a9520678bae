import { randomBytes } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { describe, expect, it } from 'vitest';
import { verifyWebhook, WebhookVerificationError } from '../src/index.js';

const secret = `whsec_${randomBytes(24).toString('base64')}`;
const reference = new Webhook(secret);
const body = JSON.stringify({ type: 'organizationMembership.created', timestamp: '2026-11-24T12:00:00.000Z', data: { role: 'member' } });

function signed(payload = body, at = new Date(), id = 'msg_1') {
  return {
    payload,
    headers: {
      'webhook-id': id,
      'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
      'webhook-signature': reference.sign(id, at, payload),
    },
  };
}

const refused = (fn: () => unknown) => expect(fn).toThrow(WebhookVerificationError);

describe('attacks on webhook deliveries', () => {
  it('a tampered body is refused (a role changed after signing)', () => {
    const { headers } = signed();
    refused(() => verifyWebhook(body.replace('"member"', '"owner"'), headers, secret));
  });

  it('a replay older than 5 minutes is refused, even with a valid signature', () => {
    const { payload, headers } = signed(body, new Date(Date.now() - 6 * 60_000));
    refused(() => verifyWebhook(payload, headers, secret));
  });

  it('a timestamp moved after signing (to pass the tolerance) breaks the signature', () => {
    const { payload, headers } = signed(body, new Date(Date.now() - 60 * 60_000));
    refused(() => verifyWebhook(payload, { ...headers, 'webhook-timestamp': String(Math.floor(Date.now() / 1000)) }, secret));
  });

  it('a webhook-id changed after signing (to dodge deduplication) breaks the signature', () => {
    const { payload, headers } = signed();
    refused(() => verifyWebhook(payload, { ...headers, 'webhook-id': 'msg_2' }, secret));
  });

  it('a signature made with another secret is refused', () => {
    const other = new Webhook(`whsec_${randomBytes(24).toString('base64')}`);
    const at = new Date();
    const headers = {
      'webhook-id': 'msg_1',
      'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
      'webhook-signature': other.sign('msg_1', at, body),
    };
    refused(() => verifyWebhook(body, headers, secret));
  });

  it('a truncated, empty or unversioned signature is refused', () => {
    const { payload, headers } = signed();
    const sig = headers['webhook-signature'];
    for (const bad of [sig.slice(0, -8), 'v1,', sig.replace('v1,', ''), sig.replace('v1,', 'v1a,'), `v0,${sig.slice(3)}`]) {
      refused(() => verifyWebhook(payload, { ...headers, 'webhook-signature': bad }, secret));
    }
  });

  it('a non-numeric timestamp is refused', () => {
    const { payload, headers } = signed();
    refused(() => verifyWebhook(payload, { ...headers, 'webhook-timestamp': `${headers['webhook-timestamp']}.5` }, secret));
  });
});
