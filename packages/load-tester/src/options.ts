/**
 * `npm run load -- …`: the options of a load run, parsed and checked (a bad one is a usage
 * error naming it, exit code 2).
 */
import { parseArgs } from 'node:util';

export interface LoadOptions {
  /** The deployment's public base URL (`https://rooms.example.com`). */
  readonly url: string;
  readonly tokenSource: string;
  readonly appCode: string;
  readonly scenario: 'voice' | 'meeting';
  readonly rooms: number;
  /** Users who join each room besides its owner or host. */
  readonly listeners: number;
  readonly durationS: number;
  /** Per room and second: chat lines; seat cycles (voice) or hand raises (meeting); gifts. */
  readonly chatRate: number;
  readonly seatRate: number;
  readonly giftRate: number;
  /** The operator's token (gifts need wallets topped up and a gift in the catalog). */
  readonly adminToken: string | null;
  /** Joins in flight at once. */
  readonly joinConcurrency: number;
  /** Exit 1 when more of the commands failed than this share (0: any failure fails). */
  readonly maxErrorRate: number;
  /** Exit 1 when the listeners got a smaller share of the frames they were owed. */
  readonly minDelivery: number;
  /** Plain-RTP audio through the target's media server (on this machine). */
  readonly media: boolean;
  /** `--media`, voice: how long a seated speaker talks; meeting: the host talks throughout. */
  readonly talkMs: number;
  /** `--media`: exit 1 when the listeners got a smaller share of the RTP packets owed. */
  readonly minMediaDelivery: number;
}

export const USAGE = `usage: npm run load -- --url <base URL> [options]
  --scenario voice|meeting     what to load (default voice)
  --rooms N                    rooms or meetings (default 2)
  --listeners M                members joining each besides its owner (default 10)
  --duration S                 seconds of traffic after everyone joined (default 10)
  --token-source SRC           register[:prefix] (sign users up; default register:load)
                               or file:<path> (one access token per line)
  --app-code CODE              the users' app (default default)
  --chat-rate R                chat lines per room per second (default 1)
  --seat-rate R                voice: seat up/confirm/down cycles; meeting: hand raises
                               per room per second (default 0.5)
  --gift-rate R                voice gifts per room per second; needs --admin-token (default 0)
  --admin-token T              the deployment's ROOMS_ADMIN_TOKEN (or ROOMS_LOAD_ADMIN_TOKEN)
  --join-concurrency N         joins in flight at once (default 16)
  --max-error-rate X           exit 1 above this share of failed commands (default 0)
  --min-delivery X             exit 1 below this share of owed frames received (default 1)
  --media                      real audio as plain RTP: each seat cycle (voice) talks, each
                               host (meeting) talks throughout, every member listens; the
                               target's media server must run on this machine with
                               ROOMS_MEDIA_PLAIN_RTP=true
  --talk-ms MS                 voice --media: how long a seated speaker talks (default 2000)
  --min-media-delivery X       exit 1 below this share of owed RTP packets received
                               (default 0.99)`;

export class UsageError extends Error {
  override readonly name = 'UsageError';
}

export function parseLoadOptions(argv: readonly string[], env = process.env): LoadOptions {
  let values;
  try {
    ({ values } = parseArgs({
      args: [...argv],
      options: {
        url: { type: 'string' },
        scenario: { type: 'string', default: 'voice' },
        rooms: { type: 'string', default: '2' },
        listeners: { type: 'string', default: '10' },
        duration: { type: 'string', default: '10' },
        'token-source': { type: 'string', default: 'register:load' },
        'app-code': { type: 'string', default: 'default' },
        'chat-rate': { type: 'string', default: '1' },
        'seat-rate': { type: 'string', default: '0.5' },
        'gift-rate': { type: 'string', default: '0' },
        'admin-token': { type: 'string' },
        'join-concurrency': { type: 'string', default: '16' },
        'max-error-rate': { type: 'string', default: '0' },
        'min-delivery': { type: 'string', default: '1' },
        media: { type: 'boolean', default: false },
        'talk-ms': { type: 'string', default: '2000' },
        'min-media-delivery': { type: 'string', default: '0.99' },
      },
      strict: true,
    }));
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
  const url = values.url;
  if (!url || !/^https?:\/\/[^\s/]+/.test(url)) throw new UsageError('--url: an http(s) base URL');
  const scenario = values.scenario;
  if (scenario !== 'voice' && scenario !== 'meeting') {
    throw new UsageError('--scenario: voice or meeting');
  }
  const count = (name: string, raw: string, min: number, max: number) => {
    const n = Number(raw);
    if (!/^\d+$/.test(raw) || n < min || n > max) {
      throw new UsageError(`--${name}: an integer from ${min} to ${max}`);
    }
    return n;
  };
  const number = (name: string, raw: string, max: number) => {
    const n = Number(raw);
    if (!/^\d+(\.\d+)?$/.test(raw) || n > max) throw new UsageError(`--${name}: 0 to ${max}`);
    return n;
  };
  const adminToken = values['admin-token'] ?? env.ROOMS_LOAD_ADMIN_TOKEN ?? null;
  const giftRate = number('gift-rate', values['gift-rate'], 100);
  if (giftRate > 0 && scenario === 'voice' && !adminToken) {
    throw new UsageError('--gift-rate needs --admin-token (wallets and the gift catalog)');
  }
  return {
    url: url.replace(/\/$/, ''),
    tokenSource: values['token-source'],
    appCode: values['app-code'],
    scenario,
    rooms: count('rooms', values.rooms, 1, 10_000),
    listeners: count('listeners', values.listeners, 0, 100_000),
    durationS: number('duration', values.duration, 86_400),
    chatRate: number('chat-rate', values['chat-rate'], 100),
    seatRate: number('seat-rate', values['seat-rate'], 100),
    giftRate,
    adminToken,
    joinConcurrency: count('join-concurrency', values['join-concurrency'], 1, 1_000),
    maxErrorRate: number('max-error-rate', values['max-error-rate'], 1),
    minDelivery: number('min-delivery', values['min-delivery'], 1),
    media: values.media,
    talkMs: count('talk-ms', values['talk-ms'], 20, 3_600_000),
    minMediaDelivery: number('min-media-delivery', values['min-media-delivery'], 1),
  };
}
