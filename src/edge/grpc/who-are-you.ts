/**
 * `WhoAreYou`: which instance answers on an address. A cells node calls its own advertise
 * address with it once its gRPC server listens: `room:node:{node_id}` must name this
 * instance's private address, not a load balancer's (forwarded calls would land on any node
 * and trip the recursion guard) nor another node's.
 */
import type { Client, Metadata, ServerUnaryCall, ServiceError, sendUnaryData } from '@grpc/grpc-js';
import { ConfigError } from '../../shared/env.js';
import { roomServiceClient } from './room-service.js';
import { authorizedMetadata, channelCredentials, type GrpcSecurity } from './security.js';

export const WHO_ARE_YOU = 'WhoAreYou';

/** The answering instance: its node id, and a random id of its process start. */
export interface InstanceIdentity {
  readonly node_id: string;
  readonly instance_id: string;
}

/** The server's handler (behind the cluster-token interceptor like every method). */
export function whoAreYouHandler(identity: InstanceIdentity) {
  return (_call: ServerUnaryCall<unknown, unknown>, callback: sendUnaryData<InstanceIdentity>) =>
    callback(null, identity);
}

/**
 * Why the advertise check refused the start; the message names the address and who answered.
 * A configuration error: the process exits 2 like on a bad variable.
 */
export class AdvertiseAddressError extends ConfigError {
  override name = 'AdvertiseAddressError';
}

/**
 * Asks `addr` who it is `attempts` times, each on a fresh channel (a load balancer picks a
 * backend per connection, so one lucky answer from this very node proves little), within
 * `timeoutMs` each. Resolves when every answer is this instance; rejects with an
 * {@link AdvertiseAddressError} otherwise.
 */
export async function checkAdvertiseAddress(
  addr: string,
  self: InstanceIdentity,
  security: GrpcSecurity,
  options: { readonly timeoutMs: number; readonly attempts?: number },
): Promise<void> {
  const Ctor = roomServiceClient();
  for (let i = 0; i < (options.attempts ?? 3); i++) {
    // A distinct channel option keeps grpc-js from reusing the previous attempt's connection.
    const client = new Ctor(addr, channelCredentials(security.tls), {
      'grpc.channel_id': `advertise-check-${self.instance_id}-${i}`,
    });
    try {
      const answer = await ask(client, addr, authorizedMetadata(security.token), options.timeoutMs);
      if (answer.node_id !== self.node_id) {
        throw new AdvertiseAddressError(
          `ROOMS_ADVERTISE_ADDR ${addr} is answered by node ${JSON.stringify(answer.node_id)}, ` +
            `not by this node ${JSON.stringify(self.node_id)}: it must be this instance's own ` +
            'private address, not a load balancer or another node',
        );
      }
      if (answer.instance_id !== self.instance_id) {
        throw new AdvertiseAddressError(
          `ROOMS_ADVERTISE_ADDR ${addr} is answered by another process with the same node id ` +
            `${JSON.stringify(self.node_id)}: node ids must be unique in a cluster`,
        );
      }
    } finally {
      client.close();
    }
  }
}

type UnaryMethod = (
  request: object,
  metadata: Metadata,
  options: { deadline: number },
  callback: (err: ServiceError | null, reply: InstanceIdentity) => void,
) => void;

function ask(
  client: Client,
  addr: string,
  metadata: Metadata,
  timeoutMs: number,
): Promise<InstanceIdentity> {
  const method = (client as unknown as Record<string, UnaryMethod>)[WHO_ARE_YOU]!;
  return new Promise((resolve, reject) => {
    method.call(client, {}, metadata, { deadline: Date.now() + timeoutMs }, (err, reply) => {
      if (!err) return resolve(reply);
      reject(
        new AdvertiseAddressError(
          `ROOMS_ADVERTISE_ADDR ${addr} did not answer as this node ` +
            `within ${timeoutMs} ms (${err.details || err.message}): it must be this ` +
            "instance's own address, reachable with the cluster's gRPC credential",
        ),
      );
    });
  });
}
