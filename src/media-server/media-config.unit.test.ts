/** The `ROOMS_MEDIA_*` variables as src/main/config.ts reads them. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ConfigError, loadConfig } from '../main/config.js';

function rejects(env: NodeJS.ProcessEnv, variable: string): void {
  assert.throws(
    () => loadConfig(env),
    (error: unknown) => error instanceof ConfigError && error.message.includes(`${variable}:`),
    `expected a ConfigError naming ${variable}`,
  );
}

void describe('media config', () => {
  void it('defaults to an embedded server on 127.0.0.1:7070, one worker per core', () => {
    const { media } = loadConfig({});
    assert.equal(media.embedded, true);
    assert.equal(media.server.port, 7070);
    assert.equal(media.server.listenIp, '127.0.0.1');
    assert.ok(media.server.workers >= 1);
    assert.equal(media.internalToken, null);
  });

  void it('reads booleans as true/false/1/0', () => {
    assert.equal(
      loadConfig({ ROOMS_MEDIA_EMBEDDED: '0', ROOMS_MEDIA_INTERNAL_TOKEN: 'x'.repeat(16) }).media
        .embedded,
      false,
    );
    assert.equal(loadConfig({ ROOMS_MEDIA_EMBEDDED: '1' }).media.embedded, true);
    rejects({ ROOMS_MEDIA_EMBEDDED: 'yes please' }, 'ROOMS_MEDIA_EMBEDDED');
  });

  void it('strips a trailing slash from ROOMS_MEDIA_URL', () => {
    const env = { ROOMS_MEDIA_URL: 'http://m:1/', ROOMS_MEDIA_INTERNAL_TOKEN: 't'.repeat(16) };
    assert.equal(loadConfig(env).media.url, 'http://m:1');
  });

  void it('refuses bad values, naming the variable', () => {
    const cases: [string, string][] = [
      ['ROOMS_MEDIA_PORT', '70000'],
      ['ROOMS_MEDIA_URL', 'ftp://x'],
      ['ROOMS_MEDIA_URL', 'http://x/path'],
      ['ROOMS_MEDIA_INTERNAL_TOKEN', 'short'],
      ['ROOMS_MEDIA_WORKERS', '0'],
      ['ROOMS_MEDIA_LISTEN_IP', 'localhost'],
      ['ROOMS_MEDIA_ANNOUNCED_ADDRESS', 'a b'],
      ['ROOMS_MEDIA_RTC_MIN_PORT', '80'],
      ['ROOMS_MEDIA_TIMEOUT_MS', '10'],
      ['ROOMS_MEDIA_CLOSE_RETRY', '11'],
    ];
    for (const [name, value] of cases) rejects({ [name]: value }, name);
  });

  void it('checks the rules across variables', () => {
    rejects(
      { ROOMS_MEDIA_RTC_MIN_PORT: '45000', ROOMS_MEDIA_RTC_MAX_PORT: '44000' },
      'ROOMS_MEDIA_RTC_MIN_PORT',
    );
    rejects(
      { ROOMS_MEDIA_WORKERS: '4', ROOMS_MEDIA_WEBRTC_SERVER_PORT: '65533' },
      'ROOMS_MEDIA_WEBRTC_SERVER_PORT',
    );
    // A separate media server is reached by other processes: they must share a token.
    rejects({ ROOMS_MEDIA_EMBEDDED: 'false' }, 'ROOMS_MEDIA_INTERNAL_TOKEN');
    const ok = loadConfig({ ROOMS_MEDIA_WORKERS: '4', ROOMS_MEDIA_WEBRTC_SERVER_PORT: '65532' });
    assert.equal(ok.media.server.webRtcServerPort, 65532);
  });
});
