/**
 * The browser-facing security headers of every answer (@fastify/helmet): a
 * Content-Security-Policy that lets the web client (web/dist) run and nothing else, no
 * framing (X-Frame-Options DENY and `frame-ancestors 'none'`: the meeting page cannot be
 * overlaid by another site), `X-Content-Type-Options: nosniff`, `Referrer-Policy:
 * no-referrer` (a meeting URL names its room code) and helmet's other defaults. Swagger UI
 * (`/docs`) replaces the policy on its own routes with the one it needs (./openapi.ts).
 */
import helmet from '@fastify/helmet';
import type { FastifyInstance } from 'fastify';

/**
 * What the web client loads: its own scripts and styles (Vite writes no inline ones), the
 * API and `/ws` on its own origin ('self' covers ws:/wss: of the same host), media streams
 * (WebRTC through mediasoup-client is not a fetch: no directive governs it) and the `data:`
 * favicon. No `upgrade-insecure-requests`: a node reached over plain HTTP inside a network
 * would have its own scripts upgraded away.
 */
export const WEB_CLIENT_CSP: Readonly<Record<string, readonly string[]>> = {
  'default-src': ["'self'"],
  'base-uri': ["'self'"],
  'connect-src': ["'self'"],
  'font-src': ["'self'", 'data:'],
  'form-action': ["'self'"],
  'frame-ancestors': ["'none'"],
  'img-src': ["'self'", 'data:', 'blob:'],
  'media-src': ["'self'", 'blob:'],
  'object-src': ["'none'"],
  'script-src': ["'self'"],
  'script-src-attr': ["'none'"],
  'style-src': ["'self'"],
};

/** Registers the headers for every route, the 404s and the errors included. */
export function registerSecurityHeaders(app: FastifyInstance): void {
  void app.register(helmet, {
    global: true,
    contentSecurityPolicy: { useDefaults: false, directives: WEB_CLIENT_CSP },
    xFrameOptions: { action: 'deny' },
    // A node does not own its domain's other hosts: they are not told to use HTTPS.
    strictTransportSecurity: { maxAge: 31_536_000, includeSubDomains: false },
  });
}
