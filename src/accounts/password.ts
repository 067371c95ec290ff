/** Password hashing with bcrypt (the pure-JS `bcryptjs`: no native build). */
import bcrypt from 'bcryptjs';

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
    return bcrypt.hash(password, this.cost);
  }

  verify(password: string, hash: string): Promise<boolean> {
    return bcrypt.compare(password, hash);
  }

  async burn(password: string): Promise<void> {
    this.#dummy ??= bcrypt.hash('echochat-rooms timing equaliser', this.cost);
    await bcrypt.compare(password, await this.#dummy);
  }
}
