/**
 * The `ROOMS_MEDIA_*` variables: as the rooms node reads them (src/main/config.ts), and as the
 * standalone media server reads them (./config.ts, with nothing of the node's).
 */
import assert from 'node:assert/strict';
import { availableParallelism, hostname } from 'node:os';
import { describe, it } from 'node:test';
import { ConfigError, loadConfig } from '../main/config.js';
import { loadMediaServerConfig } from './config.js';

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

const TOKEN = 'standalone-token-0123';

/** Every media server variable with a non-default, valid value. */
const MEDIA_ENV: NodeJS.ProcessEnv = {
  ROOMS_MEDIA_HOST: '10.0.0.5',
  ROOMS_MEDIA_PORT: '7171',
  ROOMS_MEDIA_INTERNAL_TOKEN: TOKEN,
  ROOMS_MEDIA_WORKERS: '3',
  ROOMS_MEDIA_WORKER_BIN: '/opt/mediasoup-worker',
  ROOMS_MEDIA_LISTEN_IP: '0.0.0.0',
  ROOMS_MEDIA_ANNOUNCED_ADDRESS: 'media.example.com',
  ROOMS_MEDIA_RTC_MIN_PORT: '41000',
  ROOMS_MEDIA_RTC_MAX_PORT: '42000',
  ROOMS_MEDIA_WEBRTC_SERVER_PORT: '44440',
  ROOMS_MEDIA_ROUTER_CONSUMERS: '1500',
  ROOMS_MEDIA_EDGE_LINGER_MS: '2500',
  ROOMS_MEDIA_PIPE_LISTEN_IP: '10.0.0.7',
  ROOMS_MEDIA_PIPE_ANNOUNCED_ADDRESS: '203.0.113.7',
  ROOMS_MEDIA_PEER_LOST_MS: '5000',
  ROOMS_NODE_ID: 'media-1',
  ROOMS_LOG_LEVEL: 'warn',
};

function refusesStandalone(env: NodeJS.ProcessEnv, variable: string): void {
  assert.throws(
    () => loadMediaServerConfig(env),
    (error: unknown) =>
      error instanceof ConfigError &&
      error.message.startsWith('invalid configuration:\n') &&
      error.message.includes(`\n  ${variable}: `),
    `expected a ConfigError naming ${variable}`,
  );
}

void describe('standalone media server config', () => {
  void it('reads every media variable', () => {
    assert.deepEqual(loadMediaServerConfig(MEDIA_ENV), {
      nodeId: 'media-1',
      logLevel: 'warn',
      server: {
        host: '10.0.0.5',
        port: 7171,
        internalToken: TOKEN,
        workers: 3,
        workerBin: '/opt/mediasoup-worker',
        listenIp: '0.0.0.0',
        announcedAddress: 'media.example.com',
        rtcMinPort: 41000,
        rtcMaxPort: 42000,
        webRtcServerPort: 44440,
        workerLogLevel: 'warn',
        routerConsumers: 1500,
        edgeLingerMs: 2500,
        pipeListenIp: '10.0.0.7',
        pipeAnnouncedAddress: '203.0.113.7',
        peerLostMs: 5000,
        recordings: { dir: 'data/recordings', ffmpeg: 'ffmpeg', retentionMs: 2_592_000_000 },
      },
      registration: null,
      drainTimeoutMs: 60_000,
    });
  });

  void it('registers in the media directory with ROOMS_MEDIA_REDIS_URL, under its id', () => {
    const config = loadMediaServerConfig({
      ...MEDIA_ENV,
      ROOMS_MEDIA_REDIS_URL: 'redis://redis.internal:6379/2',
      ROOMS_MEDIA_SERVER_ID: 'media-b',
      ROOMS_MEDIA_ADVERTISE_URL: 'http://10.0.0.5:7171',
      ROOMS_MEDIA_REGISTRATION_TTL_MS: '5000',
      ROOMS_KEY_PREFIX: 'prod:',
      ROOMS_MEDIA_DRAIN_TIMEOUT_MS: '0',
    });
    assert.deepEqual(config.registration, {
      id: 'media-b',
      redisUrl: 'redis://redis.internal:6379/2',
      keyPrefix: 'prod:',
      advertiseUrl: 'http://10.0.0.5:7171',
      ttlMs: 5_000,
    });
    assert.equal(config.drainTimeoutMs, 0);
    assert.throws(
      () =>
        loadMediaServerConfig({
          ...MEDIA_ENV,
          ROOMS_MEDIA_REDIS_URL: 'http://x',
          ROOMS_MEDIA_REGISTRATION_TTL_MS: '10',
        }),
      (e: Error) =>
        e.message.includes('ROOMS_MEDIA_REDIS_URL') &&
        e.message.includes('ROOMS_MEDIA_REGISTRATION_TTL_MS'),
    );
  });

  void it('needs only the token; the rest defaults as documented (empty counts as unset)', () => {
    const config = loadMediaServerConfig({
      ROOMS_MEDIA_INTERNAL_TOKEN: TOKEN,
      ROOMS_MEDIA_PORT: '',
      ROOMS_MEDIA_LISTEN_IP: '',
    });
    assert.ok(Object.isFrozen(config.server));
    assert.equal(config.logLevel, 'info');
    assert.equal(
      config.nodeId,
      `${hostname()
        .replace(/[^A-Za-z0-9._-]/g, '-')
        .slice(0, 50)}-7070`,
    );
    assert.deepEqual(config.server, {
      host: '127.0.0.1',
      port: 7070,
      internalToken: TOKEN,
      workers: availableParallelism(),
      workerBin: null,
      listenIp: '127.0.0.1',
      announcedAddress: null,
      rtcMinPort: 40000,
      rtcMaxPort: 49999,
      webRtcServerPort: null,
      workerLogLevel: 'warn',
      routerConsumers: 4000,
      edgeLingerMs: 10000,
      pipeListenIp: null,
      pipeAnnouncedAddress: null,
      peerLostMs: 3000,
      recordings: { dir: 'data/recordings', ffmpeg: 'ffmpeg', retentionMs: 2_592_000_000 },
    });
  });

  void it("ignores the rooms node's variables, even ones the node refuses", () => {
    const env = {
      ...MEDIA_ENV,
      // Cluster mode without ROOMS_JWT_SECRET or ROOMS_GRPC_TOKEN, and values the node rejects.
      ROOMS_DB_URL: 'mysql://rooms:secret@db.internal:3306/rooms',
      ROOMS_REDIS_URL: 'redis://cache.internal:6379',
      ROOMS_HTTP_PORT: 'not-a-port',
      ROOMS_MEDIA_EMBEDDED: 'maybe',
      ROOMS_MEDIA_TIMEOUT_MS: '1',
    };
    assert.throws(() => loadConfig(env), ConfigError, 'the node itself refuses this environment');
    assert.deepEqual(loadMediaServerConfig(env), loadMediaServerConfig(MEDIA_ENV));
  });

  void it('the node reads the same variables into the same settings for its embedded server', () => {
    const { internalToken, ...server } = loadMediaServerConfig(MEDIA_ENV).server;
    const { media } = loadConfig(MEDIA_ENV);
    assert.deepEqual(media.server, server);
    assert.equal(media.internalToken, internalToken);
  });

  void it('refuses a missing or empty ROOMS_MEDIA_INTERNAL_TOKEN', () => {
    refusesStandalone({}, 'ROOMS_MEDIA_INTERNAL_TOKEN');
    refusesStandalone(
      { ...MEDIA_ENV, ROOMS_MEDIA_INTERNAL_TOKEN: '' },
      'ROOMS_MEDIA_INTERNAL_TOKEN',
    );
    // Embedded in a node the token may be unset (made up per start); standalone it may not.
    assert.equal(loadConfig({}).media.internalToken, null);
  });

  void it('refuses bad values, naming the variable', () => {
    const cases: [string, string][] = [
      ['ROOMS_MEDIA_PORT', '70000'],
      ['ROOMS_MEDIA_PORT', 'http'],
      ['ROOMS_MEDIA_INTERNAL_TOKEN', 'short'],
      ['ROOMS_MEDIA_WORKERS', '0'],
      ['ROOMS_MEDIA_WORKERS', '65'],
      ['ROOMS_MEDIA_LISTEN_IP', 'localhost'],
      ['ROOMS_MEDIA_ANNOUNCED_ADDRESS', 'a b'],
      ['ROOMS_MEDIA_RTC_MIN_PORT', '80'],
      ['ROOMS_MEDIA_RTC_MAX_PORT', '70000'],
      ['ROOMS_MEDIA_WEBRTC_SERVER_PORT', '1000'],
      ['ROOMS_LOG_LEVEL', 'loud'],
      ['ROOMS_NODE_ID', 'a b'],
    ];
    for (const [name, value] of cases) refusesStandalone({ ...MEDIA_ENV, [name]: value }, name);
  });

  void it('checks the rules across variables', () => {
    refusesStandalone(
      { ...MEDIA_ENV, ROOMS_MEDIA_RTC_MIN_PORT: '45000', ROOMS_MEDIA_RTC_MAX_PORT: '44000' },
      'ROOMS_MEDIA_RTC_MIN_PORT',
    );
    refusesStandalone(
      { ...MEDIA_ENV, ROOMS_MEDIA_WORKERS: '4', ROOMS_MEDIA_WEBRTC_SERVER_PORT: '65533' },
      'ROOMS_MEDIA_WEBRTC_SERVER_PORT',
    );
    const ok = { ...MEDIA_ENV, ROOMS_MEDIA_WORKERS: '4', ROOMS_MEDIA_WEBRTC_SERVER_PORT: '65532' };
    assert.equal(loadMediaServerConfig(ok).server.webRtcServerPort, 65532);
  });
});
