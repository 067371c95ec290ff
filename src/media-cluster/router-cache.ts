/**
 * Keeps the orchestrators' router caches true to the media servers: a router a server
 * reports closed (`router_closed`) or lost with its worker (`routers_lost`) is forgotten, and
 * so is every router of a server whose event stream dropped, since what it missed meanwhile
 * is unknown. Create and join answer the cached router without asking the server
 * (src/meeting/api/commands.ts), so a stale entry would hand out a router that is gone.
 */
import type { MediaEvent } from '../media-server/events.js';
import type { MediaServers } from './media-servers.js';

export interface RouterCacheFollower {
  /** A media event from `serverId`. */
  readonly onEvent: (event: MediaEvent, serverId: string) => void;
  /** `serverId`'s events stopped (a dropped stream): its cache is no longer known true. */
  readonly onGap: (serverId: string) => void;
}

export function followRouterCaches(media: MediaServers): RouterCacheFollower {
  return {
    onEvent: (event, serverId) => {
      if (event.type === 'router_closed') {
        media.of(serverId).forgetRouter(event.room_code, event.router_id);
      } else if (event.type === 'routers_lost') {
        const server = media.of(serverId);
        for (const lost of event.routers) server.forgetRouter(lost.room_code, lost.router_id);
      }
    },
    onGap: (serverId) => {
      media.of(serverId).forgetRouters();
    },
  };
}
