import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { redactUrl } from './log-redaction.js';

describe('redactUrl', () => {
  it('replaces the values of token-like query parameters, keeping the rest', () => {
    assert.equal(redactUrl('/ws?token=eyJ.abc.def'), '/ws?token=[redacted]');
    assert.equal(redactUrl('/ws?a=1&token=x&b=2'), '/ws?a=1&token=[redacted]&b=2');
    assert.equal(
      redactUrl('/x?access_token=1&Token=2&t%6Fken=3'),
      '/x?access_token=[redacted]&Token=[redacted]&t%6Fken=[redacted]',
    );
    assert.equal(
      redactUrl('/x?password=p&api_key=k&secret=s'),
      '/x?password=[redacted]&api_key=[redacted]&secret=[redacted]',
    );
    assert.equal(redactUrl('/ws?token'), '/ws?token=[redacted]');
    assert.equal(redactUrl('/ws?token=%zz&x=%'), '/ws?token=[redacted]&x=%');
    assert.equal(redactUrl('/ws?token=a#frag'), '/ws?token=[redacted]');
  });

  it('replaces a meeting invite token in the path, however the path is spelled', () => {
    const token = '0123456789abcdef0123456789abcdef';
    for (const [url, want] of [
      [
        `/api/v1/meeting/invite-tokens/${token}/redeem`,
        '/api/v1/meeting/invite-tokens/[redacted]/redeem',
      ],
      [
        `/api/v1/meeting//Invite-Tokens//${token}/redeem?x=1`,
        '/api/v1/meeting//Invite-Tokens//[redacted]/redeem?x=1',
      ],
      [`/api/v1/meeting/invite-tokens/${token}`, '/api/v1/meeting/invite-tokens/[redacted]'],
      [
        `/api/v1/meeting/invite%2Dtokens/${token}/redeem`,
        '/api/v1/meeting/invite%2Dtokens/[redacted]/redeem',
      ],
      [`/api/v1/meeting/%69nvite-tokens/${token}`, '/api/v1/meeting/%69nvite-tokens/[redacted]'],
    ]) {
      assert.equal(redactUrl(url!), want);
      assert.ok(!redactUrl(url!).includes(token));
    }
  });

  it('leaves URLs without secrets alone', () => {
    for (const url of ['/healthz', '/api/v1/voice/rooms?limit=5&offset=10', '/ws?', '/a?b']) {
      assert.equal(redactUrl(url), url);
    }
  });
});
