/**
 * @echochat/client/media: a meeting's and a voice room's media with mediasoup-client (a
 * peer dependency, only needed here: the main entry never loads it). Both take the package's
 * RealtimeClient; docs/client.md ("Media") shows them in a page.
 */
export { MeetingMedia } from './meeting-media.js';
export type { MeetingMediaOptions, MeetingRouter, RemoteMedia } from './meeting-media.js';
export { VoiceMedia } from './voice-media.js';
export type { VoiceMediaOptions, VoiceMediaStatus, VoiceRemote } from './voice-media.js';
export type { MediaDevice, MediaFrame, MediaSocket } from './ports.js';
export { MICROPHONE_OPUS } from './transports.js';
