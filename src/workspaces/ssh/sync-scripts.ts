// The shell side of shipping a workspace to an SSH target and back. The same `pack` function runs on
// both ends — locally before a run, on the host after it — so "what changed" means one thing: commits
// since a base (a git bundle, only when there are new ones), plus an overlay tar of the files that differ
// from HEAD or are untracked (ignored files stay where they are), plus the list of files deleted since
// HEAD. A project that is not a git repository travels as one tar of its tree.
//
// Host layout under the target's `dir`: `cache.git` (a bare repository holding every object ever shipped,
// with `refs/hangar/<key>/base` marking what each workspace was last synced at — the base of the next
// incremental bundle), `workspaces/<key>` (a worktree of the cache, or a plain directory for copies),
// `runs/<run>` (launch files) and `tmp`. Nothing here adds or uses a git remote: bundles are files.
//
// `workspaces/<key>.unfinalized` holds the id of the run whose changes the host copy holds and that were
// not brought back yet: written by a ship, removed once that run's changes are back (RELEASE). A ship
// never overwrites a host copy under another run's mark — that copy may hold the only copy of an agent's
// work (its daemon died before the sync-back).

/**
 * pack MODE DIR OUT KIND [BASE…] — MODE is `full` (bundle + tars), `overlay` (tars only: a local backup)
 * or `lists` (file lists only). OUT holds `excludes.git` and `excludes.tar` (patterns to leave out) and
 * may hold `include` (NUL-separated files to add).
 */
const PACK = String.raw`
pack() {
  mode=$1 dir=$2 out=$3 kind=$4
  shift 4
  if [ "$kind" = copy ]; then
    if [ "$mode" != lists ]; then tar -cf "$out/tree.tar" -X "$out/excludes.tar" -C "$dir" .; fi
    return 0
  fi
  head=$(git -C "$dir" rev-parse --verify -q HEAD) || { echo "the workspace has no commit yet" >&2; return 3; }
  printf '%s\n' "$head" > "$out/head"
  if [ "$mode" = full ]; then
    not=""
    for base in "$@"; do not="$not ^$base"; done
    if [ "$(git -C "$dir" rev-list --count HEAD $not)" -gt 0 ]; then
      git -C "$dir" bundle create -q "$out/bundle" HEAD $not
    fi
  fi
  { git -C "$dir" diff --name-only --no-renames -z --diff-filter=d HEAD -- &&
    git -C "$dir" ls-files -z --others --exclude-standard --exclude-from="$out/excludes.git"; } > "$out/changed"
  # Files Hangar placed for the run (skills) are git-excluded locally, but must travel.
  if [ "$mode" != lists ] && [ -f "$out/include" ]; then cat "$out/include" >> "$out/changed"; fi
  git -C "$dir" diff --name-only --no-renames -z --diff-filter=D HEAD -- > "$out/deleted"
  if [ "$mode" != lists ]; then tar -cf "$out/overlay.tar" -C "$dir" --null -T "$out/changed"; fi
}
`

/** Resolves ROOT (a leading ~ is the remote home), makes the layout, sets ROOT to an absolute path. */
const ROOT = String.raw`
ROOT=$1
case $ROOT in "~") ROOT=$HOME ;; "~/"*) ROOT=$HOME/$(printf '%s' "$ROOT" | cut -c3-) ;; esac
mkdir -p "$ROOT/workspaces" "$ROOT/runs" "$ROOT/tmp"
ROOT=$(cd "$ROOT" && pwd -P)
`

/** Local: `sh -c PACK_LOCAL sh MODE DIR OUT KIND BASE…`. */
export const PACK_LOCAL = `set -eu\n${PACK}\npack "$@"\n`

/**
 * Remote: `ROOT [KEY]` — the bases it holds, one commit per line (the next bundle leaves them out); with
 * KEY, first a line `mark <run>` when that workspace's host copy holds a run's unfinalized changes.
 */
export const LIST_BASES = String.raw`set -eu
${ROOT}
if [ $# -ge 2 ] && [ -f "$ROOT/workspaces/$2.unfinalized" ]; then printf 'mark %s\n' "$(cat "$ROOT/workspaces/$2.unfinalized")"; fi
if [ -d "$ROOT/cache.git" ]; then git -C "$ROOT/cache.git" for-each-ref --format='%(objectname)' refs/hangar/; fi
`

/** The exit status of RECEIVE when the host copy holds another run's unfinalized changes. */
export const HELD_BY_ANOTHER_RUN = 5

/**
 * Remote: `ROOT KEY KIND BRANCH RUN SETTLED`, a tar of the pack on stdin; prints the absolute root and
 * $HOME. Refuses (exit 5, the holding run on stderr) when the host copy is marked by a run other than
 * SETTLED (one whose changes are known to be back); marks the copy as RUN's once it is in place.
 */
export const RECEIVE = String.raw`set -eu
${ROOT}
KEY=$2 KIND=$3 BRANCH=$4 RUN=$5 SETTLED=$6
MARK=$ROOT/workspaces/$KEY.unfinalized
if [ -f "$MARK" ]; then
  HELD=$(cat "$MARK")
  if [ "$HELD" != "$SETTLED" ]; then echo "held:$HELD" >&2; exit 5; fi
fi
T=$(mktemp -d "$ROOT/tmp/ship.XXXXXX")
trap 'rm -rf "$T"' EXIT
tar -xzf - -C "$T"
WS=$ROOT/workspaces/$KEY
if [ "$KIND" = copy ]; then
  rm -rf "$WS"
  mkdir -p "$WS"
  tar -xf "$T/tree.tar" -C "$WS"
else
  CACHE=$ROOT/cache.git
  [ -d "$CACHE" ] || git init -q --bare "$CACHE"
  HEAD=$(cat "$T/head")
  if [ -f "$T/bundle" ]; then git -C "$CACHE" fetch -q "$T/bundle"; fi
  git -C "$CACHE" update-ref "refs/hangar/$KEY/base" "$HEAD"
  if [ ! -e "$WS/.git" ]; then
    rm -rf "$WS"
    git -C "$CACHE" worktree prune
    git -C "$CACHE" worktree add -q --detach "$WS" "$HEAD"
  fi
  cd "$WS"
  git checkout -q -f -B "$BRANCH" "$HEAD"
  git clean -q -fd
  tar -xf "$T/overlay.tar" -C "$WS"
  tr '\0' '\n' < "$T/deleted" | while IFS= read -r file; do rm -f -- "$file"; done
fi
if [ -n "$RUN" ]; then printf '%s\n' "$RUN" > "$MARK.tmp" && mv "$MARK.tmp" "$MARK"; else rm -f "$MARK"; fi
printf '%s\n%s\n' "$ROOT" "$HOME"
`

/** Remote: `ROOT KEY RUN` — the host copy's changes of RUN are back: its mark goes (only RUN's own). */
export const RELEASE = String.raw`set -eu
MARK=$1/workspaces/$2.unfinalized
if [ -f "$MARK" ] && [ "$(cat "$MARK")" = "$3" ]; then rm -f "$MARK"; fi
`

/**
 * Remote: `ROOT KEY KIND BASE EXCLUDE…` — packs what the run changed since BASE (the shipped HEAD) and
 * writes the pack as a tar to stdout. The host's base moves to the new HEAD, so the next ship is a delta.
 */
export const SEND_BACK = String.raw`set -eu
${PACK}
ROOT=$1 KEY=$2 KIND=$3 BASE=$4
shift 4
WS=$ROOT/workspaces/$KEY
[ -d "$WS" ] || { echo "the run's workspace $WS is gone from the host" >&2; exit 4; }
T=$(mktemp -d "$ROOT/tmp/back.XXXXXX")
trap 'rm -rf "$T"' EXIT
: > "$T/excludes.git"
: > "$T/excludes.tar"
for file in "$@"; do printf '/%s\n' "$file" >> "$T/excludes.git"; printf './%s\n' "$file" >> "$T/excludes.tar"; done
if [ "$KIND" = copy ]; then pack full "$WS" "$T" copy; else
  pack full "$WS" "$T" git "$BASE"
  git -C "$ROOT/cache.git" update-ref "refs/hangar/$KEY/base" "$(cat "$T/head")"
fi
rm -f "$T/excludes.git" "$T/excludes.tar"
echo ok > "$T/complete"
tar -czf - -C "$T" .
`

/** Remote: `ROOT KEY` — forgets a workspace (its worktree, its base ref, its agents' sandbox homes). */
export const FORGET = String.raw`set -eu
ROOT=$1 KEY=$2
rm -rf "$ROOT/workspaces/$KEY" "$ROOT/workspaces/$KEY.unfinalized" "$ROOT/sandbox-homes/$KEY"
if [ -d "$ROOT/cache.git" ]; then
  git -C "$ROOT/cache.git" worktree prune
  git -C "$ROOT/cache.git" update-ref -d "refs/hangar/$KEY/base" 2>/dev/null || true
fi
`
