/**
 * The TURN servers a client's transports may relay through, with time-limited credentials
 * made from a secret shared with the TURN server: the "TURN REST API" scheme that coturn's
 * `use-auth-secret` / `static-auth-secret` checks (and LiveKit, Jitsi and the cloud kits hand
 * out the same way). The username is `<expiry unix seconds>:<user id>`, the credential
 * base64(HMAC-SHA1(secret, username)); the TURN server recomputes it and refuses an expired
 * one, so nothing is stored and a leaked credential dies by itself.
 */
import { createHmac } from 'node:crypto';

/** What WebRTC's RTCIceServer takes (mediasoup-client passes it to the peer connection). */
export interface IceServer {
  readonly urls: readonly string[];
  readonly username: string;
  readonly credential: string;
}

export interface TurnSettings {
  /** `turn:` / `turns:` URLs (`?transport=udp|tcp`), all served with the same secret. */
  readonly urls: readonly string[];
  readonly secret: string;
  /** How long a credential is good for, from the transport's creation. */
  readonly credentialTtlS: number;
}

/** A `turn:` or `turns:` URL as RFC 7065 writes them: host, optional port and transport. */
export const TURN_URL = /^turns?:[^\s:?/@]+(:\d{1,5})?(\?transport=(udp|tcp))?$/;

/**
 * The ICE servers for `userId`'s transport at `nowMs`: empty without TURN settings, else one
 * entry with every URL and a credential that expires `credentialTtlS` later.
 */
export function iceServersFor(
  turn: TurnSettings | null,
  userId: string | number,
  nowMs = Date.now(),
): IceServer[] {
  if (!turn || turn.urls.length === 0) return [];
  const expiry = Math.floor(nowMs / 1_000) + turn.credentialTtlS;
  const username = `${expiry}:${userId}`;
  const credential = createHmac('sha1', turn.secret).update(username).digest('base64');
  return [{ urls: [...turn.urls], username, credential }];
}
