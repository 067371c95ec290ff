/**
 * Every ioredis client of a node is made here. Each gets an `error` listener: without one,
 * ioredis prints "Unhandled error event" and a stack to stderr for every failed reconnect
 * attempt, several a second for as long as Redis is down. Instead the client logs one
 * structured line per change of its connection's state — connected, error (the first of an
 * outage), reconnecting, ready again (with how many attempts failed and for how long) —
 * never one per retry. Commands sent meanwhile still fail to their callers
 * (`maxRetriesPerRequest`), which answer `unavailable`.
 */
import { Redis, type RedisOptions } from 'ioredis';
import type { Logger } from 'pino';

/** A client of `url`, logging its connection's state changes as `role` (e.g. `bus-subscriber`). */
export function createRedisClient(
  url: string,
  options: RedisOptions,
  logger: Logger,
  role: string,
): Redis {
  const redis = new Redis(url, options);
  watchConnection(redis, logger.child({ module: 'redis', role }));
  return redis;
}

type ConnectionState = 'connecting' | 'ready' | 'failing' | 'reconnecting' | 'closed';

/** Logs `redis`'s state changes on `logger`, once each (see the module's comment). */
export function watchConnection(redis: Redis, logger: Logger): void {
  let state: ConnectionState = 'connecting';
  let failedAttempts = 0;
  let downSinceMs = 0;
  const goingDown = () => {
    if (state === 'ready' || state === 'connecting') downSinceMs = Date.now();
  };
  redis.on('ready', () => {
    if (state === 'connecting') logger.info('redis connected');
    else if (state !== 'ready') {
      logger.info(
        { failedAttempts, downMs: Date.now() - downSinceMs },
        'redis connection ready again',
      );
    }
    state = 'ready';
    failedAttempts = 0;
  });
  redis.on('error', (err: Error) => {
    failedAttempts += 1;
    if (state === 'failing' || state === 'reconnecting' || state === 'closed') return;
    goingDown();
    state = 'failing';
    logger.warn({ err }, 'redis connection error');
  });
  redis.on('reconnecting', (delayMs: number) => {
    if (state === 'reconnecting' || state === 'closed') return;
    // Also after a clean close by the server (no error first), e.g. on its shutdown.
    goingDown();
    state = 'reconnecting';
    logger.warn({ delayMs }, 'redis reconnecting');
  });
  redis.on('end', () => {
    if (state === 'closed') return;
    state = 'closed';
    logger.info('redis connection closed');
  });
}
