/**
 * Who may call `room.v1.RoomService`: holders of the cluster credential (gateways, back ends
 * and the other nodes), optionally over mutual TLS. Users never call it directly; they use
 * REST and WebSocket with their JWT.
 */
import {
  Metadata,
  ServerCredentials,
  ServerInterceptingCall,
  credentials,
  status,
  type ChannelCredentials,
  type ServerInterceptor,
} from '@grpc/grpc-js';
import { secretEquals } from '../../shared/secrets.js';
import { REASON_KEY } from './status.js';

export const AUTHORIZATION_KEY = 'authorization';

/** PEM contents for mutual TLS: this side's certificate chain and key, and the cluster's CA. */
export interface GrpcTls {
  readonly cert: Buffer;
  readonly key: Buffer;
  readonly ca: Buffer;
}

export interface GrpcSecurity {
  /** The cluster credential, sent as `authorization: Bearer <token>` on every call. */
  readonly token: string;
  /** Null: plaintext. Otherwise the server requires client certificates signed by `ca`. */
  readonly tls: GrpcTls | null;
}

/** The bearer token of `authorization`, or null (missing, repeated, other scheme). */
function bearerOf(metadata: Metadata): string | null {
  const values = metadata.get(AUTHORIZATION_KEY);
  if (values.length !== 1 || typeof values[0] !== 'string') return null;
  const match = /^Bearer (.*)$/i.exec(values[0]);
  return match ? match[1]! : null;
}

/**
 * Refuses, with UNAUTHENTICATED, every call whose metadata lacks the token. It answers before
 * the metadata is passed on, so the method's handler never runs; the credential is removed
 * from the metadata the handler sees.
 */
export function clusterTokenInterceptor(token: string): ServerInterceptor {
  return (_method, call) =>
    new ServerInterceptingCall(call, {
      start: (next) =>
        next({
          onReceiveMetadata: (metadata, passOn) => {
            if (!secretEquals(bearerOf(metadata), token)) {
              const trailers = new Metadata();
              trailers.set(REASON_KEY, 'UNAUTHENTICATED');
              call.sendStatus({
                code: status.UNAUTHENTICATED,
                details: 'the cluster credential is required (authorization: Bearer <token>)',
                metadata: trailers,
              });
              return;
            }
            metadata.remove(AUTHORIZATION_KEY);
            passOn(metadata);
          },
        }),
    });
}

export function serverCredentials(tls: GrpcTls | null): ServerCredentials {
  if (!tls) return ServerCredentials.createInsecure();
  // true: a client without a certificate signed by the CA is refused in the handshake.
  return ServerCredentials.createSsl(
    tls.ca,
    [{ cert_chain: tls.cert, private_key: tls.key }],
    true,
  );
}

export function channelCredentials(tls: GrpcTls | null): ChannelCredentials {
  return tls ? credentials.createSsl(tls.ca, tls.key, tls.cert) : credentials.createInsecure();
}

/** Metadata with the credential, for every outgoing call. */
export function authorizedMetadata(token: string): Metadata {
  const metadata = new Metadata();
  metadata.set(AUTHORIZATION_KEY, `Bearer ${token}`);
  return metadata;
}
