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

  it('leaves URLs without secrets alone', () => {
    for (const url of ['/healthz', '/api/v1/voice/rooms?limit=5&offset=10', '/ws?', '/a?b']) {
      assert.equal(redactUrl(url), url);
    }
  });
});
