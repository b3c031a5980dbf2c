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
