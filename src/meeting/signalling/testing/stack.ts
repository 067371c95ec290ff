/**
 * Test-only: the meeting signalling on the real `/ws` hub of a real HTTP server, a real
 * media server (mediasoup), the in-process bus and publisher, in-memory media records, and
 * a FAKE meeting membership the test controls (the meeting cell is not this layer's).
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { HttpMediaOrchestrator } from '../../../adapters/media/http-media-orchestrator.js';
import { MemoryRealtimeBus } from '../../../adapters/memory/memory-bus.js';
import { MemoryRoomMediaState } from '../../../adapters/memory/memory-meeting-media.js';
import { silentLogger } from '../../../cell/testing/harness.js';
import { refuse } from '../../domain/errors.js';
import type { MediaServer } from '../../../media-server/server.js';
import { mediaRoomOf, singleMediaServer } from '../../../media-cluster/media-servers.js';
import type { MediaOrchestrator } from '../../../media-cluster/media-orchestrator.js';
import { TEST_TOKEN } from '../../../media-server/testing/harness.js';
import { RealtimePublisher } from '../../../realtime/publisher.js';
import { AppError } from '../../../shared/errors.js';
import { WsHub } from '../../../edge/ws/hub.js';
import { TestClient, testTokens } from '../../../edge/ws/testing/ws-client.js';
import type { MediaCaps } from '../../../edge/room-media/media-admission.js';
import type { MeetingMember, MeetingMembership, MemberStateChange } from '../ports.js';
import { MeetingSignalling } from '../signalling.js';

/** Meetings by room code: the host and the active participants. */
export class FakeMembership implements MeetingMembership {
  readonly meetings = new Map<string, { host: string; active: Set<string> }>();
  readonly calls: {
    op: string;
    roomCode: string;
    userId: string;
    nodeId?: string;
    change?: MemberStateChange;
  }[] = [];
  /** What happened when, for ordering checks: `live`, `gone` and `gone done` per call. */
  readonly timeline: string[] = [];
  /** How long a socketsGone takes to answer (a slow owner). */
  goneDelayMs = 0;

  add(roomCode: string, host: string, ...others: string[]): void {
    this.addInApp('default', roomCode, host, ...others);
  }

  /** A meeting of the app (default `default`), as the fake holds it. */
  meeting(roomCode: string, appCode = 'default') {
    return this.meetings.get(`${appCode}\n${roomCode}`);
  }

  remove(roomCode: string, appCode = 'default'): void {
    this.meetings.delete(`${appCode}\n${roomCode}`);
  }

  /** A meeting of another app (room codes are unique per app only). */
  addInApp(appCode: string, roomCode: string, host: string, ...others: string[]): void {
    this.meetings.set(`${appCode}\n${roomCode}`, { host, active: new Set([host, ...others]) });
  }

  member(appCode: string, roomCode: string, userId: string): Promise<MeetingMember> {
    const meeting = this.meetings.get(`${appCode}\n${roomCode}`);
    if (!meeting) return Promise.reject(AppError.from(refuse('MEETING_NOT_FOUND')));
    if (!meeting.active.has(userId)) return Promise.reject(AppError.from(refuse('NOT_IN_MEETING')));
    return Promise.resolve({
      isHost: meeting.host === userId,
      mediaServer: TEST_MEDIA_SERVER,
      audioHeld: false,
      screenSharer: null,
    });
  }

  /** Screen sharing is the meeting cell's (tested on a real node): anyone may here. */
  startScreenShare(): Promise<void> {
    return Promise.resolve();
  }

  stopScreenShare(): Promise<void> {
    return Promise.resolve();
  }

  socketLive(_appCode: string, roomCode: string, userId: string, nodeId: string): Promise<void> {
    this.calls.push({ op: 'socketLive', roomCode, userId, nodeId });
    this.timeline.push(`live ${userId}`);
    return Promise.resolve();
  }

  async socketsGone(
    _appCode: string,
    roomCode: string,
    userId: string,
    nodeId: string,
  ): Promise<void> {
    this.calls.push({ op: 'socketsGone', roomCode, userId, nodeId });
    this.timeline.push(`gone ${userId}`);
    if (this.goneDelayMs > 0) await new Promise((r) => setTimeout(r, this.goneDelayMs));
    this.timeline.push(`gone done ${userId}`);
  }

  /** Decides like the meeting cell: another member's state needs the host. */
  changeState(
    _appCode: string,
    roomCode: string,
    actorId: string,
    change: MemberStateChange,
  ): Promise<void> {
    const meeting = this.meetings.get(`default\n${roomCode}`);
    const target = change.target_user_id ?? actorId;
    if (target !== actorId && meeting?.host !== actorId) {
      return Promise.reject(AppError.from(refuse('HOST_ONLY_WS')));
    }
    this.calls.push({ op: 'changeState', roomCode, userId: actorId, change });
    return Promise.resolve();
  }

  ops(op: string, userId?: string): string[] {
    return this.calls
      .filter((c) => c.op === op && (userId === undefined || c.userId === userId))
      .map((c) => c.roomCode);
  }
}

export interface Stack {
  readonly membership: FakeMembership;
  readonly state: MemoryRoomMediaState;
  readonly media: HttpMediaOrchestrator;
  readonly signalling: MeetingSignalling;
  readonly hub: WsHub;
  /** A socket of the user in the app (default `default`); `query` is added to its URL. */
  connect(userId: string, appCode?: string, query?: string): Promise<TestClient>;
  close(): Promise<void>;
}

const tokens = testTokens();
/** The node id the stack's signalling reports with, unless told otherwise. */
export const STACK_NODE_ID = 'stack-node';

/** The id the stack's meetings record for its media server. */
export const TEST_MEDIA_SERVER = 'media-test';

export async function startStack(
  mediaServer: MediaServer,
  options: {
    internalToken?: string;
    liveRefreshMs?: number;
    nodeId?: string;
    /** Wraps the orchestrator the signalling uses (to count or fail its calls). */
    wrapMedia?: (media: MediaOrchestrator) => MediaOrchestrator;
    /** The media caps (default: the signalling's defaults). */
    caps?: MediaCaps;
    /** Serve plain RTP transports (`ROOMS_MEDIA_PLAIN_RTP`; default off). */
    plainRtp?: boolean;
  } = {},
): Promise<Stack> {
  const bus = new MemoryRealtimeBus();
  const publisher = new RealtimePublisher({ bus, logger: silentLogger });
  const hub = new WsHub(
    { maxBufferedBytes: 1024 * 1024, pingIntervalMs: 60_000 },
    {
      bus,
      authenticate: tokens.authenticate,
      canFollow: () => Promise.resolve(false),
      logger: silentLogger,
    },
  );
  const membership = new FakeMembership();
  const state = new MemoryRoomMediaState();
  const media = new HttpMediaOrchestrator({
    baseUrl: mediaServer.url,
    internalToken: options.internalToken ?? TEST_TOKEN,
    timeoutMs: 5_000,
    closeRetry: 0,
  });
  const signalling = new MeetingSignalling({
    hub,
    membership,
    media: singleMediaServer(TEST_MEDIA_SERVER, options.wrapMedia?.(media) ?? media),
    state,
    broadcaster: publisher,
    logger: silentLogger,
    nodeId: options.nodeId ?? STACK_NODE_ID,
    ...(options.liveRefreshMs === undefined ? {} : { liveRefreshMs: options.liveRefreshMs }),
    ...(options.caps ? { caps: options.caps } : {}),
    ...(options.plainRtp ? { plainRtp: true } : {}),
  });
  const server: Server = createServer();
  hub.attach(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  const clients: TestClient[] = [];
  return {
    membership,
    state,
    media,
    signalling,
    hub,
    connect: async (userId, appCode, query = '') => {
      const token = await tokens.sign(userId, appCode);
      const client = await TestClient.connect(
        `ws://127.0.0.1:${port}/ws?token=${encodeURIComponent(token)}${query}`,
      );
      clients.push(client);
      return client;
    },
    close: async () => {
      for (const c of clients) c.close();
      await hub.close();
      await signalling.close();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
      media.close();
      await bus.close();
    },
  };
}

/** The media server's name of a meeting of the app `default` (or of `appCode`). */
export const mediaRoom = (roomCode: string, appCode = 'default') =>
  mediaRoomOf({ appCode, roomId: roomCode });

/** How many transports the meeting's router has on the media server. */
export async function routerTransports(server: MediaServer, roomCode: string): Promise<number> {
  return (await server.registry.routerOfRoom(mediaRoom(roomCode)).router.dump()).transportIds
    .length;
}

/** A fresh 9-digit meeting code (distinct per call and process). */
let seq = 0;
export const meetingCode = () =>
  `${String(100 + (process.pid % 900))}-${String(++seq).padStart(3, '0')}-000`;
