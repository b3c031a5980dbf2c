// Proxy-token revocations across the daemons sharing one PostgreSQL: the node that revokes forgets the
// sessions itself, then NOTIFYs the others so they forget theirs (see proxy-session-cache). A lost
// notification connection suspends the cache until it is back — revocations sent meanwhile are missed,
// so every request reads the store until then, and the cache starts empty again.
import type { StoreNotifications } from './pg-notifications.js'
import type { ProxySessionCache } from './proxy-session-cache.js'

export const PROXY_REVOCATIONS_CHANNEL = 'hangar_proxy_revocations'

export type RevocationNotice = { tokenId: string } | { runId: string }

export function forgetRevoked(cache: ProxySessionCache, notice: RevocationNotice): void {
  if ('tokenId' in notice) cache.forgetToken(notice.tokenId)
  else cache.forgetRun(notice.runId)
}

function parseNotice(payload: string): RevocationNotice | undefined {
  try {
    const notice = JSON.parse(payload) as { tokenId?: unknown; runId?: unknown }
    if (typeof notice.tokenId === 'string') return { tokenId: notice.tokenId }
    if (typeof notice.runId === 'string') return { runId: notice.runId }
  } catch {
    // Not ours: ignored below.
  }
  return undefined
}

export async function publishRevocation(
  notifications: StoreNotifications | undefined,
  notice: RevocationNotice,
): Promise<void> {
  await notifications?.notify(PROXY_REVOCATIONS_CHANNEL, JSON.stringify(notice))
}

/** Forgets what other nodes revoke; returns the function that stops listening. */
export async function listenForRevocations(
  notifications: StoreNotifications,
  cache: ProxySessionCache,
  onError: (error: unknown) => void,
): Promise<() => Promise<void>> {
  return notifications.listen(PROXY_REVOCATIONS_CHANNEL, {
    onPayload(payload) {
      const notice = parseNotice(payload)
      // Unreadable: which sessions it meant is unknown, so none is trusted.
      if (notice) forgetRevoked(cache, notice)
      else cache.clear()
    },
    onGap: () => cache.resume(),
    onError(error) {
      cache.suspend()
      onError(error)
    },
  })
}
