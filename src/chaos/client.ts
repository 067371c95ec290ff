/**
 * A client of the cluster that keeps a history: every request is recorded with each attempt.
 * An attempt that ends `unavailable` (UNAVAILABLE, DEADLINE_EXCEEDED, a connection error, a
 * 503, a timeout) is retried with the same request id on the next node, until an answer or
 * the give-up time; any other answer is final.
 */
import { createHmac } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { GrpcForwarder } from '../edge/grpc/room-service.js';
import type { MeetingMethod } from '../meeting/api/commands.js';
import type { RpcName } from '../voice-room/api/commands.js';
import { AppError } from '../shared/errors.js';
import {
  ADMIN_TOKEN,
  APP,
  GRPC_TOKEN,
  TRTC_KEY,
  TRTC_SDK_APP_ID,
  type ChaosNode,
} from './cluster.js';
import { isFinal, type Answer, type Api, type History, type RequestRecord } from './history.js';
import type { Prng } from './prng.js';

/** One attempt's deadline: a node that does not answer by then is left for another. */
export const ATTEMPT_TIMEOUT_MS = 1_000;
/** A request still unanswered after this long is given up (its outcome stays unknown). */
const GIVE_UP_MS = 30_000;
const RETRY_PAUSE_MS = 50;

export interface ClientContext {
  readonly nodes: readonly ChaosNode[];
  readonly history: History;
  readonly grpc: GrpcForwarder;
  /** False once the run is over: loops stop, requests in flight still finish. */
  running: () => boolean;
}

export function newGrpcClient(): GrpcForwarder {
  return new GrpcForwarder({
    token: GRPC_TOKEN,
    tls: null,
    timeoutMs: ATTEMPT_TIMEOUT_MS,
    markForwarded: false,
  });
}

function errorAnswer(error: unknown): Answer {
  if (error instanceof AppError) return { ok: false, kind: error.kind, code: error.code };
  return { ok: false, kind: 'unavailable', code: 'TRANSPORT' };
}

/** A REST envelope (or its absence) → an answer. */
async function restAnswer(res: Response): Promise<Answer> {
  const body = (await res.json().catch(() => null)) as {
    code?: number;
    reason?: string;
    data?: Record<string, unknown>;
  } | null;
  if (res.status >= 500 || body === null) {
    return { ok: false, kind: 'unavailable', code: body?.reason ?? `HTTP_${res.status}` };
  }
  if (res.ok && body.code === 0) return { ok: true, reply: body.data ?? {} };
  return { ok: false, kind: `http_${res.status}`, code: body.reason ?? `HTTP_${res.status}` };
}

/** A request's record and its final answer (null: given up, outcome unknown). */
export interface Sent {
  readonly record: RequestRecord;
  readonly answer: Answer | null;
}

export class ChaosClient {
  constructor(
    readonly name: string,
    private readonly ctx: ClientContext,
    private readonly prng: Prng,
  ) {}

  voice(method: RpcName, room: string | null, body: Record<string, unknown>): Promise<Sent> {
    const requestId = String(body.request_id);
    const record = this.#record('voice', method, room, requestId, requestId, body);
    return this.#send(record, (node) =>
      this.ctx.grpc
        .call(node.grpc, method, { app_code: APP, ...body })
        .then(
          (reply): Answer => ({ ok: true, reply: reply as Record<string, unknown> }),
          errorAnswer,
        ),
    );
  }

  meeting(
    method: MeetingMethod,
    callerId: string,
    roomCode: string | null,
    body: Record<string, unknown>,
  ): Promise<Sent> {
    const requestId = String(body.request_id);
    const record = this.#record(
      'meeting',
      method,
      roomCode,
      requestId,
      `${callerId}:${requestId}`,
      {
        caller_id: callerId,
        ...body,
      },
    );
    const send = (node: ChaosNode): Promise<Answer> =>
      this.ctx.grpc
        .callMeeting(node.grpc, method, {
          app_code: APP,
          caller_id: callerId,
          ...(record.room ? { room_code: record.room } : {}),
          ...body,
        })
        .then(
          (reply): Answer => ({ ok: true, reply: reply as Record<string, unknown> }),
          errorAnswer,
        );
    return this.#send(record, send);
  }

  topUp(userId: string, amount: number, requestId: string): Promise<Sent> {
    // The admin body takes the account id as a JSON number (src/shared/user-id.ts).
    const body = { app_code: APP, user_id: Number(userId), amount, request_id: requestId };
    const record = this.#record('topup', 'TopUp', null, requestId, requestId, body);
    return this.#send(record, (node) =>
      this.#http(node, '/api/v1/admin/wallets/topup', JSON.stringify(body), {
        'x-admin-token': ADMIN_TOKEN,
      }),
    );
  }

  /** A TRTC callback (104 exit, 203 audio start, 204 audio stop), signed. */
  rtc(
    eventType: 104 | 203 | 204,
    roomId: string,
    userId: string,
    eventMsTs: number,
    uniqueId: string,
  ): Promise<Sent> {
    const payload = {
      EventGroupId: eventType === 104 ? 1 : 2,
      EventType: eventType,
      CallbackTs: Date.now(),
      EventInfo: { RoomId: roomId, UserId: userId, EventMsTs: eventMsTs, UniqueId: uniqueId },
    };
    const raw = JSON.stringify(payload);
    const requestId = `trtc:${TRTC_SDK_APP_ID}:${uniqueId}`;
    const record = this.#record('rtc', String(eventType), roomId, uniqueId, requestId, payload);
    const sign = createHmac('sha256', TRTC_KEY).update(raw).digest('base64');
    return this.#send(record, (node) =>
      this.#http(node, '/api/v1/rtc/trtc/callback', raw, { sdkappid: TRTC_SDK_APP_ID, sign }),
    );
  }

  /** Sends a request that had its answer once more, to another node, as a lost reply would. */
  async resend(record: RequestRecord): Promise<void> {
    const last = record.attempts.at(-1);
    const others = this.ctx.nodes.filter((n) => n.name !== last?.node);
    await this.#attempt(record, this.prng.pick(others), true);
  }

  #record(
    api: Api,
    method: string,
    room: string | null,
    requestId: string,
    logRequestId: string,
    body: Record<string, unknown>,
  ): RequestRecord {
    return this.ctx.history.add({
      client: this.name,
      api,
      method,
      app: APP,
      room,
      requestId,
      logRequestId,
      body,
    });
  }

  readonly #senders = new WeakMap<RequestRecord, (node: ChaosNode) => Promise<Answer>>();

  async #send(record: RequestRecord, send: (node: ChaosNode) => Promise<Answer>): Promise<Sent> {
    this.#senders.set(record, send);
    const giveUpAt = Date.now() + GIVE_UP_MS;
    let index = this.prng.int(0, this.ctx.nodes.length - 1);
    for (;;) {
      const answer = await this.#attempt(record, this.ctx.nodes[index]!, false);
      if (isFinal(answer)) return { record, answer };
      if (Date.now() >= giveUpAt) return { record, answer: null };
      index = (index + 1) % this.ctx.nodes.length;
      await sleep(RETRY_PAUSE_MS);
    }
  }

  async #attempt(record: RequestRecord, node: ChaosNode, resend: boolean): Promise<Answer> {
    const send = this.#senders.get(record)!;
    const startedAtMs = Date.now();
    const answer = await send(node);
    record.attempts.push({ node: node.name, startedAtMs, endedAtMs: Date.now(), answer, resend });
    return answer;
  }

  async #http(
    node: ChaosNode,
    path: string,
    body: string,
    headers: Record<string, string>,
  ): Promise<Answer> {
    try {
      const res = await fetch(`${node.http}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...headers },
        body,
        signal: AbortSignal.timeout(ATTEMPT_TIMEOUT_MS),
      });
      return await restAnswer(res);
    } catch {
      return { ok: false, kind: 'unavailable', code: 'TRANSPORT' };
    }
  }
}
