/**
 * gRPC `room.v1.RoomService`: the server that serves the voice-room API and the client
 * that forwards a call to the room's owner.
 */
import { fileURLToPath } from 'node:url';
import {
  Server,
  loadPackageDefinition,
  type Client,
  type Deadline,
  type Metadata,
  type ServiceClientConstructor,
  type ServiceError,
  type UntypedServiceImplementation,
  type sendUnaryData,
  type ServerUnaryCall,
} from '@grpc/grpc-js';
import { loadSync } from '@grpc/proto-loader';
import type { CallOptions, Forwarder } from '../../voice-room/api/voice-api.js';
import { declarationOf, rpcNames, type RpcName } from '../../voice-room/api/commands.js';
import { meetingCalls, type MeetingMethod } from '../../meeting/api/commands.js';
import type { MeetingApi, MeetingForwarder } from '../../meeting/api/meeting-api.js';
import {
  authorizedMetadata,
  channelCredentials,
  clusterTokenInterceptor,
  serverCredentials,
  type GrpcSecurity,
} from './security.js';
import { FORWARDED_KEY, deadlineExceeded, fromServiceError, toServiceError } from './status.js';
import { errors } from '../../shared/error-codes.js';
import { WHO_ARE_YOU, whoAreYouHandler, type InstanceIdentity } from './who-are-you.js';
import {
  FORWARD,
  FORWARD_BATCHED,
  ForwardStream,
  forwardStreams,
  type ForwardDispatch,
  type OpenStream,
} from './forward-stream.js';

/** What the server needs of VoiceRoomApi: it sends any answer as the method's reply message. */
export interface VoiceCalls {
  call(method: RpcName, request: unknown, options?: CallOptions): Promise<unknown>;
}

const PROTO = fileURLToPath(new URL('../../../proto/room/v1/room_service.proto', import.meta.url));

/** The generated client class (its `service` holds each method's (de)serialisers). */
export function roomServiceClient(): ServiceClientConstructor {
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

/**
 * Both ends of the cluster's channels: channelz (grpc-js' per-call introspection, on by
 * default) is off, since nothing here reads it and it costs on every call.
 */
const GRPC_OPTIONS = { 'grpc.enable_channelz': 0 } as const;

export interface GrpcServerHandle {
  readonly port: number;
  close(): Promise<void>;
}

export interface RoomServiceServerOptions extends GrpcSecurity {
  readonly host: string;
  /** 0 picks a free port. */
  readonly port: number;
  /** Serves `MeetingCall`; absent: it answers UNAVAILABLE. */
  readonly meetings?: Pick<MeetingApi, 'call'>;
  /** What `WhoAreYou` answers (./who-are-you.ts); absent: empty ids, matching no node. */
  readonly identity?: InstanceIdentity;
}

/** The generic meeting RPC, beside the voice-room RPCs of ../../voice-room/api/commands.ts. */
export const MEETING_CALL = 'MeetingCall';

interface MeetingCallMessage {
  readonly method: string;
  readonly request_id: string;
  readonly app_code: string;
  readonly caller_id: string;
  readonly room_code: string;
  readonly body: string;
}

/** A MeetingCall message → the endpoint and its request (as REST would have built it). */
function meetingRequestOf(message: MeetingCallMessage): { method: MeetingMethod; req: unknown } {
  const method = message.method as MeetingMethod;
  if (!Object.hasOwn(meetingCalls, method)) {
    throw errors.INVALID_ARGUMENT(`unknown meeting method ${message.method.slice(0, 64)}`);
  }
  // A meeting command may come without a request id: a REST call that named none, or the
  // WebSocket signalling's notice, forwarded by the edge that took it. It is new each time,
  // as it was there.
  let body: unknown;
  try {
    body = message.body ? JSON.parse(message.body) : {};
  } catch {
    throw errors.INVALID_ARGUMENT('body is not JSON');
  }
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw errors.INVALID_ARGUMENT('body must be a JSON object');
  }
  return {
    method,
    req: {
      ...body,
      app_code: message.app_code,
      caller_id: message.caller_id,
      ...(message.room_code ? { room_code: message.room_code } : {}),
      ...(message.request_id ? { request_id: message.request_id } : {}),
    },
  };
}

/** Epoch milliseconds, or undefined when the caller set no deadline. */
function deadlineMsOf(deadline: Deadline): number | undefined {
  const ms = deadline instanceof Date ? deadline.getTime() : deadline;
  return Number.isFinite(ms) ? ms : undefined;
}

/** A string field of a message, or '' (as protobuf gives an unset string). */
function text(value: unknown): string {
  return typeof value === 'string' ? value : '';
}

function hasRequestId(request: unknown): boolean {
  const id = (request as { request_id?: unknown } | null)?.request_id;
  return typeof id === 'string' && id !== '';
}

/**
 * One call of this service as the owner runs it, for a unary call and for a call on the
 * `Forward` stream alike: a voice-room RPC, or a meeting endpoint (`MeetingCall`).
 */
function dispatcher(
  api: VoiceCalls,
  meetings: Pick<MeetingApi, 'call'> | undefined,
): ForwardDispatch {
  return async (method, request, callOptions) => {
    if (method === MEETING_CALL) {
      if (!meetings) throw errors.NOT_OWNER_NODE('a node without meetings');
      // From the Forward stream the message is JSON: every field must still be a string.
      const m = request as Record<string, unknown>;
      const call = meetingRequestOf({
        method: text(m.method),
        request_id: text(m.request_id),
        app_code: text(m.app_code),
        caller_id: text(m.caller_id),
        room_code: text(m.room_code),
        body: text(m.body),
      });
      const reply = await meetings.call(call.method, call.req, callOptions);
      return { body: JSON.stringify(reply ?? null) };
    }
    if (!(rpcNames as readonly string[]).includes(method)) {
      throw errors.INVALID_ARGUMENT(`unknown method ${method.slice(0, 64)}`);
    }
    const rpc = method as RpcName;
    // Without a request id a retried command would take effect twice.
    if (declarationOf(rpc).kind === 'command' && !hasRequestId(request)) {
      throw errors.INVALID_ARGUMENT('request_id is required');
    }
    return api.call(rpc, request, callOptions);
  };
}

/**
 * Binds the RoomService on host:port. Every call must carry the cluster token (see
 * ./security.ts); with `tls`, also a client certificate signed by the CA.
 */
export async function startRoomServiceServer(
  api: VoiceCalls,
  options: RoomServiceServerOptions,
): Promise<GrpcServerHandle> {
  const server = new Server({
    ...GRPC_OPTIONS,
    interceptors: [clusterTokenInterceptor(options.token)],
  });
  const dispatch = dispatcher(api, options.meetings);
  const implementation: UntypedServiceImplementation = {};
  for (const method of [...rpcNames, MEETING_CALL]) {
    implementation[method] = (
      call: ServerUnaryCall<unknown, unknown>,
      callback: sendUnaryData<unknown>,
    ) => {
      const deadlineMs = deadlineMsOf(call.getDeadline());
      // The caller has given up already: running it now could only surprise them later.
      if (deadlineMs !== undefined && deadlineMs <= Date.now()) {
        callback(toServiceError(deadlineExceeded('the deadline passed before the call ran')));
        return;
      }
      const callOptions: CallOptions = {
        forwarded: call.metadata.get(FORWARDED_KEY)[0] === '1',
        ...(deadlineMs === undefined ? {} : { deadlineMs }),
      };
      dispatch(method, call.request, callOptions).then(
        (reply) => callback(null, reply),
        (error: unknown) => callback(toServiceError(error)),
      );
    };
  }
  const forwarded = forwardStreams(dispatch);
  implementation[FORWARD] = forwarded.handler;
  implementation[FORWARD_BATCHED] = forwarded.batchedHandler;
  implementation[WHO_ARE_YOU] = whoAreYouHandler(
    options.identity ?? { node_id: '', instance_id: '' },
  );
  server.addService(roomServiceClient().service, implementation);
  const bound = await new Promise<number>((resolve, reject) =>
    server.bindAsync(`${options.host}:${options.port}`, serverCredentials(options.tls), (err, p) =>
      err ? reject(err) : resolve(p),
    ),
  );
  let closed: Promise<void> | undefined;
  return {
    port: bound,
    close: () =>
      (closed ??= new Promise<void>((resolve) => {
        // The peers' streams end once their calls in flight are answered.
        forwarded.drain();
        server.tryShutdown(() => resolve());
        // In-flight calls get a moment; then the rest are cut.
        setTimeout(() => server.forceShutdown(), 2_000).unref();
      })),
  };
}

export interface GrpcClientOptions extends GrpcSecurity {
  /** Deadline of a call made without one of its own (default 5 s). */
  readonly timeoutMs?: number;
  /** false: a plain client of the service (tools, tests, benchmarks), not a node forwarding. */
  readonly markForwarded?: boolean;
  /**
   * An edge node (no cells of its own): its calls go on the forward stream as a gateway's, so
   * a cells node that is not the owner (behind a load balancer) forwards them once more, and
   * the answers keep their JSON (a unary reply's protobuf would turn a null into '' or 0).
   */
  readonly gateway?: boolean;
}

/**
 * Forwards to owners over gRPC, one channel per owner address, with the cluster credential and
 * a deadline: the caller's own when it has one, else `timeoutMs` from now.
 */
export class GrpcForwarder implements Forwarder, MeetingForwarder {
  private readonly clients = new Map<string, Client>();
  /** A node's forwarded calls, one stream per owner address (./forward-stream.ts). */
  private readonly streams = new Map<string, ForwardStream>();
  private readonly Ctor = roomServiceClient();

  constructor(private readonly options: GrpcClientOptions) {}

  /** Forwards a meeting endpoint (its request as MeetingApi takes it) as one `MeetingCall`. */
  async callMeeting(
    addr: string,
    method: MeetingMethod,
    request: unknown,
    deadlineMs?: number,
  ): Promise<unknown> {
    const { app_code, caller_id, room_code, request_id, ...body } = request as Record<
      string,
      unknown
    >;
    const reply = (await this.#unary(
      addr,
      MEETING_CALL,
      {
        method,
        request_id: text(request_id),
        app_code: text(app_code),
        caller_id: text(caller_id),
        room_code: text(room_code),
        body: JSON.stringify(body),
      },
      deadlineMs,
    )) as { body: string };
    return JSON.parse(reply.body) as unknown;
  }

  call(addr: string, method: RpcName, request: unknown, deadlineMs?: number): Promise<unknown> {
    return this.#unary(addr, method, request, deadlineMs);
  }

  #unary(addr: string, method: string, request: unknown, deadlineMs?: number): Promise<unknown> {
    const deadline = deadlineMs ?? Date.now() + (this.options.timeoutMs ?? 5_000);
    if (deadline <= Date.now()) {
      return Promise.reject(deadlineExceeded('the deadline passed before the call was forwarded'));
    }
    // A node forwarding, or an edge's call: on the stream. A plain client (a tool, a test): unary.
    if ((this.options.markForwarded ?? true) || this.options.gateway) {
      return this.streamTo(addr).call(method, request, deadline);
    }
    const client = this.clientFor(addr) as unknown as Record<
      string,
      (
        req: unknown,
        md: Metadata,
        opts: { deadline: number },
        cb: (err: ServiceError | null, reply: unknown) => void,
      ) => void
    >;
    const metadata = authorizedMetadata(this.options.token);
    if (this.options.markForwarded ?? true) metadata.set(FORWARDED_KEY, '1');
    return new Promise((resolve, reject) => {
      client[method]!.call(client, request, metadata, { deadline }, (err, reply) =>
        err ? reject(fromServiceError(err)) : resolve(reply),
      );
    });
  }

  close(): void {
    for (const s of this.streams.values()) s.close();
    this.streams.clear();
    for (const c of this.clients.values()) c.close();
    this.clients.clear();
  }

  private streamTo(addr: string): ForwardStream {
    let stream = this.streams.get(addr);
    if (!stream) {
      const client = this.clientFor(addr) as unknown as Record<
        string,
        (md: Metadata) => ReturnType<OpenStream>
      >;
      stream = new ForwardStream(
        addr,
        (method, metadata) => client[method]!.call(client, metadata),
        () => {
          const metadata = authorizedMetadata(this.options.token);
          metadata.set(FORWARDED_KEY, '1');
          return metadata;
        },
        this.options.gateway === true,
      );
      this.streams.set(addr, stream);
    }
    return stream;
  }

  private clientFor(addr: string): Client {
    let client = this.clients.get(addr);
    if (!client) {
      client = new this.Ctor(addr, channelCredentials(this.options.tls), {
        ...GRPC_OPTIONS,
        ...((this.options as { channelOptions?: object }).channelOptions ?? {}),
      });
      this.clients.set(addr, client);
    }
    return client;
  }
}
