/**
 * `X-Admin-Token`, the one check in front of every operator route set (wallets and gifts,
 * the outbox and webhooks, cell inspection, node drain), against `config.admin.token`.
 */
import type { onRequestHookHandler } from 'fastify';
import { errors } from '../../shared/error-codes.js';
import { secretEquals } from '../../shared/secrets.js';

/**
 * An `onRequest` hook refusing every request that does not present exactly `token` with 401
 * BAD_ADMIN_TOKEN (compared in constant time; a null token refuses all). It runs before the
 * body is read, so a caller without the token learns nothing from how its body is parsed.
 */
export function requireAdminToken(token: string | null): onRequestHookHandler {
  return (request, _reply, done) => {
    if (!secretEquals(request.headers['x-admin-token'], token)) {
      done(errors.BAD_ADMIN_TOKEN());
      return;
    }
    done();
  };
}
