/**
 * Keeps credentials out of the HTTP logs. Browsers cannot set headers on a WebSocket, so the
 * access token travels in the URL (`/ws?token=…`); every URL a log line carries goes through
 * {@link redactUrl}; so does a meeting invite token, which is a path segment
 * (`/api/v1/meeting/invite-tokens/{token}/redeem`). Fastify logs the request (`req`) of each incoming request, also of one
 * that is not a WebSocket upgrade (a plain GET of `/ws?token=…` is a 404 like any other).
 */
import type { FastifyRequest } from 'fastify';
import { stdSerializers } from 'pino';

/** Query parameters whose values are never logged. */
const SECRET_PARAM = /token|secret|password|passwd|signature|api[-_]?key/i;
export const REDACTED = '[redacted]';

/**
 * The URL (path and query, as received) with the value of every secret-looking query
 * parameter replaced by `[redacted]`; the rest is kept byte for byte, malformed escapes too.
 */
export function redactUrl(url: string): string {
  return redactQuery(redactPath(url));
}

/**
 * Path segments that are secrets: the one after `invite-tokens`, however it is spelled
 * (`invite%2Dtokens` routes too, and a URL is logged as received).
 */
function redactPath(url: string): string {
  const q = url.search(/[?#]/);
  const path = q < 0 ? url : url.slice(0, q);
  const segments = path.split('/');
  let secretNext = false;
  for (let i = 0; i < segments.length; i++) {
    const segment = segments[i]!;
    if (segment === '') continue;
    if (secretNext) {
      segments[i] = REDACTED;
      secretNext = false;
      continue;
    }
    let name = segment;
    try {
      name = decodeURIComponent(segment);
    } catch {
      // a malformed escape: judge the raw segment
    }
    secretNext = name.toLowerCase() === 'invite-tokens';
  }
  const redacted = segments.join('/');
  return q < 0 ? redacted : redacted + url.slice(q);
}

function redactQuery(url: string): string {
  const q = url.indexOf('?');
  if (q < 0) return url;
  const hash = url.indexOf('#', q);
  const query = url.slice(q + 1, hash < 0 ? undefined : hash);
  const redacted = query
    .split('&')
    .map((pair) => {
      const eq = pair.indexOf('=');
      const rawName = eq < 0 ? pair : pair.slice(0, eq);
      let name = rawName;
      try {
        name = decodeURIComponent(rawName.replace(/\+/g, ' '));
      } catch {
        // a malformed escape: judge the raw name
      }
      return SECRET_PARAM.test(name) ? `${rawName}=${REDACTED}` : pair;
    })
    .join('&');
  return `${url.slice(0, q)}?${redacted}`;
}

/**
 * pino serializers for the HTTP logger: `req` as Fastify logs it, with the URL redacted;
 * `err` without `rawPacket` (Node's parser errors carry the raw request bytes, URL included).
 */
export const httpLogSerializers = {
  req(request: FastifyRequest) {
    return {
      method: request.method,
      url: redactUrl(request.url),
      host: request.host,
      remoteAddress: request.ip,
      remotePort: request.socket?.remotePort,
    };
  },
  err(error: Error) {
    const serialized = stdSerializers.err(error) as unknown as Record<string, unknown>;
    if (serialized && typeof serialized === 'object' && 'rawPacket' in serialized) {
      delete serialized.rawPacket;
    }
    return serialized;
  },
};
