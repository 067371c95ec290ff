/** The webhook contract as a consumer sees it: what an answer means, and the signature. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { signWebhookBody, verifyWebhookSignature } from './signature.js';
import { classifyStatus } from './webhook-sink.js';

void describe('webhook outcome of an HTTP status', () => {
  void it('2xx delivered; 4xx failed except 408 and 429; everything else retried', () => {
    const cases: [number, string][] = [
      [200, 'delivered'],
      [204, 'delivered'],
      [299, 'delivered'],
      [301, 'retryable'],
      [400, 'failed'],
      [401, 'failed'],
      [404, 'failed'],
      [408, 'retryable'],
      [410, 'failed'],
      [429, 'retryable'],
      [500, 'retryable'],
      [503, 'retryable'],
      [0, 'retryable'],
    ];
    for (const [status, kind] of cases) assert.equal(classifyStatus(status), kind, `${status}`);
  });
});

void describe('webhook signature, as a consumer checks it', () => {
  const secret = 'the-app-webhook-secret';
  const body = '{"app_code":"demo","event_id":"e1","room_id":"r","room_version":3}';

  void it('accepts the exact body signed with the secret', () => {
    const header = signWebhookBody(secret, body);
    assert.match(header, /^sha256=[0-9a-f]{64}$/);
    assert.equal(verifyWebhookSignature(secret, body, header), true);
    assert.equal(verifyWebhookSignature(secret, Buffer.from(body), header), true);
  });

  void it('rejects another secret, a changed body, a re-serialised body and bad headers', () => {
    const header = signWebhookBody(secret, body);
    assert.equal(verifyWebhookSignature('another-secret', body, header), false);
    assert.equal(verifyWebhookSignature(secret, body.replace('3', '4'), header), false);
    const reformatted = JSON.stringify(JSON.parse(body) as unknown, null, 2);
    assert.equal(verifyWebhookSignature(secret, reformatted, header), false);
    for (const bad of [undefined, '', 'sha256=', 'sha1=abc', header.slice(0, -2), [header]]) {
      assert.equal(verifyWebhookSignature(secret, body, bad), false, JSON.stringify(bad));
    }
  });
});
