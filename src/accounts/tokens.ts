/**
 * Access tokens: HMAC-signed JWTs (`jose`). Stateless: any node holding the same secret
 * verifies a token another node issued, without a database read.
 */
import { webcrypto } from 'node:crypto';
import { errors, jwtVerify, SignJWT } from 'jose';
import type { Clock } from '../shared/clock.js';
import { APP_CODE_PATTERN, USERNAME_PATTERN } from './validation.js';
import { isUserIdText } from '../shared/user-id.js';

/** Who a valid token speaks for. */
export interface AuthIdentity {
  /** The user's numeric id, as a decimal string (the JWT `sub`). */
  readonly userId: string;
  readonly appCode: string;
  readonly username: string;
}

/**
 * Token → identity, for every authenticated REST route and the WebSocket hub. Resolves
 * `null` for a missing, malformed, tampered, expired or foreign token; never rejects for a
 * bad token.
 */
export interface Authenticator {
  authenticate(token: string): Promise<AuthIdentity | null>;
}

export const JWT_ISSUER = 'echochat-rooms';
/** HMAC keys shorter than the hash output weaken HS256; RFC 7518 §3.2 requires 256 bits. */
export const MIN_SECRET_BYTES = 32;
/** Longer input is not one of our tokens; refuse it before parsing. */
const MAX_TOKEN_CHARS = 4096;

export type HmacAlgorithm = 'HS256' | 'HS384' | 'HS512';

export interface TokenOptions {
  /** At least {@link MIN_SECRET_BYTES} bytes in UTF-8. */
  readonly secret: string;
  readonly ttlS: number;
  readonly clock: Clock;
  /** Default HS256. Tokens signed with any other algorithm are refused. */
  readonly algorithm?: HmacAlgorithm;
}

export interface IssuedToken {
  readonly token: string;
  /** Seconds from now until the token expires. */
  readonly expiresIn: number;
}

/** Issues and verifies access tokens with one secret. */
export class JwtTokens implements Authenticator {
  readonly #key: Uint8Array;
  /**
   * The secret imported once as an HMAC key: handed raw bytes, jose imports them again on
   * every sign and verify, a large share of a connect storm's CPU.
   */
  #cryptoKey: Promise<webcrypto.CryptoKey> | null = null;
  readonly #ttlS: number;
  readonly #clock: Clock;
  readonly #algorithm: HmacAlgorithm;

  constructor(options: TokenOptions) {
    this.#key = new TextEncoder().encode(options.secret);
    if (this.#key.byteLength < MIN_SECRET_BYTES) {
      throw new RangeError(`the JWT secret must be at least ${MIN_SECRET_BYTES} bytes`);
    }
    if (!Number.isInteger(options.ttlS) || options.ttlS < 1) {
      throw new RangeError(`the token TTL must be a positive integer, got ${options.ttlS}`);
    }
    this.#ttlS = options.ttlS;
    this.#clock = options.clock;
    this.#algorithm = options.algorithm ?? 'HS256';
  }

  #hmacKey(): Promise<webcrypto.CryptoKey> {
    this.#cryptoKey ??= webcrypto.subtle.importKey(
      'raw',
      this.#key,
      { name: 'HMAC', hash: `SHA-${this.#algorithm.slice(2)}` },
      false,
      ['sign', 'verify'],
    );
    return this.#cryptoKey;
  }

  /** Claims: `sub` (user id), `app_code`, `username`, `iss`, `iat`, `exp`. */
  async issue(identity: AuthIdentity): Promise<IssuedToken> {
    const nowS = Math.floor(this.#clock.nowMs() / 1000);
    const token = await new SignJWT({ app_code: identity.appCode, username: identity.username })
      .setProtectedHeader({ alg: this.#algorithm, typ: 'JWT' })
      .setSubject(identity.userId)
      .setIssuer(JWT_ISSUER)
      .setIssuedAt(nowS)
      .setExpirationTime(nowS + this.#ttlS)
      .sign(await this.#hmacKey());
    return { token, expiresIn: this.#ttlS };
  }

  async authenticate(token: string): Promise<AuthIdentity | null> {
    if (typeof token !== 'string' || token.length === 0 || token.length > MAX_TOKEN_CHARS) {
      return null;
    }
    let payload;
    try {
      ({ payload } = await jwtVerify(token, await this.#hmacKey(), {
        // Only our algorithm: refuses `none` and any algorithm-confusion attempt.
        algorithms: [this.#algorithm],
        issuer: JWT_ISSUER,
        requiredClaims: ['sub', 'iat', 'exp', 'app_code', 'username'],
        currentDate: new Date(this.#clock.nowMs()),
      }));
    } catch (error) {
      if (error instanceof errors.JOSEError) return null;
      throw error;
    }
    const { sub, app_code: appCode, username } = payload;
    if (
      typeof sub !== 'string' ||
      !isUserIdText(sub) ||
      typeof appCode !== 'string' ||
      !APP_CODE_PATTERN.test(appCode) ||
      typeof username !== 'string' ||
      !USERNAME_PATTERN.test(username)
    ) {
      return null;
    }
    return { userId: sub, appCode, username };
  }
}
