// Whether this daemon tells the others of the events it stores (the NOTIFY in each event statement, see
// cluster-live-source.ts): only while another daemon listens. PostgreSQL (up to 18) wakes every listening
// connection of the database for every notice, this daemon's own among them, which reads its notice only to
// drop it. Alone on its database, a daemon streaming twenty runs spent about a quarter of the database's
// CPU and a tenth of its own on notices that no one needed (bench-events, 20 runs).
//
// Who listens is learnt from messages on the events channel itself, and from the nodes' heartbeats:
// - hello: the sender listens now (at its start, and when its lost connection is back). Every other daemon
//   counts it as a peer, announces from then on, and answers here.
// - here: the sender announces from now on, and may not have until now: what it stored meanwhile reached
//   no one, so the hearer resyncs its subscribers (they replay from the store) and counts it as a peer.
// - bye: a clean stop.
// - quiet: the sender stopped announcing, as it believes itself alone. A daemon that hears it is alive and
//   listening, so it says hello again.
// - at each check (the heartbeat's period), the nodes that beat within their lease are peers too; peers
//   neither beating nor heard of for a lease are dropped.
// A notice is committed with its events, so once a daemon has heard `here`, it misses nothing more of that
// peer's runs.
import type { Logger } from '../core/logger.js'
import type { StoreNotifications } from '../store/pg-notifications.js'
import type { Store } from '../store/store.js'

export type PresenceWord = 'hello' | 'here' | 'bye' | 'quiet'

/** A presence message as the events channel carries it. */
export interface PresenceMessage {
  origin: string
  presence: PresenceWord
}

const WORDS: readonly string[] = ['hello', 'here', 'bye', 'quiet']

/** The presence message in a parsed payload, or undefined when it is none (an event notice, say). */
export function presenceOf(payload: Record<string, unknown>): PresenceMessage | undefined {
  const { origin, presence } = payload
  if (typeof origin !== 'string' || typeof presence !== 'string' || !WORDS.includes(presence))
    return undefined
  return { origin, presence: presence as PresenceWord }
}

/** How long a starting daemon waits for the answers of the peers it knows from their heartbeats. */
export const HELLO_ANSWER_WAIT_MS = 1000

export interface ClusterPresenceOptions {
  notifications: Pick<StoreNotifications, 'notify' | 'announceRunEvents' | 'runEventsSent'>
  store: Pick<Store, 'nodes'>
  /** The events channel (unscoped). */
  channel: string
  /** This process (its boot id, as in the nodes table). */
  origin: string
  /**
   * This node's id: a row of it with another boot id is this node's previous process, which died without a
   * clean stop (one node id runs one process), not a peer to wait for or announce to.
   */
  nodeId?: string
  /** A peer neither beating nor heard of for this long is gone (the nodes' lease). */
  leaseMs: number
  /** How often the heartbeats are read (the heartbeat's period). */
  checkMs: number
  /** What this daemon stored before a peer announced may have reached no one: its subscribers replay. */
  onMissed: () => void
  log: Logger
  clock?: () => number
}

export function createClusterPresence(options: ClusterPresenceOptions) {
  const { notifications, channel, origin, leaseMs, log } = options
  const now = options.clock ?? Date.now
  /** Peers, each until when it counts without news of it. */
  const peers = new Map<string, number>()
  /** Peers that said bye: their heartbeat rows may still look alive for a moment. */
  const gone = new Set<string>()
  /** Called with each peer that says here (a starting daemon waits for those it knows of). */
  const heardHere = new Set<(peer: string) => void>()
  let stopAnnouncing: (() => void) | undefined
  /** Settles once what was stored before announcing began has landed. */
  let switched: Promise<void> = Promise.resolve()
  let timer: NodeJS.Timeout | undefined
  let closed = false

  const say = (presence: PresenceWord) =>
    notifications
      .notify(channel, JSON.stringify({ origin, presence }))
      .catch((error: unknown) => log.warn('could not tell the other daemons', { presence, error }))

  /**
   * Announces from now on, then says here once what was stored unannounced has landed (`silently`: at
   * start, before this daemon stored anything, when saying here would only make its peers replay).
   */
  async function announce(silently = false): Promise<void> {
    if (closed) return
    if (!stopAnnouncing) {
      stopAnnouncing = notifications.announceRunEvents(channel, origin)
      switched = notifications.runEventsSent()
      log.debug('another daemon listens: announcing stored events', { peers: peers.size })
    }
    await switched
    // Stopped meanwhile: a here after its bye would keep it counted as a peer for a lease.
    if (!closed && !silently) await say('here')
  }

  function fallQuiet(): void {
    if (!stopAnnouncing || closed) return
    stopAnnouncing()
    stopAnnouncing = undefined
    log.debug('no other daemon listens: no longer announcing stored events')
    void say('quiet')
  }

  const count = (peer: string, until: number) => {
    if (peer !== origin && !gone.has(peer)) peers.set(peer, Math.max(until, peers.get(peer) ?? 0))
  }

  /** Reads the heartbeats: the peers that beat within their lease, and the ones whose news ran out. */
  async function check(starting = false): Promise<void> {
    const at = now()
    for (const node of await options.store.nodes.beatingSince(new Date(at - leaseMs).toISOString()))
      if (node.id !== options.nodeId) count(node.bootId, Date.parse(node.heartbeatAt) + leaseMs)
    for (const [peer, until] of peers) if (until < at) peers.delete(peer)
    if (peers.size > 0) {
      if (!stopAnnouncing) await announce(starting)
    } else fallQuiet()
  }

  return {
    /**
     * Reads the heartbeats (announcing at once if a peer beats), says hello, and waits a moment for the
     * answers of the peers it knows: a subscriber of this daemon then misses nothing of theirs from the start.
     */
    async start(): Promise<void> {
      await check(true).catch((error: unknown) => log.warn('could not read the nodes', { error }))
      const waiting = new Set(peers.keys())
      const answered = new Promise<void>((resolve) => {
        if (waiting.size === 0) return resolve()
        const onHere = (peer: string) => {
          waiting.delete(peer)
          if (waiting.size > 0) return
          heardHere.delete(onHere)
          resolve()
        }
        heardHere.add(onHere)
      })
      await say('hello')
      let timeout: NodeJS.Timeout | undefined
      await Promise.race([
        answered,
        new Promise((resolve) => (timeout = setTimeout(resolve, HELLO_ANSWER_WAIT_MS))),
      ])
      clearTimeout(timeout)
      heardHere.clear()
      timer = setInterval(() => {
        check().catch((error: unknown) => log.debug('could not read the nodes', { error }))
      }, options.checkMs)
      timer.unref()
    },

    hear(message: PresenceMessage): void {
      const peer = message.origin
      if (peer === origin || closed) return
      // Whatever said bye in its name, a process that speaks is alive.
      if (message.presence === 'hello' || message.presence === 'here') gone.delete(peer)
      switch (message.presence) {
        case 'hello':
          count(peer, now() + leaseMs)
          void announce()
          return
        case 'here':
          count(peer, now() + leaseMs)
          options.onMissed()
          for (const onHere of heardHere) onHere(peer)
          if (!stopAnnouncing) void announce()
          return
        case 'bye':
          gone.add(peer)
          peers.delete(peer)
          if (peers.size === 0) fallQuiet()
          return
        case 'quiet':
          // It believes itself alone, and this daemon listens.
          void say('hello')
      }
    },

    /** The lost connection is back: peers may have come meanwhile, and their hellos were lost to it. */
    reconnected(): void {
      void say('hello')
    },

    /** Whether the stored events are announced now (another daemon listens). */
    announcing: () => stopAnnouncing !== undefined,
    /** The peers known now. */
    peers: () => [...peers.keys()],

    async close(): Promise<void> {
      if (closed) return
      clearInterval(timer)
      closed = true
      stopAnnouncing?.()
      stopAnnouncing = undefined
      await say('bye')
    },
  }
}

export type ClusterPresence = ReturnType<typeof createClusterPresence>
