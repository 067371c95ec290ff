/**
 * Password hashing with bcrypt (`@node-rs/bcrypt`, a Rust binding shipped prebuilt inside its
 * npm package). Its async `hash`/`verify` run on libuv's thread pool, never on the event
 * loop: a flood of logins costs CPU, not the node's responsiveness. How many run at once is
 * bounded by the accounts service's {@link WorkGate}. Hashes are standard modular-crypt
 * strings (`$2a$`, `$2b$`, `$2y$`), so those written by earlier versions (bcryptjs) verify.
 */
import { hash as bcryptHash, verify as bcryptVerify } from '@node-rs/bcrypt';

/** Hashes and checks passwords; the accounts service depends on this, not on bcrypt. */
export interface PasswordHasher {
  hash(password: string): Promise<string>;
  verify(password: string, hash: string): Promise<boolean>;
  /**
   * Spends the time of one `verify` without a stored hash, so that a login for an unknown
   * username takes as long as one with a wrong password (no user enumeration by timing).
   */
  burn(password: string): Promise<void>;
}

export class BcryptPasswordHasher implements PasswordHasher {
  #dummy: Promise<string> | undefined;

  /** @param cost bcrypt's log2 work factor (4-31); 10 takes about 50-100 ms per hash. */
  constructor(readonly cost: number) {
    if (!Number.isInteger(cost) || cost < 4 || cost > 31) {
      throw new RangeError(`bcrypt cost must be an integer in 4..31, got ${cost}`);
    }
  }

  hash(password: string): Promise<string> {
    return bcryptHash(password, this.cost);
  }

  async verify(password: string, hash: string): Promise<boolean> {
    try {
      return await bcryptVerify(password, hash);
    } catch {
      return false; // a malformed stored hash matches no password
    }
  }

  async burn(password: string): Promise<void> {
    this.#dummy ??= bcryptHash('echochat-rooms timing equaliser', this.cost);
    await this.verify(password, await this.#dummy);
  }
}
