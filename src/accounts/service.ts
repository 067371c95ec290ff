/**
 * Accounts: register, log in, and resolve a token to its user. Users belong to an app
 * (`app_code`); usernames are unique per app, case-insensitively.
 */
import type { Clock } from '../shared/clock.js';
import type { RateLimiter, RateRule } from '../shared/rate-limiter.js';
import type { WorkGate } from '../shared/work-gate.js';
import type { LoginAttempt, LoginThrottle } from './login-throttle.js';
import type { PasswordHasher } from './password.js';
import type { AuthIdentity, Authenticator, JwtTokens } from './tokens.js';
import type { UserRecord, UserRepository } from './user-repository.js';
import { parseLoginInput, parseRegisterInput, usernameKey } from './validation.js';
import { errors } from '../shared/error-codes.js';

/** A user as other modules see it (no password hash). */
export interface User {
  readonly id: number;
  readonly appCode: string;
  readonly username: string;
  readonly nickname: string;
  /** Empty when the user has none. */
  readonly avatar: string;
  readonly createdAtMs: number;
}

export interface LoginResult {
  readonly accessToken: string;
  /** Seconds until the token expires. */
  readonly expiresIn: number;
  readonly user: User;
}

export interface AccountsDeps {
  readonly users: UserRepository;
  readonly passwords: PasswordHasher;
  readonly tokens: JwtTokens;
  readonly clock: Clock;
  /** Bounds the hashes in flight (register, login); a full queue answers 503. */
  readonly hashing: WorkGate;
  /** Failed-login limits; null: none (tests of other modules). */
  readonly throttle: LoginThrottle | null;
  /**
   * Ids one user may look up per window (`lookUpUsers`), counted in the shared limiter so a
   * cluster counts them once; absent or limit 0: no limit.
   */
  readonly lookups?: { readonly limiter: RateLimiter; readonly rule: RateRule };
}

/** Who is logging in, as far as the edge knows. */
export interface LoginClient {
  /** The client's IP address (after trusted proxies), or null. */
  readonly address: string | null;
}

/** One message for an unknown username and a wrong password: no account enumeration. */
const INVALID_CREDENTIALS = () => errors.INVALID_CREDENTIALS();

export class AccountsService implements Authenticator {
  constructor(private readonly deps: AccountsDeps) {}

  /**
   * Creates a user in `appCode` (already validated) from a request body.
   * @throws AppError `validation` for a bad body, `conflict` when the username is taken.
   */
  async register(appCode: string, body: unknown): Promise<User> {
    const input = parseRegisterInput(body);
    const record = await this.deps.users.insert({
      appCode,
      username: input.username,
      usernameKey: usernameKey(input.username),
      passwordHash: await this.deps.hashing.run(() => this.deps.passwords.hash(input.password)),
      nickname: input.nickname ?? input.username,
      avatar: input.avatar ?? '',
      nowMs: this.deps.clock.nowMs(),
    });
    if (!record) throw errors.USERNAME_TAKEN();
    return toUser(record);
  }

  /**
   * Checks a username and password in `appCode` and issues an access token.
   * @throws AppError `validation` for a malformed body, `unauthenticated` for a wrong
   * username or password (one message for both), `rate_limited` when the account or the
   * client's address had too many failures (see {@link LoginThrottle}).
   */
  async login(
    appCode: string,
    body: unknown,
    client: LoginClient = { address: null },
  ): Promise<LoginResult> {
    const input = parseLoginInput(body);
    const key = usernameKey(input.username);
    const attempt: LoginAttempt = { appCode, usernameKey: key, address: client.address };
    const { throttle } = this.deps;
    // A locked account or address is refused before it waits for a hashing slot…
    await throttle?.check(attempt);
    const record = await this.deps.users.findByUsernameKey(appCode, key);
    const verified = await this.deps.hashing.run(async () => {
      // …and again once it has one: attempts that queued together cannot all slip past
      // the limit (at most the gate's concurrency can be in flight when it is reached).
      await throttle?.check(attempt);
      if (!record) {
        await this.deps.passwords.burn(input.password);
        return false;
      }
      return this.deps.passwords.verify(input.password, record.passwordHash);
    });
    if (!record || !verified) {
      await throttle?.failed(attempt);
      throw INVALID_CREDENTIALS();
    }
    // Clearing is a courtesy (the window ends anyway): its failure must not fail a login.
    await throttle?.succeeded(attempt).catch(() => undefined);
    const issued = await this.deps.tokens.issue({
      userId: String(record.id),
      appCode: record.appCode,
      username: record.username,
    });
    return { accessToken: issued.token, expiresIn: issued.expiresIn, user: toUser(record) };
  }

  /** Verifies a bearer token without touching the database (see {@link Authenticator}). */
  authenticate(token: string): Promise<AuthIdentity | null> {
    return this.deps.tokens.authenticate(token);
  }

  /**
   * The user a verified identity speaks for, or null when that user no longer exists,
   * including when the id now belongs to someone else (a database recreated under an old
   * secret file restarts its ids).
   */
  async currentUser(identity: AuthIdentity): Promise<User | null> {
    const record = await this.deps.users.findById(identity.appCode, Number(identity.userId));
    if (!record || usernameKey(record.username) !== usernameKey(identity.username)) return null;
    return toUser(record);
  }

  /** A user of `appCode` by id, for other modules (display names, avatars). */
  async getUser(appCode: string, userId: number): Promise<User | null> {
    if (!Number.isSafeInteger(userId) || userId < 1) return null;
    const record = await this.deps.users.findById(appCode, userId);
    return record ? toUser(record) : null;
  }

  /**
   * The users of `appCode` among `ids` (already validated: safe positive integers, at most
   * `MAX_USER_LOOKUP` of them), in the order asked; ids of no user of that app,
   * including users of other apps, are left out.
   */
  /**
   * {@link getUsers} for a user of the app, each distinct id counted against the caller's
   * lookup allowance: listing the app's users a page at a time is slow work.
   * @throws RateLimitedError `USER_LOOKUP_RATE_LIMITED` past it (nothing counted).
   */
  async lookUpUsers(caller: AuthIdentity, ids: readonly number[]): Promise<User[]> {
    const distinct = [...new Set(ids)];
    await this.#countLookups(caller, distinct.length);
    return this.getUsers(caller.appCode, distinct);
  }

  /**
   * Users of the caller's app whose username or nickname starts with `prefix` (an invite
   * box's suggestions), by username, at most `limit`. Each search counts `limit` users
   * against the caller's lookup allowance, so the app's users are no faster to list this way.
   * @throws RateLimitedError `USER_LOOKUP_RATE_LIMITED` past it (nothing counted).
   */
  async searchUsers(caller: AuthIdentity, prefix: string, limit: number): Promise<User[]> {
    await this.#countLookups(caller, limit);
    const records = await this.deps.users.searchByPrefix(caller.appCode, prefix, limit);
    return records.map(toUser);
  }

  async #countLookups(caller: AuthIdentity, count: number): Promise<void> {
    const lookups = this.deps.lookups;
    if (!lookups || lookups.rule.limit <= 0 || count <= 0) return;
    const key = `users:lookup:${caller.appCode}:${caller.userId}`;
    const state = await lookups.limiter.hit(key, lookups.rule.windowMs, count);
    if (state.count > lookups.rule.limit) {
      await lookups.limiter.undo(key, count);
      const seconds = Math.max(1, Math.ceil(state.resetInMs / 1000));
      throw errors.USER_LOOKUP_RATE_LIMITED.after(state.resetInMs, seconds);
    }
  }

  async getUsers(appCode: string, ids: readonly number[]): Promise<User[]> {
    const records = await this.deps.users.findByIds(appCode, [...new Set(ids)]);
    const byId = new Map(records.map((r) => [r.id, r]));
    return [...new Set(ids)].flatMap((id) => {
      const record = byId.get(id);
      return record ? [toUser(record)] : [];
    });
  }
}

function toUser(record: UserRecord): User {
  return {
    id: record.id,
    appCode: record.appCode,
    username: record.username,
    nickname: record.nickname,
    avatar: record.avatar,
    createdAtMs: record.createdAtMs,
  };
}
