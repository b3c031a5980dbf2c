// What an SSH target's host says about sandboxing a run there, asked in one round trip just before the
// launch: whether bubblewrap is there and can create the namespaces, the host's $HOME and node, the real
// paths of the CLI (its install may live in the home the sandbox hides), the workspace's git dirs, and —
// when it can sandbox — a private directory for the run's sockets and the sandbox home with the CLI's
// sign-in files copied in. The script and the parsing of its answer are here; remote-sandbox.ts acts on it.

/** What the host answered (`key=value` lines). */
export interface HostProbe {
  home: string
  /** bubblewrap's path; absent when it is not installed there. */
  bwrap?: string
  /** e.g. "bubblewrap 0.8.0". */
  version?: string
  /** Why bubblewrap could not create a sandbox there (its last stderr line). */
  refused?: string
  /** The host's node (the forwarder runs on it). */
  node?: string
  /** The CLI's command as the launch wrapper resolves it (its real path), and real paths of what the CLI runs from. */
  command?: string
  reals: string[]
  /** A worktree's own git dir and its shared one. */
  gitDir?: string
  commonDir?: string
  /** The private directory (0700) holding the run's sockets on the host. */
  net?: string
  /** Files copied from the host user's home into the sandbox home (relative names). */
  copied: string[]
}

const HELPERS = String.raw`real() { readlink -f "$1" 2>/dev/null || printf '%s' "$1"; }
one() { printf '%s=%s\n' "$1" "$(printf '%s' "$2" | tr '\n' ' ')"; }
one home "$HOME"
`

/**
 * Whether the host can sandbox at all: bubblewrap (`HANGAR_BWRAP` in the host's environment names it, as it
 * does for the daemon), a trial sandbox with the namespaces a run gets, and node. Ends the script (exit 0)
 * at the first thing missing.
 */
const CAN_SANDBOX = String.raw`BW=$(printenv HANGAR_BWRAP) || BW=$(command -v bwrap 2>/dev/null) || BW=
if [ -z "$BW" ] || [ ! -x "$BW" ]; then exit 0; fi
one bwrap "$BW"
one version "$("$BW" --version 2>/dev/null | head -n 1)"
if ! said=$("$BW" --die-with-parent --unshare-pid --unshare-net --ro-bind / / --proc /proc -- /bin/true 2>&1); then
  one refused "$(printf '%s' "$said" | tail -n 1)"
  exit 0
fi
NODE=$(command -v node 2>/dev/null) || NODE=
if [ -z "$NODE" ]; then exit 0; fi
one node "$NODE"
`

/** `sh -c HOST_CHECK`: what `hangar agents` asks a target (nothing is made there). */
export const HOST_CHECK = `set -u\n${HELPERS}${CAN_SANDBOX}`

/**
 * `sh -c HOST_PROBE sh RUN WS WANTED NAME BOXHOME N PATH…(N) FILE…`: RUN the run's directory, WS the
 * workspace, WANTED/NAME the CLI as the launch wrapper resolves it, BOXHOME the sandbox home, then N paths
 * to resolve and the home's files to copy.
 */
export const HOST_PROBE = String.raw`set -u
RUN=$1 WS=$2 WANTED=$3 NAME=$4 BOXHOME=$5 N=$6
shift 6
${HELPERS}while [ "$N" -gt 0 ]; do
  if [ -e "$1" ]; then one real "$(real "$1")"; fi
  shift; N=$((N - 1))
done
if [ -x "$WANTED" ]; then CMD=$WANTED; else CMD=$(command -v "$NAME" 2>/dev/null) || CMD=; fi
# Its real path is what runs in the sandbox: a link to it (~/.local/bin/claude) may be in the hidden home.
if [ -n "$CMD" ]; then CMD=$(real "$CMD"); one command "$CMD"; one real "$CMD"; fi
if [ -f "$WS/.git" ]; then
  own=$(sed -n 's/^gitdir: *//p' "$WS/.git" | head -n 1)
  case $own in /*) ;; *) own=$WS/$own ;; esac
  one gitdir "$(real "$own")"
  if [ -f "$own/commondir" ]; then
    common=$(cat "$own/commondir")
    case $common in /*) ;; *) common=$own/$common ;; esac
    one commondir "$(real "$common")"
  fi
fi
${CAN_SANDBOX}one real "$(real "$NODE")"
mkdir -p "$RUN" "$BOXHOME"
chmod 700 "$RUN" "$BOXHOME"
# Recorded beside the run's directory (out of the agent's reach), so a cleanup after a crash removes it too.
NET=$(mktemp -d /tmp/hangar-net-XXXXXX) && printf '%s\n' "$NET" > "$RUN.net" && one net "$NET"
for file in "$@"; do
  if [ -f "$HOME/$file" ]; then
    mkdir -p "$BOXHOME/$(dirname "$file")"
    cp "$HOME/$file" "$BOXHOME/$file" && one copied "$file"
  fi
done
`

export function parseHostProbe(text: string): HostProbe {
  const probe: HostProbe = { home: '', reals: [], copied: [] }
  for (const line of text.split('\n')) {
    const cut = line.indexOf('=')
    if (cut <= 0) continue
    const key = line.slice(0, cut)
    const value = line.slice(cut + 1).trim()
    if (key === 'real') probe.reals.push(value)
    else if (key === 'copied') probe.copied.push(value)
    else if (value === '') continue
    else if (key === 'home') probe.home = value
    else if (key === 'bwrap') probe.bwrap = value
    else if (key === 'version') probe.version = value
    else if (key === 'refused') probe.refused = value
    else if (key === 'node') probe.node = value
    else if (key === 'command') probe.command = value
    else if (key === 'gitdir') probe.gitDir = value
    else if (key === 'commondir') probe.commonDir = value
    else if (key === 'net') probe.net = value
  }
  return probe
}

/** Why the host cannot sandbox runs (said with the fix), or undefined when it can. */
export function hostUnavailable(probe: HostProbe, host: string): string | undefined {
  if (probe.bwrap === undefined)
    return `${host}: bubblewrap is not installed there, so runs there are not sandboxed; install it on that host (Debian/Ubuntu: apt-get install bubblewrap) to confine its runs`
  if (probe.refused !== undefined)
    return `${host}: bubblewrap cannot create a sandbox there (${probe.refused}), so runs there are not sandboxed; enable unprivileged user namespaces on that host to confine its runs`
  if (probe.node === undefined)
    return `${host}: node is not installed there (the sandbox's forwarder to the model proxy runs on it), so runs there are not sandboxed; install node on that host to confine its runs`
  return undefined
}
