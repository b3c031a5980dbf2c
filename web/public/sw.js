// Hangar's service worker: the app shell only, so the UI opens (and says the daemon is unreachable)
// without a network. API, proxy and sign-in requests are never cached: they pass straight through.
const CACHE = 'hangar-shell-v1'
const SHELL = ['/', '/manifest.webmanifest', '/icon.svg', '/icon-192.png']

self.addEventListener('install', (event) => {
  event.waitUntil(caches.open(CACHE).then((cache) => cache.addAll(SHELL)))
  self.skipWaiting()
})

self.addEventListener('activate', (event) => {
  event.waitUntil(
    caches
      .keys()
      .then((names) => Promise.all(names.filter((name) => name !== CACHE).map((name) => caches.delete(name))))
      .then(() => self.clients.claim()),
  )
})

const isShellRequest = (url) =>
  url.origin === self.location.origin && !/^\/(api|proxy|login)(\/|$)/.test(url.pathname)

self.addEventListener('fetch', (event) => {
  const request = event.request
  const url = new URL(request.url)
  if (request.method !== 'GET' || !isShellRequest(url)) return
  if (request.mode === 'navigate') {
    // Network first: a new build shows at once; the cached shell only when the daemon cannot answer.
    event.respondWith(
      fetch(request)
        .then((response) => {
          if (response.ok) void caches.open(CACHE).then((cache) => cache.put('/', response.clone()))
          return response
        })
        .catch(() => caches.match('/')),
    )
    return
  }
  if (url.pathname.startsWith('/assets/')) {
    // Hashed file names: a cached copy is always the right one.
    event.respondWith(
      caches.match(request).then(
        (cached) =>
          cached ??
          fetch(request).then((response) => {
            if (response.ok) void caches.open(CACHE).then((cache) => cache.put(request, response.clone()))
            return response
          }),
      ),
    )
  }
})

// Web Push (Settings → Notifications): the daemon's message is JSON { title, body, url, tag }. It is shown
// even with no tab open; a click focuses a Hangar tab on its link (the card), or opens one. The link is a
// path of this origin and never a credential: opening it needs a signed-in user like any page.
function readPushMessage(data) {
  if (!data) return {}
  try {
    return data.json()
  } catch {
    return { title: 'Hangar', body: data.text() }
  }
}

self.addEventListener('push', (event) => {
  const message = readPushMessage(event.data)
  event.waitUntil(
    self.registration.showNotification(message.title || 'Hangar', {
      body: message.body || '',
      tag: message.tag,
      icon: '/icon-192.png',
      data: { url: message.url || '/' },
    }),
  )
})

self.addEventListener('notificationclick', (event) => {
  event.notification.close()
  const target = new URL(event.notification.data?.url || '/', self.location.origin)
  // Only this origin's pages: a message cannot send the click elsewhere.
  const url = target.origin === self.location.origin ? target.href : self.location.origin + '/'
  event.waitUntil(
    self.clients.matchAll({ type: 'window', includeUncontrolled: true }).then((windows) => {
      const open = windows.find((client) => client.url.startsWith(self.location.origin))
      if (open)
        return open.navigate(url).then(
          (client) => (client ?? open).focus(),
          // A tab this worker does not control (say, after a hard reload) cannot be navigated from here:
          // the link opens in a new one rather than nowhere.
          () => self.clients.openWindow(url),
        )
      return self.clients.openWindow(url)
    }),
  )
})
