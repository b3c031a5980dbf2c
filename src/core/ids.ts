// Ids are minted in the app (not by the database) so both engines behave alike. They are ULIDs with a
// short type prefix (`run_01JD…`): sortable by creation time, readable in logs, safe in URLs.

const CROCKFORD = '0123456789ABCDEFGHJKMNPQRSTVWXYZ'

export type IdPrefix =
  | 'usr'
  | 'pat'
  | 'cred'
  | 'prof'
  | 'conv'
  | 'msg'
  | 'run'
  | 'act'
  | 'aud'
  | 'ws'
  | 'ses'
  | 'lnk'
  | 'preq'
  | 'prj'
  | 'atg'
  | 'trg'
  | 'tfr'
  | 'nch'
  | 'ndl'
  | 'rev'
  | 'rvc'

let lastTime = 0
/** encodeTime(lastTime): ids minted in the same millisecond share it. */
let lastTimeText = encodeTime(0)
let lastRandom: Uint8Array = new Uint8Array(10)

function encodeTime(time: number): string {
  let out = ''
  let value = time
  for (let i = 0; i < 10; i++) {
    out = CROCKFORD[value % 32] + out
    value = Math.floor(value / 32)
  }
  return out
}

function encodeRandom(bytes: Uint8Array): string {
  // 80 bits → 16 base32 characters, as two 40-bit halves (each fits a number exactly: no BigInt per id).
  return encodeForty(bytes, 0) + encodeForty(bytes, 5)
}

/** The 5 bytes from `start`, big-endian, as 8 base32 characters. */
function encodeForty(bytes: Uint8Array, start: number): string {
  let value = 0
  for (let i = start; i < start + 5; i++) value = value * 256 + (bytes[i] ?? 0)
  let out = ''
  for (let i = 0; i < 8; i++) {
    out = CROCKFORD[value % 32] + out
    value = Math.floor(value / 32)
  }
  return out
}

function incremented(bytes: Uint8Array): Uint8Array {
  const next = new Uint8Array(bytes)
  for (let i = next.length - 1; i >= 0; i--) {
    if (next[i] === 255) next[i] = 0
    else {
      next[i] = (next[i] ?? 0) + 1
      break
    }
  }
  return next
}

// Random bytes drawn 1000 at a time: one ULID's 10 a call cost more in the call than in the bytes.
let randomPool = new Uint8Array(0)
let randomPoolAt = 0

function randomTenBytes(): Uint8Array {
  if (randomPoolAt + 10 > randomPool.length) {
    randomPool = crypto.getRandomValues(new Uint8Array(1000))
    randomPoolAt = 0
  }
  return randomPool.slice(randomPoolAt, (randomPoolAt += 10))
}

/** A ULID; monotonic within one process (ids minted in the same millisecond still sort in order). */
export function ulid(now: number = Date.now()): string {
  if (now <= lastTime) {
    lastRandom = incremented(lastRandom)
    return lastTimeText + encodeRandom(lastRandom)
  }
  lastTime = now
  lastTimeText = encodeTime(now)
  lastRandom = randomTenBytes()
  return lastTimeText + encodeRandom(lastRandom)
}

export function newId(prefix: IdPrefix): string {
  return `${prefix}_${ulid()}`
}

export type Clock = () => Date
export const systemClock: Clock = () => new Date()
