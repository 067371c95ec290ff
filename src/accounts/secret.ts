/**
 * Where the JWT secret comes from. Configured: that value. Unset on the embedded backend
 * (SQLite): a random secret generated once and kept in a file beside the database, so tokens
 * survive restarts. Unset on the cluster backend (MySQL): an error, since every node must
 * verify every other node's tokens and a per-node random secret would break that silently.
 */
import { randomBytes } from 'node:crypto';
import { link, mkdir, readFile, stat, unlink, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { Logger } from 'pino';
import type { SqlFlavor } from '../adapters/sql/flavor.js';
import { MIN_SECRET_BYTES } from './tokens.js';

export const SECRET_FILE_NAME = 'jwt-secret';

/** Thrown when the secret cannot be had; the message names `ROOMS_JWT_SECRET`. */
export class JwtSecretError extends Error {
  override name = 'JwtSecretError';
}

export interface SecretSource {
  /** `ROOMS_JWT_SECRET`, or null when unset. */
  readonly configured: string | null;
  readonly flavor: SqlFlavor;
  /** `ROOMS_DB_URL`: for SQLite, the database file the secret file sits beside. */
  readonly dbUrl: string;
  readonly logger?: Logger;
}

export async function resolveJwtSecret(source: SecretSource): Promise<string> {
  if (source.configured !== null) {
    if (Buffer.byteLength(source.configured, 'utf8') < MIN_SECRET_BYTES) {
      throw new JwtSecretError(`ROOMS_JWT_SECRET must be at least ${MIN_SECRET_BYTES} bytes`);
    }
    return source.configured;
  }
  if (source.flavor === 'mysql') {
    throw new JwtSecretError(
      'ROOMS_JWT_SECRET is required with a mysql:// database (cluster mode): every node ' +
        `must sign and verify tokens with the same secret (at least ${MIN_SECRET_BYTES} bytes)`,
    );
  }
  const file = sqliteFileOf(source.dbUrl);
  if (file === ':memory:') {
    // The users die with the in-memory database; so may the tokens.
    source.logger?.info('ROOMS_JWT_SECRET is unset: tokens are signed with a per-process secret');
    return generateSecret();
  }
  return loadOrCreateSecretFile(join(dirname(file), SECRET_FILE_NAME), source.logger);
}

/** The path in a SQLite `ROOMS_DB_URL` (as `openSqlBackend` reads it). */
function sqliteFileOf(url: string): string {
  return url.replace(/^sqlite:(\/\/)?/i, '');
}

function generateSecret(): string {
  return randomBytes(48).toString('base64url'); // 64 characters, 384 random bits
}

/**
 * Reads the secret file, or creates it (mode 0600) if absent. Creation writes a temporary
 * file and hard-links it into place, which fails if the name exists: two processes starting
 * at once both end up with the one secret that won, and no reader ever sees a partial file.
 */
export async function loadOrCreateSecretFile(path: string, logger?: Logger): Promise<string> {
  const existing = await readSecretFile(path, logger);
  if (existing !== null) return existing;

  await mkdir(dirname(path), { recursive: true });
  const temporary = `${path}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  await writeFile(temporary, `${generateSecret()}\n`, { mode: 0o600, flag: 'wx' });
  try {
    await link(temporary, path);
    logger?.info({ path }, 'ROOMS_JWT_SECRET is unset: generated a JWT secret file');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  } finally {
    await unlink(temporary).catch(() => undefined);
  }
  const created = await readSecretFile(path, logger);
  if (created === null) throw new JwtSecretError(`JWT secret file ${path} vanished`);
  return created;
}

async function readSecretFile(path: string, logger?: Logger): Promise<string | null> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw error;
  }
  const secret = text.trim();
  if (Buffer.byteLength(secret, 'utf8') < MIN_SECRET_BYTES) {
    throw new JwtSecretError(
      `JWT secret file ${path} holds fewer than ${MIN_SECRET_BYTES} bytes: delete it to ` +
        'generate a new one (this signs every user out), or set ROOMS_JWT_SECRET',
    );
  }
  if (process.platform !== 'win32' && ((await stat(path)).mode & 0o077) !== 0) {
    logger?.warn({ path }, 'the JWT secret file is readable by other users: chmod 600 it');
  }
  return secret;
}
