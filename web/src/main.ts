import { createApp, watch } from 'vue';
import App from './App.vue';
import { token, whenUnauthorized } from './api';
import { session, signOut } from './app-state';
import { knowName } from './user-names';
import { connectRealtime, realtime, wsUrl } from './ws';
import './style.css';

whenUnauthorized(() => signOut('登录已过期，请重新登录'));

// One socket per signed-in tab: notifications on every page, rooms on theirs.
watch(
  () => session.user,
  (user) => {
    const bearer = token();
    if (user) knowName(user);
    if (user && bearer)
      connectRealtime(
        () => wsUrl(token() ?? ''),
        () => signOut('登录已过期，请重新登录'),
      );
  },
  { immediate: true },
);

/** What browser tests read (WebRTC stats of the current room, socket status). */
(window as unknown as { rooms: unknown }).rooms = { realtime, room: null };

createApp(App).mount('#app');
