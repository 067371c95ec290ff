/**
 * gRPC `room.v1.RoomService`: the server that serves the voice-room API and the client
 * that forwards a call to the room's owner.
 */
import { fileURLToPath } from 'node:url';
import {
  Metadata,
  Server,
  ServerCredentials,
  credentials,
  loadPackageDefinition,
  type Client,
  type ServiceClientConstructor,
  type ServiceError,
  type UntypedServiceImplementation,
  type sendUnaryData,
  type ServerUnaryCall,
} from '@grpc/grpc-js';
import { loadSync } from '@grpc/proto-loader';
import type { Forwarder, VoiceRoomApi } from '../voice/voice-api.js';
import { rpcNames, type RpcName } from '../voice/requests.js';
import { FORWARDED_KEY, fromServiceError, toServiceError } from './status.js';

const PROTO = fileURLToPath(new URL('../../../proto/room/v1/room_service.proto', import.meta.url));

function roomServiceClient(): ServiceClientConstructor {
  const definition = loadSync(PROTO, {
    keepCase: true, // snake_case on the wire and in JS, as the contract names fields
    longs: Number,
    enums: String,
    defaults: true,
    oneofs: true,
  });
  const pkg = loadPackageDefinition(definition) as unknown as {
    room: { v1: { RoomService: ServiceClientConstructor } };
  };
  return pkg.room.v1.RoomService;
}

export interface GrpcServerHandle {
  readonly port: number;
  close(): Promise<void>;
}

/** Binds the RoomService on host:port (0 picks a free port). */
export async function startRoomServiceServer(
  api: VoiceRoomApi,
  host: string,
  port: number,
): Promise<GrpcServerHandle> {
  const server = new Server();
  const implementation: UntypedServiceImplementation = {};
  for (const method of rpcNames) {
    implementation[method] = (
      call: ServerUnaryCall<unknown, unknown>,
      callback: sendUnaryData<unknown>,
    ) => {
      const forwarded = call.metadata.get(FORWARDED_KEY)[0] === '1';
      api.call(method, call.request, { forwarded }).then(
        (reply) => callback(null, reply),
        (error: unknown) => callback(toServiceError(error)),
      );
    };
  }
  server.addService(roomServiceClient().service, implementation);
  const bound = await new Promise<number>((resolve, reject) =>
    server.bindAsync(`${host}:${port}`, ServerCredentials.createInsecure(), (err, p) =>
      err ? reject(err) : resolve(p),
    ),
  );
  let closed: Promise<void> | undefined;
  return {
    port: bound,
    close: () =>
      (closed ??= new Promise<void>((resolve) => {
        server.tryShutdown(() => resolve());
        // In-flight calls get a moment; then the rest are cut.
        setTimeout(() => server.forceShutdown(), 2_000).unref();
      })),
  };
}

/**
 * Forwards to owners over gRPC, one channel per owner address, with a deadline. With
 * `markForwarded: false` it is a plain client of the service (tools, tests, benchmarks).
 */
export class GrpcForwarder implements Forwarder {
  private readonly clients = new Map<string, Client>();
  private readonly Ctor = roomServiceClient();

  constructor(
    private readonly timeoutMs = 5_000,
    private readonly options: { markForwarded?: boolean } = {},
  ) {}

  call(addr: string, method: RpcName, request: unknown): Promise<unknown> {
    const client = this.clientFor(addr) as unknown as Record<
      string,
      (
        req: unknown,
        md: Metadata,
        opts: { deadline: number },
        cb: (err: ServiceError | null, reply: unknown) => void,
      ) => void
    >;
    const metadata = new Metadata();
    if (this.options.markForwarded ?? true) metadata.set(FORWARDED_KEY, '1');
    return new Promise((resolve, reject) => {
      client[method]!.call(
        client,
        request,
        metadata,
        { deadline: Date.now() + this.timeoutMs },
        (err, reply) => (err ? reject(fromServiceError(err)) : resolve(reply)),
      );
    });
  }

  close(): void {
    for (const c of this.clients.values()) c.close();
    this.clients.clear();
  }

  private clientFor(addr: string): Client {
    let client = this.clients.get(addr);
    if (!client) {
      client = new this.Ctor(addr, credentials.createInsecure());
      this.clients.set(addr, client);
    }
    return client;
  }
}
