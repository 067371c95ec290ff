/** Wires the accounts service: users in SQL, bcrypt off the event loop, JWTs, login limits. */
import { LoginThrottle } from '../accounts/login-throttle.js';
import { BcryptPasswordHasher } from '../accounts/password.js';
import { AccountsService } from '../accounts/service.js';
import { JwtTokens } from '../accounts/tokens.js';
import { SqlUserRepository } from '../accounts/user-repository.js';
import type { SqlBackend } from '../adapters/sql/database.js';
import { systemClock } from '../shared/clock.js';
import type { RateLimiter } from '../shared/rate-limiter.js';
import { WorkGate } from '../shared/work-gate.js';
import type { Config } from './config.js';

export function wireAccounts(
  config: Config,
  sql: SqlBackend,
  limiter: RateLimiter,
  jwtSecret: string,
): AccountsService {
  const { accounts } = config;
  const failures = (limit: number) => ({ limit, windowMs: accounts.loginFailureWindowMs });
  return new AccountsService({
    users: new SqlUserRepository(sql.db),
    passwords: new BcryptPasswordHasher(accounts.bcryptCost),
    tokens: new JwtTokens({ secret: jwtSecret, ttlS: accounts.jwtTtlS, clock: systemClock }),
    clock: systemClock,
    hashing: new WorkGate(accounts.hashConcurrency, accounts.hashMaxQueue),
    throttle: new LoginThrottle(limiter, {
      perAccount: failures(accounts.loginFailuresPerAccount),
      perAddress: failures(accounts.loginFailuresPerAddress),
    }),
    lookups: {
      limiter,
      rule: { limit: config.quotas.userLookupLimit, windowMs: config.quotas.userLookupWindowMs },
    },
  });
}
